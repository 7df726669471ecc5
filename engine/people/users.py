"""Users: one per email address (kept lower-cased), names and passwords."""

from __future__ import annotations

from email_validator import EmailNotValidError, validate_email

from engine.database.models import utcnow
from engine.database.models.people import User
from engine.people import passwords
from engine.people.errors import PeopleError

MAX_NAME = 200


def normalize_email(value: str, field: str = "email") -> str:
    """The address as stored and compared: checked, domain in its normal form, lower-cased."""
    text = (value or "").strip()
    if not text:
        raise PeopleError("Enter an email address.", field)
    if len(text) > 320 or "\r" in text or "\n" in text:
        raise PeopleError("Enter a valid email address.", field)
    try:
        checked = validate_email(text, check_deliverability=False)
    except EmailNotValidError as err:
        raise PeopleError(f"Enter a valid email address: {err}", field) from None
    return checked.normalized.lower()


def find(email: str) -> User | None:
    try:
        return User.get_or_none(User.email == normalize_email(email))
    except PeopleError:
        return None


def check_name(name: str) -> str:
    text = (name or "").strip()
    if not text:
        raise PeopleError("Enter your name.", "name")
    if len(text) > MAX_NAME:
        raise PeopleError(f"Use at most {MAX_NAME} characters.", "name")
    return text


def create(email: str, name: str, password: str) -> User:
    email = normalize_email(email)
    name = check_name(name)
    if User.select().where(User.email == email).exists():
        raise PeopleError("A user with this email address already exists.", "email")
    return User.create(email=email, name=name,
                       password_hash=passwords.hash_password(password, (email, name)))


def authenticate(email: str, password: str) -> User | None:
    """The user whose email and password these are, else None (in the same time either way)."""
    user = find(email)
    if not passwords.verify(user.password_hash if user else None, password):
        return None
    assert user is not None
    if passwords.needs_rehash(user.password_hash):
        User.update(password_hash=passwords.hash_password(password)).where(
            User.id == user.id).execute()
    return user


def set_password(user: User, password: str) -> None:
    user.password_hash = passwords.hash_password(password, (user.email, user.name))
    user.password_changed_at = utcnow()
    user.save()
