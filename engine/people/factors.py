"""A person's ways of signing in, together: the password, the authenticator app, each
passkey and each single sign-on identity. `herald users factors` lists them and `herald
users remove-factor` removes one; the Account page removes passkeys.

A second factor is the authenticator app or a passkey. Where a workspace of the person
requires two-factor sign-in, the last of them cannot be removed (the person could no
longer meet the requirement); `herald users reset-2fa` remains the operator's way round.
"""

from __future__ import annotations

from typing import Any

from engine.database.db import database
from engine.database.models.people import (
    Membership,
    OidcIdentity,
    Passkey,
    TwoFactor,
    TwoFactorPolicy,
    User,
)
from engine.people import audit
from engine.people.errors import PeopleError


def listing(user: User) -> list[dict[str, Any]]:
    """Every factor of ``user``: ``{"id", "kind", "name", "createdAt", "lastUsedAt"}``; the
    id is what `remove-factor` takes (``passkey:3``, ``totp``, ``oidc:7``)."""
    rows: list[dict[str, Any]] = [{"id": "password", "kind": "password", "name": "Password",
                                   "createdAt": _iso(user.password_changed_at),
                                   "lastUsedAt": None}]
    app = TwoFactor.get_or_none(TwoFactor.user == user, TwoFactor.enabled_at.is_null(False))
    if app is not None:
        rows.append({"id": "totp", "kind": "totp", "name": "Authenticator app",
                     "createdAt": _iso(app.enabled_at), "lastUsedAt": None})
    for passkey in Passkey.select().where(Passkey.user == user).order_by(Passkey.id):
        rows.append({"id": f"passkey:{passkey.id}", "kind": "passkey", "name": passkey.name,
                     "createdAt": _iso(passkey.created_at),
                     "lastUsedAt": _iso(passkey.last_used_at)})
    for identity in OidcIdentity.select().where(OidcIdentity.user == user) \
            .order_by(OidcIdentity.id):
        rows.append({"id": f"oidc:{identity.id}", "kind": "single-sign-on",
                     "name": f"{identity.issuer} ({identity.email})",
                     "createdAt": _iso(identity.created_at),
                     "lastUsedAt": _iso(identity.last_used_at)})
    return rows


def _iso(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def second_factors(user: User) -> int:
    """How many second factors ``user`` has: the app (one) and each passkey."""
    app = TwoFactor.select().where(TwoFactor.user == user,
                                   TwoFactor.enabled_at.is_null(False)).count()
    return app + Passkey.select().where(Passkey.user == user).count()


def required_by(user: User) -> list[str]:
    """The names of the person's workspaces that require two-factor sign-in."""
    rows = (TwoFactorPolicy.select(TwoFactorPolicy.workspace)
            .join(Membership, on=(Membership.workspace == TwoFactorPolicy.workspace))
            .where(Membership.user == user))
    return sorted(row.workspace.name for row in rows)


def check_removable(user: User, passkey: Passkey | None = None, app: bool = False) -> None:
    """Refuse removing the person's last second factor where two-factor is required."""
    if not (passkey or app) or second_factors(user) > 1:
        return
    workspaces = required_by(user)
    if workspaces:
        raise PeopleError(
            f"{', '.join(workspaces)} requires two-factor authentication: add another passkey "
            "or set up an authenticator app before removing your last one.", status=409)


def record_everywhere(user: User, by: User | None, action: str, subject: str,
                      details: dict[str, Any] | None = None) -> None:
    """A change to a person's sign-in reaches the audit log of each workspace of theirs:
    its Owners and Admins answer for who can get in."""
    for membership in Membership.select().where(Membership.user == user):
        audit.record(membership.workspace_id, by, action,
                     subject if by == user else f"{user.email}: {subject}", details)


def remove_by_operator(user: User, factor_id: str) -> dict[str, Any]:
    """`herald users remove-factor`: remove one factor named as ``listing`` names it, and end
    every session of the person (a factor is removed because it may be in other hands).
    The operator is not refused the last second factor (a lost key is why they are asked;
    the person sets up another at their next sign-in); the password cannot be removed."""
    from engine.people import sessions, two_factor

    row = next((f for f in listing(user) if f["id"] == factor_id), None)
    if row is None:
        raise PeopleError(f"{user.email} has no factor {factor_id!r}: see `herald users "
                          "factors`", status=404)
    kind = row["kind"]
    if kind == "password":
        raise PeopleError("the password cannot be removed: `herald users reset-password` "
                          "replaces it", status=409)
    with database.atomic():
        if kind == "totp":
            two_factor.turn_off(user)
            action = "two_factor.removed"
        elif kind == "passkey":
            Passkey.delete().where(Passkey.id == int(factor_id.split(":")[1])).execute()
            action = "passkey.removed"
        else:
            OidcIdentity.delete().where(OidcIdentity.id == int(factor_id.split(":")[1])) \
                .execute()
            action = "single_sign_on.unlinked"
        record_everywhere(user, None, action, row["name"])
        sessions.end_all(user)
    return row
