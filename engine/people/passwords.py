"""Password rules and hashing (argon2id, argon2-cffi's RFC 9106 low-memory profile)."""

from __future__ import annotations

from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from engine.people.errors import PeopleError

MIN_LENGTH = 10
MAX_LENGTH = 1000  # argon2 takes any length; a megabyte "password" is only a way to burn CPU

_hasher = PasswordHasher()


@cache
def _dummy() -> str:
    """Verified when the email is unknown, so that a wrong address costs as long as a wrong
    password and the answer's timing does not tell which addresses have an account. Made
    at first use: hashing at import would slow every process's start (a gunicorn worker's)."""
    return _hasher.hash("not the password of anyone")


def check_rules(password: str) -> None:
    if len(password) < MIN_LENGTH:
        raise PeopleError(f"Use at least {MIN_LENGTH} characters.", "password")
    if len(password) > MAX_LENGTH:
        raise PeopleError(f"Use at most {MAX_LENGTH} characters.", "password")
    if not password.strip():
        raise PeopleError("A password cannot be only spaces.", "password")


def hash_password(password: str) -> str:
    check_rules(password)
    return _hasher.hash(password)


def verify(password_hash: str | None, password: str) -> bool:
    """True when ``password`` matches; None as the hash still spends the same time."""
    try:
        return _hasher.verify(password_hash or _dummy(), password[:MAX_LENGTH]) and bool(
            password_hash)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)
