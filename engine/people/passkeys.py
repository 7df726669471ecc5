"""Passkeys (WebAuthn, with the webauthn library): registered from the Account page, used to
sign in from the sign-in page without typing an address.

Each is a discoverable credential made and used with user verification (the device's PIN
or biometric): something the person has and something they know or are, so a passkey
counts as two factors and meets an Owner's "require two-factor". A ceremony's challenge is
kept in Redis under a random id for five minutes and taken once (GETDEL), so neither a
replayed answer nor a replayed cookie can use it twice. The relying party is the public
URL: its host is the RP ID and its origin the only origin accepted. The authenticator's
counter must rise at every use, when it keeps one: a credential whose counter goes back was
cloned, and is refused.
"""

from __future__ import annotations

import json
import secrets
import uuid
from typing import Any
from urllib.parse import urlsplit

# webauthn (with cbor2, pyasn1 and pyOpenSSL: about 16 MiB) is imported by the four
# ceremonies below, at their first use: a process that serves no passkey never pays it.
from engine import runtime
from engine.database.db import database
from engine.database.models import utcnow
from engine.database.models.people import Passkey, User
from engine.people import factors
from engine.people.errors import PeopleError

CHALLENGE_SECONDS = 300
MAX_NAME = 100
MAX_CREDENTIAL = 20_000  # bytes of a browser's JSON answer (a registration is ~1 KB)
RP_NAME = "Herald"


def relying_party() -> tuple[str, str]:
    """(RP ID, origin) from HERALD_PUBLIC_URL."""
    parts = urlsplit(runtime.settings().public_url)
    return parts.hostname or "localhost", f"{parts.scheme}://{parts.netloc}"


def _keep_challenge(kind: str, challenge: bytes) -> str:
    ceremony = secrets.token_urlsafe(16)
    runtime.redis().set(f"herald:web:webauthn:{kind}:{ceremony}", challenge,
                        ex=CHALLENGE_SECONDS)
    return ceremony


def _take_challenge(kind: str, ceremony: str | None) -> bytes:
    if not ceremony or len(ceremony) > 64:
        raise PeopleError("Start again: the passkey request has expired.")
    challenge = runtime.redis().getdel(f"herald:web:webauthn:{kind}:{ceremony}")
    if not challenge:
        raise PeopleError("Start again: the passkey request has expired.")
    return bytes(challenge)


def _credential(raw: Any) -> dict[str, Any]:
    text = raw if isinstance(raw, str) else json.dumps(raw)
    if len(text) > MAX_CREDENTIAL:
        raise PeopleError("The passkey's answer is too large.")
    try:
        value = json.loads(text)
    except ValueError:
        raise PeopleError("The passkey's answer could not be read.") from None
    if not isinstance(value, dict):
        raise PeopleError("The passkey's answer could not be read.")
    return value


def check_name(name: str) -> str:
    text = " ".join((name or "").split())
    if not text:
        raise PeopleError("Name the passkey, so you can tell it from others later.", "name")
    if len(text) > MAX_NAME:
        raise PeopleError(f"Use at most {MAX_NAME} characters.", "name")
    return text


def registration_options(user: User) -> tuple[str, str]:
    """(ceremony id, the options as JSON for navigator.credentials.create)."""
    import webauthn
    from webauthn.helpers import base64url_to_bytes
    from webauthn.helpers.structs import (
        AuthenticatorSelectionCriteria,
        PublicKeyCredentialDescriptor,
        ResidentKeyRequirement,
        UserVerificationRequirement,
    )

    rp_id, _ = relying_party()
    options = webauthn.generate_registration_options(
        rp_id=rp_id, rp_name=RP_NAME, user_id=user.id.bytes, user_name=user.email,
        user_display_name=user.name,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            user_verification=UserVerificationRequirement.REQUIRED),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(p.credential_id))
                             for p in Passkey.select().where(Passkey.user == user)])
    return _keep_challenge("register", options.challenge), webauthn.options_to_json(options)


