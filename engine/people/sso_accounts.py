"""Who a single sign-on is: the person whose address is the ID token's verified ``email``.

The address is compared as Herald stores addresses (engine/people/users.py: checked, the
domain in its normal form, lower-cased), and only when the provider says it verified it
(``email_verified`` true): a provider that lets anyone type any address must not sign them
in as its owner. An address with no account signs in only if an invitation is pending for
it: the account is made then (a random password nobody knows; a reset sets one) and the
invitations accepted. No account and no invitation: refused, and nothing is made.
HERALD_OIDC_ROLES_CLAIM names a claim whose values ``<workspace id>:<role>`` give the person
that role in that workspace at each sign-in (other values are ignored; a membership the
claim does not name is left as it is; the last Owner is never demoted).
"""

from __future__ import annotations

import re
import secrets
import uuid
from typing import Any

from engine import runtime
from engine.database.db import database
from engine.database.models import Workspace, utcnow
from engine.database.models.people import OidcIdentity, User
from engine.people import audit, factors, invitations, roles, users
from engine.people.errors import PeopleError
from engine.people.single_sign_on import Refused

VIA = "single sign-on"
_ROLE_VALUE = re.compile(r"([0-9a-fA-F-]{32,36}):(owner|admin|member)")


class NoAccount(PeopleError):
    """A verified address with no account and no invitation."""

    def __init__(self, email: str) -> None:
        super().__init__(f"No Herald account uses {email}, and no invitation is waiting for "
                         "it. Ask an Owner or Admin of your workspace to invite this address.",
                         status=403)
        self.email = email


def verified_email(claims: dict[str, Any]) -> str:
    if claims.get("email_verified") is not True:
        raise Refused("Your provider has not verified your email address, so it cannot "
                      "sign you in here. Verify the address with your provider first.")
    try:
        return users.normalize_email(str(claims.get("email") or ""))
    except PeopleError:
        raise Refused("Your provider gave no usable email address.") from None


def person_for(claims: dict[str, Any]) -> User:
    """The signed-in person, made and joined to their workspaces when invited."""
    email = verified_email(claims)
    issuer, subject = runtime.settings().oidc_issuer, str(claims["sub"])[:255]
    with database.atomic():
        user = users.find(email)
        if user is None:
            if not invitations.usable_for(email):
                raise NoAccount(email)
            name = str(claims.get("name") or "").strip()[:200] or email.split("@")[0]
            user = users.create(email, name, secrets.token_urlsafe(32))
        _link(user, issuer, subject, email)
    invitations.accept_verified(user, VIA)
    _apply_roles(user, claims)
    return user


def _link(user: User, issuer: str, subject: str, email: str) -> None:
    identity = OidcIdentity.get_or_none(OidcIdentity.issuer == issuer,
                                        OidcIdentity.subject == subject)
    if identity is not None and identity.user_id == user.id:
        OidcIdentity.update(last_used_at=utcnow(), email=email).where(
            OidcIdentity.id == identity.id).execute()
        return
    if identity is not None:  # the provider's account now proves another address
        identity.delete_instance()
    OidcIdentity.create(user=user, issuer=issuer, subject=subject, email=email,
                        last_used_at=utcnow())
    factors.record_everywhere(user, user, "single_sign_on.linked", issuer)


def _role_values(claims: dict[str, Any]) -> list[tuple[str, str]]:
    name = runtime.settings().oidc_roles_claim
    raw = claims.get(name) if name else None
    values = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    found = []
    for value in values[:200]:
        if isinstance(value, str) and (match := _ROLE_VALUE.fullmatch(value.strip())):
            found.append((match.group(1), match.group(2)))
    return found


def _apply_roles(user: User, claims: dict[str, Any]) -> None:
    for workspace_id, role in _role_values(claims):
        try:
            workspace = Workspace.get_or_none(Workspace.id == uuid.UUID(workspace_id))
        except ValueError:
            continue
        if workspace is None:
            continue
        existing = roles.membership(workspace, user)
        if existing is None:
            with database.atomic():
                roles.add(workspace, user, role)
                audit.record(workspace, user, "member.joined", user.email,
                             {"role": role, "via": VIA})
        elif existing.role != role:
            try:
                roles.change_role(existing, role, user)
            except PeopleError:
                continue  # the last Owner stays Owner
