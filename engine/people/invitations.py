"""Invitations: a one-time link (7 days) that makes someone a member with a role.

A membership is made only through its own link, opened by the person signed in as the
invited address (docs/web.md, "Invitations"): a new address sets a name and a password on
the link's page (the link came by mail to that address); an existing account signs in
first, through the sign-in and its limits, and then accepts. Inviting changes nothing for
an existing account until then, so the inviter learns nothing of who has one. An
invitation ends with its inviter's removal or demotion below the role it gives
(engine/people/roles.py)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from engine.database.db import database
from engine.database.models import Workspace, utcnow
from engine.database.models.people import Invitation, User
from engine.people import audit, roles, tokens, users
from engine.people.errors import PeopleError

VALID_FOR = dt.timedelta(days=7)


@dataclass
class Issued:
    invitation: Invitation
    url: str


def invitation_url(public_url: str, token: str) -> str:
    return f"{public_url.rstrip('/')}/invitations/{token}"


def invite(workspace: Workspace, email: str, role: str, by: User | None, by_role: str | None,
           public_url: str) -> Issued:
    """Invite ``email`` with ``role``: an Admin may not invite an Owner. Nothing else
    happens until the invited person opens the link."""
    role = roles.check_role(role)
    email = users.normalize_email(email)
    if not roles.may_grant(by_role, role):
        raise PeopleError("Only an Owner can invite an Owner.", "role", status=403)
    existing = users.find(email)
    if existing is not None and roles.membership(workspace, existing) is not None:
        # The members are listed on the same page: this tells the inviter nothing new.
        raise PeopleError(f"{email} is already a member of this workspace.", "email")
    token, digest = tokens.new_token()
    with database.atomic():
        invitation = Invitation.create(workspace=workspace, email=email, role=role,
                                       token_hash=digest, invited_by=by,
                                       expires_at=utcnow() + VALID_FOR)
        audit.record(workspace, by, "member.invited", email, {"role": role})
    return Issued(invitation, invitation_url(public_url, token))


def pending(workspace: Workspace) -> list[Invitation]:
    return list(Invitation.select().where(
        Invitation.workspace == workspace, Invitation.accepted_at.is_null(),
        Invitation.expires_at > utcnow()).order_by(Invitation.created_at.desc()))


def find(workspace: Workspace, invitation_id: Any) -> Invitation | None:
    """An invitation of the workspace (another workspace's is as absent as an unknown one)."""
    return Invitation.get_or_none(Invitation.id == invitation_id,
                                  Invitation.workspace == workspace)


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
    inviter = invitation.invited_by_id
    if inviter is not None and not _inviter_may_still_grant(invitation):
        raise PeopleError("This invitation has ended: the person who sent it can no longer "
                          "invite to this workspace. Ask for a new invitation.", status=410)
    return invitation


def _inviter_may_still_grant(invitation: Invitation) -> bool:
    """The inviter is still a member with a role that may give the invitation's."""
    found = roles.membership(invitation.workspace, invitation.invited_by)
    return found is not None and found.role != "member" and roles.may_grant(
        found.role, invitation.role)


def _claim(invitation: Invitation) -> None:
    claimed = (Invitation.update(accepted_at=utcnow())
               .where(Invitation.id == invitation.id, Invitation.accepted_at.is_null())
               .execute())
    if not claimed:
        raise PeopleError("This invitation link has already been used.", status=410)


def accept_new(token: str, name: str, password: str) -> User:
    """Use the link once as a new person: the account (its address is the invited one, to
    which the link was mailed) and the membership. An address that has an account is
    refused: its owner signs in and accepts (``accept_signed_in``). A second use, even
    racing the first, is refused; a refused name or password keeps the link."""
    invitation = open_invitation(token)
    with database.atomic():
        if users.find(invitation.email) is not None:
            raise PeopleError("This address already has an account: sign in to accept the "
                              "invitation.", status=409)
        _claim(invitation)
        user = users.create(invitation.email, name, password)
        roles.add(invitation.workspace, user, invitation.role)
        audit.record(invitation.workspace, user, "member.joined", user.email,
                     {"role": invitation.role})
    return user


def accept_signed_in(token: str, user: User) -> Invitation:
    """Use the link once as the signed-in ``user``, who must be the invited address."""
    invitation = open_invitation(token)
    if user.email != invitation.email:
        raise PeopleError(f"This invitation is for {invitation.email}: sign out, then sign in "
                          "with that address to accept it.", status=403)
    with database.atomic():
        _claim(invitation)
        roles.add(invitation.workspace, user, invitation.role)
        audit.record(invitation.workspace, user, "member.joined", user.email,
                     {"role": invitation.role})
    return invitation


def cancel(invitation: Invitation, by: User) -> None:
    with database.atomic():
        audit.record(invitation.workspace, by, "invitation.cancelled", invitation.email,
                     {"role": invitation.role})
        invitation.delete_instance()


def accept_verified(user: User, via: str) -> list[Invitation]:
    """Accept every invitation pending for ``user``'s address, the address having just been
    proved by other means than the link (a provider's verified ``email`` claim): the
    invitations a link would still open, each claimed once."""
    accepted = []
    for invitation in usable_for(user.email):
        with database.atomic():
            try:
                _claim(invitation)
            except PeopleError:
                continue  # taken meanwhile by its link
            roles.add(invitation.workspace, user, invitation.role)
            audit.record(invitation.workspace, user, "member.joined", user.email,
                         {"role": invitation.role, "via": via})
        accepted.append(invitation)
    return accepted


def usable_for(email: str) -> list[Invitation]:
    """The invitations pending for ``email`` (stored form) that their links would open."""
    candidates = Invitation.select().where(
        Invitation.email == email, Invitation.accepted_at.is_null(),
        Invitation.expires_at > utcnow()).order_by(Invitation.created_at)
    return [invitation for invitation in candidates
            if invitation.invited_by_id is None or _inviter_may_still_grant(invitation)]
