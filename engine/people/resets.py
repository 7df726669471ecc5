"""Password resets: a one-time link to set a new password; using it signs out everywhere."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from engine.database.db import database
from engine.database.models import utcnow
from engine.database.models.people import PasswordReset, User
from engine.people import passwords, sessions, tokens, users
from engine.people.errors import PeopleError

# A link sent by email is short-lived; one an operator hands over by hand gets a day.
BY_EMAIL = dt.timedelta(hours=1)
BY_OPERATOR = dt.timedelta(hours=24)


@dataclass
class Issued:
    user: User
    url: str
    expires_at: dt.datetime


def reset_url(public_url: str, token: str) -> str:
    return f"{public_url.rstrip('/')}/reset/{token}"


def issue(user: User, public_url: str, valid_for: dt.timedelta = BY_EMAIL) -> Issued:
    token, digest = tokens.new_token()
    expires = utcnow() + valid_for
    PasswordReset.create(user=user, token_hash=digest, expires_at=expires)
    return Issued(user, reset_url(public_url, token), expires)


def issue_for(email: str, public_url: str, valid_for: dt.timedelta = BY_EMAIL) -> Issued:
    user = users.find(email)
    if user is None:
        raise PeopleError(f"no user with the email address {email}", "email", status=404)
    return issue(user, public_url, valid_for)


def open_reset(token: str) -> PasswordReset:
    reset = PasswordReset.get_or_none(PasswordReset.token_hash == tokens.hash_token(token))
    if reset is None:
        raise PeopleError("This reset link is not valid. Ask for a new one.", status=404)
    if reset.used_at is not None:
        raise PeopleError("This reset link has already been used. Ask for a new one.",
                          status=410)
    if reset.expires_at <= utcnow():
        raise PeopleError("This reset link has expired. Ask for a new one.", status=410)
    return reset


def complete(token: str, password: str) -> User:
    """Set the password once; every other session and unused link of the user ends."""
    reset = open_reset(token)
    passwords.check_rules(password, (reset.user.email, reset.user.name))
    with database.atomic():
        claimed = (PasswordReset.update(used_at=utcnow())
                   .where(PasswordReset.id == reset.id, PasswordReset.used_at.is_null())
                   .execute())
        if not claimed:
            raise PeopleError("This reset link has already been used.", status=410)
        user = reset.user
        users.set_password(user, password)
        PasswordReset.update(used_at=utcnow()).where(
            PasswordReset.user == user, PasswordReset.used_at.is_null()).execute()
        sessions.end_all(user)
    return user
