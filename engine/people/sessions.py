"""Web sessions kept on the server: a new token at each sign-in, ended at sign-out or reset."""

from __future__ import annotations

import datetime as dt

from engine.people import tokens
from engine.people.models import User, WebSession
from engine.store.models import utcnow

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


def end(token: str | None) -> None:
    if token:
        WebSession.delete().where(WebSession.token_hash == tokens.hash_token(token)).execute()


def end_all(user: User) -> None:
    WebSession.delete().where(WebSession.user == user).execute()
