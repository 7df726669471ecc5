"""Roles per workspace (docs/web.md, "Roles"): what each may do, and the rule that one Owner
always stays."""

from __future__ import annotations

from typing import Any

from peewee import fn

from engine.database.db import database
from engine.database.models import Workspace
from engine.database.models.people import ROLES, Invitation, Membership, User
from engine.people import audit
from engine.people.errors import PeopleError

RANK = {"member": 1, "admin": 2, "owner": 3}
LABELS = {"owner": "Owner", "admin": "Admin", "member": "Member"}


def at_least(role: str, needed: str) -> bool:
    return RANK.get(role, 0) >= RANK[needed]


def check_role(role: str, field: str = "role") -> str:
    value = (role or "").strip().lower()
    if value not in ROLES:
        raise PeopleError("Choose Owner, Admin or Member.", field)
    return value


def may_grant(granter_role: str | None, role: str) -> bool:
    """An Owner grants any role, an Admin Admin or Member; the operator (None) any."""
    if granter_role is None:
        return True
    if granter_role == "owner":
        return True
    return granter_role == "admin" and role != "owner"


def membership(workspace: Workspace, user: User) -> Membership | None:
    return Membership.get_or_none(Membership.workspace == workspace, Membership.user == user)


def membership_in(workspace_id: Any, user: User) -> Membership | None:
    """The user's membership of a workspace given by id, its workspace loaded in the same
    query: every workspace page asks this first, so it is one round trip, not two."""
    return (Membership.select(Membership, Workspace).join(Workspace)
            .where(Membership.workspace == workspace_id, Membership.user == user).first())


def membership_by_id(workspace: Workspace, membership_id: Any) -> Membership | None:
    """A membership of the workspace (another workspace's is as absent as an unknown one)."""
    return Membership.get_or_none(Membership.id == membership_id,
                                  Membership.workspace == workspace)


def workspaces_of(user: User) -> list[tuple[Workspace, str]]:
    rows = (Membership.select(Membership, Workspace).join(Workspace)
            .where(Membership.user == user).order_by(Workspace.name))
    return [(m.workspace, m.role) for m in rows]


def members(workspace: Workspace) -> list[Membership]:
    return list(Membership.select(Membership, User).join(User)
                .where(Membership.workspace == workspace).order_by(User.email))


def _owners(workspace: Workspace) -> int:
    # Counted inside the caller's transaction, after locking the workspace's row on
    # PostgreSQL, so two Owners demoting each other at once cannot both succeed.
    if not database.obj.__class__.__name__.startswith("Sqlite"):
        Workspace.select(Workspace.id).where(Workspace.id == workspace.id).for_update().get()
    return (Membership.select(fn.COUNT(Membership.id))
            .where(Membership.workspace == workspace, Membership.role == "owner").scalar())


def add(workspace: Workspace, user: User, role: str) -> Membership:
    """Give ``user`` the role in the workspace; an existing membership keeps the higher one."""
    existing = membership(workspace, user)
    if existing is None:
        return Membership.create(workspace=workspace, user=user, role=role)
    if RANK[role] > RANK[existing.role]:
        existing.role = role
        existing.save()
    return existing


def change_role(target: Membership, role: str, by: User) -> Membership:
    """Owner only (checked by the view); the last Owner cannot be demoted."""
    role = check_role(role)
    with database.atomic():
        if target.role == "owner" and role != "owner" and _owners(target.workspace) <= 1:
            raise PeopleError("A workspace always keeps one Owner: make someone else Owner "
                              "first.", "role", status=409)
        before = target.role
        target.role = role
        target.save()
        _end_invitations_of(target, role)
        if before != role:
            audit.record(target.workspace, by, "member.role_changed", target.user.email,
                         {"from": before, "to": role})
    return target


def remove(target: Membership, by: User) -> None:
    """Remove a member (an Owner's action) or leave (``by`` is the member)."""
    with database.atomic():
        if target.role == "owner" and _owners(target.workspace) <= 1:
            raise PeopleError("A workspace always keeps one Owner: make someone else Owner "
                              "first.", None, status=409)
        action = "member.left" if target.user_id == by.id else "member.removed"
        audit.record(target.workspace, by, action, target.user.email, {"role": target.role})
        _end_invitations_of(target, None)
        target.delete_instance()


def _end_invitations_of(target: Membership, role: str | None) -> None:
    """The pending invitations ``target``'s person sent in its workspace that their role
    (None: removed) may no longer give end with it."""
    pending = Invitation.select().where(Invitation.workspace == target.workspace,
                                        Invitation.invited_by == target.user,
                                        Invitation.accepted_at.is_null())
    ended = [inv.id for inv in pending
             if role is None or role == "member" or not may_grant(role, inv.role)]
    if ended:
        Invitation.delete().where(Invitation.id.in_(ended)).execute()
