"""Two-factor sign-in with an authenticator app (TOTP, RFC 6238) and one-time recovery codes.

The secret is kept encrypted at rest (engine/database/secrets.py), a code is accepted one time
step either side of now (clocks drift), and never twice: the step used last is kept and a
code of that step or an earlier one is refused. Recovery codes have 80 random bits each, so
a SHA-256 of the code is enough to keep them (no slow hash is needed against guessing), and
each is claimed by one UPDATE, so two requests racing with the same code cannot both pass.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time

import pyotp
from redis.exceptions import RedisError

from engine import runtime
from engine.database import generations
from engine.database.db import database
from engine.database.models import Workspace, utcnow
from engine.database.models.people import RecoveryCode, TwoFactor, TwoFactorPolicy, User
from engine.people import audit, passwords
from engine.people.errors import PeopleError

ISSUER = "Herald"
RECOVERY_CODES = 10
_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no 0/o, 1/l: read aloud and typed by hand
_SIX_DIGITS = re.compile(r"\d{6}")


def _totp(secret: str) -> pyotp.TOTP:
    return pyotp.TOTP(secret, issuer=ISSUER)


def enabled(user: User) -> bool:
    return TwoFactor.select().where(TwoFactor.user == user,
                                    TwoFactor.enabled_at.is_null(False)).exists()


def begin(user: User) -> str:
    """A new secret waiting to be confirmed by a code (``confirm``); an earlier unconfirmed
    one is replaced. Refused while two-factor sign-in is on."""
    if enabled(user):
        raise PeopleError("Two-factor authentication is already on.")
    secret = pyotp.random_base32()
    with database.atomic():
        TwoFactor.delete().where(TwoFactor.user == user).execute()
        TwoFactor.create(user=user, secret=secret)
    return secret


def pending_secret(user: User) -> str | None:
    """The secret set up but not yet confirmed, for the page that shows it."""
    row = TwoFactor.get_or_none(TwoFactor.user == user, TwoFactor.enabled_at.is_null())
    return row.secret if row else None


def provisioning_uri(user: User, secret: str) -> str:
    return _totp(secret).provisioning_uri(name=user.email, issuer_name=ISSUER)


def qr_svg(uri: str) -> str:
    """The URI as a QR code, inline SVG drawn here: no image from another origin."""
    import segno  # the QR code of an enrolment: not needed until someone enrols

    return segno.make(uri, error="m").svg_inline(scale=4, border=4,
                                                 title="QR code of the secret key")


def _step_matching(secret: str, code: str, after: int | None) -> int | None:
    """The time step (now, or one either side) whose code is ``code``, if later than
    ``after``; None when none is."""
    if not _SIX_DIGITS.fullmatch(code):
        return None
    totp = _totp(secret)
    now = int(time.time()) // totp.interval
    for step in (now, now - 1, now + 1):
        if (after is None or step > after) and secrets.compare_digest(
                totp.generate_otp(step), code):
            return step
    return None


def confirm(user: User, code: str) -> list[str]:
    """Turn two-factor sign-in on with a first code from the app; returns the recovery
    codes, shown once (only their hashes are kept)."""
    row = TwoFactor.get_or_none(TwoFactor.user == user, TwoFactor.enabled_at.is_null())
    if row is None:
        raise PeopleError("Start again: press Set up two-factor authentication.")
    step = _step_matching(row.secret, _clean(code), None)
    if step is None:
        raise PeopleError("That code is not right. Enter the 6 digits your app shows now.",
                          "code")
    codes = [_new_recovery_code() for _ in range(RECOVERY_CODES)]
    with database.atomic():
        TwoFactor.update(enabled_at=utcnow(), last_step=step).where(
            TwoFactor.user == user).execute()
        RecoveryCode.delete().where(RecoveryCode.user == user).execute()
        RecoveryCode.insert_many([{"user": user, "code_hash": _hash(c)} for c in codes]).execute()
    return codes


def verify(user: User, code: str) -> str | None:
    """Check a code at sign-in: "app" or "recovery" for the kind that matched (a recovery
    code is used up), None when it is not right or was used already."""
    text = _clean(code)
    row = TwoFactor.get_or_none(TwoFactor.user == user, TwoFactor.enabled_at.is_null(False))
    if row is None:
        return None
    if _SIX_DIGITS.fullmatch(text):
        step = _step_matching(row.secret, text, row.last_step)
        if step is None:
            return None
        # The step is claimed in the UPDATE's condition: a code replayed in a race fails.
        claimed = TwoFactor.update(last_step=step).where(
            TwoFactor.user == user,
            TwoFactor.last_step.is_null() | (TwoFactor.last_step < step)).execute()
        return "app" if claimed else None
    claimed = RecoveryCode.update(used_at=utcnow()).where(
        RecoveryCode.user == user, RecoveryCode.code_hash == _hash(text),
        RecoveryCode.used_at.is_null()).execute()
    return "recovery" if claimed else None


def new_recovery_codes(user: User) -> list[str]:
    """A new set of recovery codes for a user whose two-factor sign-in is on (the old ones
    stop working at once); shown once, only their hashes kept."""
    if not enabled(user):
        raise PeopleError("Two-factor authentication is off: there are no recovery codes.")
    codes = [_new_recovery_code() for _ in range(RECOVERY_CODES)]
    with database.atomic():
        RecoveryCode.delete().where(RecoveryCode.user == user).execute()
        RecoveryCode.insert_many([{"user": user, "code_hash": _hash(c)} for c in codes]).execute()
    return codes


def turn_off_by_owner(user: User, password: str, code: str) -> None:
    """The person turns their own two-factor sign-in off, proving it twice: their password
    and a code (from the app, or a recovery code). Raises PeopleError naming the field."""
    if not passwords.verify(user.password_hash, password or ""):
        raise PeopleError("That password is not right.", "password")
    if verify(user, code or "") is None:
        raise PeopleError("That code is not right, or was used already. Enter the 6 digits "
                          "your app shows now, or a recovery code.", "code")
    turn_off(user)


def recovery_codes_left(user: User) -> int:
    return RecoveryCode.select().where(RecoveryCode.user == user,
                                       RecoveryCode.used_at.is_null()).count()


def turn_off(user: User) -> bool:
    """Remove the authenticator and the recovery codes (the operator's `herald users
    reset-2fa`); True when two-factor sign-in was on."""
    with database.atomic():
        was_on = enabled(user)
        TwoFactor.delete().where(TwoFactor.user == user).execute()
        RecoveryCode.delete().where(RecoveryCode.user == user).execute()
    return was_on


def _clean(code: str) -> str:
    return re.sub(r"[\s-]", "", (code or "")[:100]).lower()


def _hash(code: str) -> str:
    return hashlib.sha256(_clean(code).encode("ascii", "replace")).hexdigest()


def _new_recovery_code() -> str:
    raw = "".join(secrets.choice(_ALPHABET) for _ in range(16))  # 16 x 5 bits = 80 bits
    return "-".join(raw[i:i + 4] for i in range(0, 16, 4))


# --- a workspace's requirement ---------------------------------------------------------

REQUIRED_SCOPE = "herald:gen:two-factor"
# The policy table as this process last read it, with the generation Redis had just before.
_required: tuple[object, frozenset[str]] = (None, frozenset())
_STALE = object()  # no generation read can equal it


def required_in(workspace_id: object) -> bool:
    """Does the workspace require two-factor sign-in? Every workspace page asks, so the
    (small) table is kept per process while the policy's generation in Redis stays the one
    read before it was loaded: an Owner's change counts at every process's next page. With
    Redis unreadable the table is read each time."""
    global _required
    try:
        generation = runtime.redis().get(REQUIRED_SCOPE) or b"0"
    except (RedisError, OSError, RuntimeError):
        generation = _STALE
    if generation is _STALE or generation != _required[0]:
        rows = TwoFactorPolicy.select(TwoFactorPolicy.workspace).tuples()
        _required = (generation, frozenset(str(w) for (w,) in rows))
    return str(workspace_id) in _required[1]


def forget_required() -> None:
    """Drop this process's copy (after a change here, and between tests)."""
    global _required
    _required = (_STALE, frozenset())


def require(workspace: Workspace, on: bool, by: User) -> None:
    """An Owner's choice (checked by the view): every member signs in with a second step."""
    with database.atomic():
        if on:
            TwoFactorPolicy.insert(workspace=workspace, required_by=by).on_conflict_ignore() \
                .execute()
        else:
            TwoFactorPolicy.delete().where(TwoFactorPolicy.workspace == workspace).execute()
        audit.record(workspace, by, "two_factor.required" if on else "two_factor.optional",
                     workspace.name, {})
        generations.changed(REQUIRED_SCOPE)
    forget_required()
