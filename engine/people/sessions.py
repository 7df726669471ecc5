"""Web sessions kept on the server: a new token at each sign-in, ended at sign-out or reset."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from peewee import JOIN, ModelSelect

from engine.people import tokens
from engine.people.models import Membership, User, WebSession
from engine.people.prepared import PreparedSelect
from engine.store.models import Workspace, utcnow

# GOV.UK Notify's choice: long enough for a working day, short enough to end by itself.
LIFETIME = dt.timedelta(hours=20)


def start(user: User) -> str:
    """A fresh session token (the cookie's value); only its hash is stored."""
    token, digest = tokens.new_token()
    WebSession.create(token_hash=digest, user=user, expires_at=utcnow() + LIFETIME)
    # Expired rows of this user go now: nothing else needs to sweep the table.
    WebSession.delete().where(WebSession.user == user, WebSession.expires_at <= utcnow()).execute()
    return token


def user_for(token: str | None, user_id: str | None) -> User | None:
    """The signed-in user, when the token is a live session of that very user."""
    if not token or not user_id:
        return None
    row = (WebSession.select(WebSession, User).join(User)
           .where(WebSession.token_hash == tokens.hash_token(token),
                  WebSession.expires_at > utcnow()).first())
    if row is None or str(row.user.id) != user_id:
        return None
    return row.user


def _session_and_membership(workspace_id: Any, token_hash: str,
                            now: dt.datetime) -> ModelSelect:
    """The live session of ``token_hash``, its user, and that user's membership of
    ``workspace_id`` with its workspace (None's columns when not a member); the token
    hash is the key, so one row at most."""
    return (WebSession.select(WebSession, User, Membership, Workspace).join(User)
            .join(Membership, JOIN.LEFT_OUTER, attr="membership",
                  on=(Membership.user == User.id) & (Membership.workspace == workspace_id))
            .join(Workspace, JOIN.LEFT_OUTER, on=(Membership.workspace == Workspace.id),
                  attr="workspace")
            .where(WebSession.token_hash == token_hash, WebSession.expires_at > now))


_SESSION_AND_MEMBERSHIP = PreparedSelect(
    _session_and_membership, (Membership.workspace, WebSession.token_hash, WebSession.expires_at),
    (uuid.UUID(int=1), "prepared-token-hash", dt.datetime(2000, 1, 2, 3, 4, 5)))


def user_and_membership(token: str | None, user_id: str | None,
                        workspace_id: Any) -> tuple[User | None, Membership | None]:
    """The signed-in user (as ``user_for``) and their membership of ``workspace_id`` with
    its workspace, in one round trip: every workspace page asks both first. Read afresh at
    each request, like the session itself: a sign-out or a removal counts at once."""
    if not token or not user_id:
        return None, None
    row = _SESSION_AND_MEMBERSHIP.first(workspace_id, tokens.hash_token(token), utcnow())
    if row is None or str(row.user.id) != user_id:
        return None, None
    membership = getattr(row.user, "membership", None)
    if membership is None or membership.id is None:
        return row.user, None
    return row.user, membership


def end(token: str | None) -> None:
    if token:
        WebSession.delete().where(WebSession.token_hash == tokens.hash_token(token)).execute()


def end_all(user: User) -> None:
    WebSession.delete().where(WebSession.user == user).execute()
