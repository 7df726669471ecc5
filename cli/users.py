"""`herald users invite|reset-password|reset-2fa|factors|remove-factor`: the operator's way
in for the web application."""

from __future__ import annotations

import argparse

from config.settings import Settings


def cmd_invite(args: argparse.Namespace, settings: Settings) -> None:
    from cli.common import CommandError, connect, emit, workspace
    from engine.catalog.keys import iso
    from engine.people import invitations
    from engine.people.errors import PeopleError

    if args.role not in ("owner", "admin", "member"):
        raise CommandError(f"--role: must be owner, admin or member, not {args.role!r}")
    connect(settings)
    found = workspace(args.workspace)
    try:
        issued = invitations.invite(found, args.email, args.role, None, None,
                                    settings.public_url)
    except PeopleError as err:
        raise CommandError(f"{args.email}: {err.message}") from None
    invitation = issued.invitation
    emit({"email": invitation.email, "workspaceId": str(found.id),
          "role": invitation.role, "url": issued.url, "expiresAt": iso(invitation.expires_at)})


def cmd_reset_password(args: argparse.Namespace, settings: Settings) -> None:
    from cli.common import CommandError, connect, emit
    from engine.catalog.keys import iso
    from engine.people import resets
    from engine.people.errors import PeopleError

    connect(settings)
    try:
        issued = resets.issue_for(args.email, settings.public_url, resets.BY_OPERATOR)
    except PeopleError as err:
        raise CommandError(err.message) from None
    emit({"email": issued.user.email, "url": issued.url, "expiresAt": iso(issued.expires_at)})


def cmd_reset_2fa(args: argparse.Namespace, settings: Settings) -> None:
    """Turn a person's two-factor sign-in off (a lost phone and lost recovery codes): their
    authenticator and recovery codes go, and every session of theirs ends."""
    from cli.common import CommandError, connect, emit
    from engine.people import sessions, two_factor, users

    connect(settings)
    user = users.find(args.email)
    if user is None:
        raise CommandError(f"no user with the email address {args.email}")
    was_on = two_factor.turn_off(user)
    sessions.end_all(user)
    emit({"email": user.email, "twoFactor": "off", "wasOn": was_on})


def _person(email: str):
    from cli.common import CommandError
    from engine.people import users

    user = users.find(email)
    if user is None:
        raise CommandError(f"no user with the email address {email}")
    return user


def cmd_factors(args: argparse.Namespace, settings: Settings) -> None:
    """A person's ways of signing in: password, authenticator app, passkeys, single sign-on."""
    from cli.common import connect, emit
    from engine.people import factors

    connect(settings)
    user = _person(args.email)
    emit({"email": user.email, "factors": factors.listing(user)})


def cmd_remove_factor(args: argparse.Namespace, settings: Settings) -> None:
    """Remove one factor (an id `factors` printed); every session of the person ends."""
    from cli.common import CommandError, connect, emit
    from engine.people import factors
    from engine.people.errors import PeopleError

    connect(settings)
    user = _person(args.email)
    try:
        removed = factors.remove_by_operator(user, args.factor)
    except PeopleError as err:
        raise CommandError(err.message) from None
    emit({"email": user.email, "removed": removed, "sessionsEnded": True})


def add_commands(sub: argparse._SubParsersAction) -> None:
    users = sub.add_parser("users", help="people of the web application").add_subparsers(
        dest="users", required=True)
    p = users.add_parser("invite", help="a one-time link to join a workspace (7 days)")
    p.add_argument("email")
    p.add_argument("--workspace", required=True)
    p.add_argument("--role", required=True, help="owner, admin or member")
    p.set_defaults(func=cmd_invite)
    p = users.add_parser("reset-password", help="a one-time link to set a new password")
    p.add_argument("email")
    p.set_defaults(func=cmd_reset_password)
    p = users.add_parser("reset-2fa", help="turn a person's two-factor sign-in off (prints "
                                           "JSON)")
    p.add_argument("email")
    p.set_defaults(func=cmd_reset_2fa)
    p = users.add_parser("factors", help="a person's ways of signing in (prints JSON)")
    p.add_argument("email")
    p.set_defaults(func=cmd_factors)
    p = users.add_parser("remove-factor", help="remove one of a person's factors and end "
                                               "their sessions (prints JSON)")
    p.add_argument("email")
    p.add_argument("factor", help="an id `herald users factors` printed: totp, passkey:N, "
                                  "oidc:N")
    p.set_defaults(func=cmd_remove_factor)
