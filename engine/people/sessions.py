"""Web sessions kept on the server: a new token at each sign-in, ended at sign-out or reset,
by their person from the Account page, after an idle time and after an absolute lifetime
(HERALD_SESSION_IDLE_MINUTES, HERALD_SESSION_LIFETIME_DAYS)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from peewee import JOIN, ModelSelect

from engine import runtime
from engine.database.models import Workspace, utcnow
from engine.database.models.people import Membership, User, WebSession
from engine.people import tokens
from engine.people.prepared import PreparedSelect

# The idle deadline moves on at most this often: a page view writes nothing when its
# session was moved on less than this long ago (the idle time is then this much shorter).
TOUCH_EVERY = dt.timedelta(minutes=5)
MAX_USER_AGENT = 300


def idle_time() -> dt.timedelta:
    return dt.timedelta(minutes=runtime.settings().session_idle_minutes)


def lifetime() -> dt.timedelta:
    return dt.timedelta(days=runtime.settings().session_lifetime_days)


def _deadline(created_at: dt.datetime, now: dt.datetime) -> dt.datetime:
    return min(now + idle_time(), created_at + lifetime())


def start(user: User, user_agent: str = "", ip: str = "") -> str:
    """A fresh session token (the cookie's value); only its hash is stored."""
    token, digest = tokens.new_token()
    now = utcnow()
    WebSession.create(token_hash=digest, user=user, created_at=now, last_seen_at=now,
                      expires_at=_deadline(now, now),
                      user_agent=(user_agent or "")[:MAX_USER_AGENT] or None,
                      ip=(ip or "")[:45] or None)
    # Expired rows of this user go now: nothing else needs to sweep the table.
    WebSession.delete().where(WebSession.user == user, WebSession.expires_at <= now).execute()
    return token


def _touch(row: WebSession, now: dt.datetime) -> None:
    """Move the idle deadline on (never past the absolute one), at most every TOUCH_EVERY."""
    if row.last_seen_at is not None and now - row.last_seen_at < TOUCH_EVERY:
        return
    WebSession.update(last_seen_at=now, expires_at=_deadline(row.created_at, now)).where(
        WebSession.token_hash == row.token_hash).execute()


def user_for(token: str | None, user_id: str | None) -> User | None:
    """The signed-in user, when the token is a live session of that very user."""
    if not token or not user_id:
        return None
    row = (WebSession.select(WebSession, User).join(User)
           .where(WebSession.token_hash == tokens.hash_token(token),
                  WebSession.expires_at > utcnow()).first())
    if row is None or str(row.user.id) != user_id:
        return None
    _touch(row, utcnow())
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
    "herald_session_and_membership", _session_and_membership,
    (Membership.workspace, WebSession.token_hash, WebSession.expires_at),
    (uuid.UUID(int=1), "prepared-token-hash", dt.datetime(2000, 1, 2, 3, 4, 5)))


def user_and_membership(token: str | None, user_id: str | None,
                        workspace_id: Any) -> tuple[User | None, Membership | None]:
    """The signed-in user (as ``user_for``) and their membership of ``workspace_id`` with
    its workspace, in one round trip: every workspace page asks both first. Read afresh at
    each request, like the session itself: a sign-out or a removal counts at once."""
    if not token or not user_id:
        return None, None
    now = utcnow()
    row = _SESSION_AND_MEMBERSHIP.first(workspace_id, tokens.hash_token(token), now)
    if row is None or str(row.user.id) != user_id:
        return None, None
    _touch(row, now)
    membership = getattr(row.user, "membership", None)
    if membership is None or membership.id is None:
        return row.user, None
    return row.user, membership


def end(token: str | None) -> None:
    if token:
        WebSession.delete().where(WebSession.token_hash == tokens.hash_token(token)).execute()


def end_all(user: User) -> None:
    WebSession.delete().where(WebSession.user == user).execute()


def live_of(user: User) -> list[WebSession]:
    """The user's live sessions, the most recently used first (the Account page)."""
    return list(WebSession.select().where(WebSession.user == user,
                                          WebSession.expires_at > utcnow())
                .order_by(WebSession.last_seen_at.desc(nulls="LAST"),
                          WebSession.created_at.desc()))


def is_current(row: WebSession, token: str | None) -> bool:
    return bool(token) and row.token_hash == tokens.hash_token(token or "")


def end_other(user: User, token_hash: str, current_token: str | None) -> bool:
    """End one of ``user``'s own sessions, named by its hash (the Account page's form),
    never the current one (Sign out ends that); False when there is no such session."""
    if current_token and token_hash == tokens.hash_token(current_token):
        return False
    return bool(WebSession.delete().where(WebSession.user == user,
                                          WebSession.token_hash == token_hash).execute())


def end_all_others(user: User, current_token: str | None) -> int:
    """``Sign out everywhere else``: every session of ``user`` but the current one ends;
    how many did."""
    query = WebSession.delete().where(WebSession.user == user)
    if current_token:
        query = query.where(WebSession.token_hash != tokens.hash_token(current_token))
    return query.execute()
