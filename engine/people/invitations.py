"""Invitations: a one-time link (7 days) that makes someone a member with a role."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from engine.people import audit, roles, tokens, users
from engine.people.errors import PeopleError
from engine.people.models import Invitation, User
from engine.store.db import database
from engine.store.models import Workspace, utcnow

VALID_FOR = dt.timedelta(days=7)


@dataclass
class Issued:
    invitation: Invitation
    url: str


def invitation_url(public_url: str, token: str) -> str:
    return f"{public_url.rstrip('/')}/invitations/{token}"


def invite(workspace: Workspace, email: str, role: str, by: User | None, by_role: str | None,
           public_url: str) -> Issued:
    """Invite ``email`` with ``role``: an Admin may not invite an Owner. A user who already
    has an account is a member at once; the link then only asks for their password."""
    role = roles.check_role(role)
    email = users.normalize_email(email)
    if not roles.may_grant(by_role, role):
        raise PeopleError("Only an Owner can invite an Owner.", "role", status=403)
    existing = users.find(email)
    if existing is not None and roles.membership(workspace, existing) is not None:
        raise PeopleError(f"{email} is already a member of this workspace.", "email")
    token, digest = tokens.new_token()
    with database.atomic():
        invitation = Invitation.create(workspace=workspace, email=email, role=role,
                                       token_hash=digest, invited_by=by,
                                       expires_at=utcnow() + VALID_FOR)
        if existing is not None:
            roles.add(workspace, existing, role)
        audit.record(workspace, by, "member.invited", email, {"role": role})
    return Issued(invitation, invitation_url(public_url, token))


def pending(workspace: Workspace) -> list[Invitation]:
    return list(Invitation.select().where(
        Invitation.workspace == workspace, Invitation.accepted_at.is_null(),
        Invitation.expires_at > utcnow()).order_by(Invitation.created_at.desc()))


def open_invitation(token: str) -> Invitation:
    """The invitation behind a link, or a PeopleError saying why it no longer works."""
    invitation = Invitation.get_or_none(Invitation.token_hash == tokens.hash_token(token))
    if invitation is None:
        raise PeopleError("This invitation link is not valid. Ask for a new invitation.",
                          status=404)
    if invitation.accepted_at is not None:
        raise PeopleError("This invitation link has already been used. Sign in, or ask for "
                          "a new invitation.", status=410)
    if invitation.expires_at <= utcnow():
        raise PeopleError("This invitation link has expired. Ask for a new invitation.",
                          status=410)
    return invitation


def accept(token: str, name: str, password: str) -> User:
    """Use the link once: create the user (or check an existing user's password) and the
    membership. A second use, even racing the first, is refused."""
    invitation = open_invitation(token)
    with database.atomic():
        claimed = (Invitation.update(accepted_at=utcnow())
                   .where(Invitation.id == invitation.id, Invitation.accepted_at.is_null())
                   .execute())
        if not claimed:
            raise PeopleError("This invitation link has already been used.", status=410)
        user = users.find(invitation.email)
        if user is None:
            user = users.create(invitation.email, name, password)
        elif users.authenticate(invitation.email, password) is None:
            raise PeopleError("That is not the password of this account.", "password")
        roles.add(invitation.workspace, user, invitation.role)
        audit.record(invitation.workspace, user, "member.joined", user.email,
                     {"role": invitation.role})
    return user


def cancel(invitation: Invitation, by: User) -> None:
    with database.atomic():
        audit.record(invitation.workspace, by, "invitation.cancelled", invitation.email,
                     {"role": invitation.role})
        invitation.delete_instance()