def register(user: User, ceremony: str | None, name: str, credential: Any) -> Passkey:
    """Check the browser's answer to ``registration_options`` and keep the passkey."""
    import webauthn
    from webauthn.helpers import bytes_to_base64url
    from webauthn.helpers.exceptions import WebAuthnException

    name = check_name(name)
    challenge = _take_challenge("register", ceremony)
    rp_id, origin = relying_party()
    try:
        verified = webauthn.verify_registration_response(
            credential=_credential(credential), expected_challenge=challenge,
            expected_rp_id=rp_id, expected_origin=origin, require_user_verification=True)
    except (WebAuthnException, ValueError, KeyError, TypeError) as err:
        raise PeopleError(f"The passkey was not added: {err}") from None
    credential_id = bytes_to_base64url(verified.credential_id)
    with database.atomic():
        if Passkey.select().where(Passkey.credential_id == credential_id).exists():
            raise PeopleError("This passkey is registered already.")
        passkey = Passkey.create(user=user, name=name, credential_id=credential_id,
                                 public_key=verified.credential_public_key,
                                 sign_count=verified.sign_count)
        factors.record_everywhere(user, user, "passkey.added", name)
    return passkey


def authentication_options() -> tuple[str, str]:
    """(ceremony id, options for navigator.credentials.get): no allowed list, so the
    browser offers whichever passkey of this site the person picks (discoverable)."""
    import webauthn
    from webauthn.helpers.structs import UserVerificationRequirement

    rp_id, _ = relying_party()
    options = webauthn.generate_authentication_options(
        rp_id=rp_id, user_verification=UserVerificationRequirement.REQUIRED)
    return _keep_challenge("sign-in", options.challenge), webauthn.options_to_json(options)


def authenticate(ceremony: str | None, credential: Any) -> User:
    """The person whose passkey answered the challenge; PeopleError when it did not (an
    unknown passkey, another origin, a counter that did not rise, no user verification)."""
    import webauthn
    from webauthn.helpers import base64url_to_bytes
    from webauthn.helpers.exceptions import WebAuthnException

    challenge = _take_challenge("sign-in", ceremony)
    answer = _credential(credential)
    raw_id = answer.get("rawId") or answer.get("id")
    passkey = (Passkey.select(Passkey, User).join(User)
               .where(Passkey.credential_id == str(raw_id)[:1400]).first()
               if isinstance(raw_id, str) else None)
    if passkey is None:
        raise PeopleError("This passkey is not registered with Herald: sign in with your "
                          "password and add it on your Account page.")
    handle = (answer.get("response") or {}).get("userHandle")
    rp_id, origin = relying_party()
    try:
        if handle and uuid.UUID(bytes=base64url_to_bytes(handle)) != passkey.user.id:
            raise PeopleError("This passkey belongs to another account.")
        verified = webauthn.verify_authentication_response(
            credential=answer, expected_challenge=challenge, expected_rp_id=rp_id,
            expected_origin=origin, credential_public_key=bytes(passkey.public_key),
            credential_current_sign_count=passkey.sign_count, require_user_verification=True)
    except (WebAuthnException, ValueError, KeyError, TypeError) as err:
        raise PeopleError(f"The passkey was refused: {err}") from None
    # The counter is claimed in the UPDATE's condition: two uses racing cannot both pass.
    claimed = Passkey.update(sign_count=verified.new_sign_count, last_used_at=utcnow()).where(
        Passkey.id == passkey.id,
        (Passkey.sign_count < verified.new_sign_count) | (Passkey.sign_count == 0)).execute()
    if not claimed:
        raise PeopleError("The passkey was refused: its counter did not rise.")
    return passkey.user


def of(user: User) -> list[Passkey]:
    return list(Passkey.select().where(Passkey.user == user).order_by(Passkey.created_at))


def remove(user: User, passkey_id: int, by: User | None) -> Passkey:
    """Remove one of ``user``'s passkeys; refused when it is their last second factor and a
    workspace of theirs requires two-factor sign-in. ``by`` None: the operator."""
    with database.atomic():
        passkey = Passkey.get_or_none(Passkey.id == passkey_id, Passkey.user == user)
        if passkey is None:
            raise PeopleError("That passkey has been removed already.", status=404)
        factors.check_removable(user, passkey=passkey)
        passkey.delete_instance()
        factors.record_everywhere(user, by, "passkey.removed", passkey.name)
    return passkey
