"""Password rules and hashing (argon2id, argon2-cffi's RFC 9106 low-memory profile).

The rules are NIST SP 800-63B's and OWASP ASVS 5.0's: a length (10 to 64 characters), no
composition rules, and a refusal of what is easy to guess, judged by zxcvbn (its score at
least 3 of 4) and its lists of common passwords (30,000 of them, beyond ASVS's 3,000)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

from engine.people.errors import PeopleError

if TYPE_CHECKING:
    from argon2 import PasswordHasher

MIN_LENGTH = 10
MAX_LENGTH = 64  # for a new password (ASVS 6.2.9: at least 64 allowed)
# What a sign-in still checks: a password set before the 64 rule may be longer; a
# megabyte "password" is only a way to burn CPU.
MAX_VERIFIED = 1000
MIN_SCORE = 3  # zxcvbn: 3 is "safely unguessable" (about 10^8 guesses and more)


@cache
def _hasher() -> PasswordHasher:
    """argon2-cffi's hasher, imported by the first password hashed or checked, not at start
    (docs/performance.md, "Memory at rest"): a hash costs far more than the import."""
    from argon2 import PasswordHasher

    return PasswordHasher()


@cache
def _refusals() -> tuple[type[Exception], ...]:
    """What argon2-cffi raises for a wrong password or a hash it cannot read."""
    from argon2.exceptions import InvalidHashError, VerificationError

    return VerificationError, InvalidHashError


@cache
def _dummy() -> str:
    """Verified when the email is unknown, so that a wrong address costs as long as a wrong
    password and the answer's timing does not tell which addresses have an account. Made
    at first use: hashing at import would slow every process's start (a gunicorn worker's)."""
    return _hasher().hash("not the password of anyone")


def check_rules(password: str, about: Iterable[str] = ()) -> None:
    """Refuse a new password that is too short, too long or easy to guess; ``about``: the
    person's own words (email address, name), which make a password weaker when used."""
    if len(password) < MIN_LENGTH:
        raise PeopleError(f"Use at least {MIN_LENGTH} characters.", "password")
    if len(password) > MAX_LENGTH:
        raise PeopleError(f"Use at most {MAX_LENGTH} characters.", "password")
    if not password.strip():
        raise PeopleError("A password cannot be only spaces.", "password")
    if problem := weakness(password, about):
        raise PeopleError(problem, "password")


_ADDRESS = re.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+")
_YOURS = ("This password is easy to guess: it uses your name or email address. Add words "
          "that have nothing to do with you.")


def weakness(password: str, about: Iterable[str] = ()) -> str | None:
    """Why ``password`` is easy to guess, or None when it is not: an email address (anyone's:
    a guesser tries the addresses of a workspace first), the person's own address or name
    with little else (``memberaexample``), or what zxcvbn scores under MIN_SCORE."""
    about = [value for value in about if value]
    if _ADDRESS.fullmatch(password.strip()):
        return ("A password cannot be an email address: a guesser tries those first. Choose "
                "three or four words that do not belong together.")
    rest = _compact(password)
    for value in sorted(map(_compact, about), key=len, reverse=True):
        if len(value) >= 4:
            rest = rest.replace(value, "")
    if len(rest) < MIN_LENGTH <= len(_compact(password)):
        return _YOURS
    words = [w for value in about for w in _words(value)]
    words += [_compact(value) for value in about]
    # zxcvbn's lists take about 12 MiB: loaded by the first new password, not at start.
    from zxcvbn import zxcvbn

    result = zxcvbn(password, user_inputs=words)
    sequence = result.get("sequence") or []
    if len(sequence) == 1 and sequence[0].get("dictionary_name") == "passwords":
        return ("This is one of the most common passwords: choose another, for example "
                "three or four words that do not belong together.")
    if result["score"] >= MIN_SCORE:
        return None
    if any(m.get("dictionary_name") == "user_inputs" for m in sequence):
        return _YOURS
    warning = (result.get("feedback") or {}).get("warning") or ""
    reason = f" ({warning.rstrip('.')})" if warning else ""
    return (f"This password is easy to guess{reason}. Make it longer, for example with "
            "another word or two that do not belong together.")


def _compact(value: str) -> str:
    """Letters and digits only, NFKC and case-folded: ``Member@A.Example`` is
    ``memberaexample``, as a guesser would type it."""
    return "".join(c for c in unicodedata.normalize("NFKC", value).casefold() if c.isalnum())


def _words(value: str) -> list[str]:
    """An address or a name as the words a guesser would try first."""
    text = (value or "").lower().replace("@", " ").replace(".", " ")
    return [w for w in text.split() if len(w) > 2]


def hash_password(password: str, about: Iterable[str] = ()) -> str:
    check_rules(password, about)
    return _hasher().hash(password)


def verify(password_hash: str | None, password: str) -> bool:
    """True when ``password`` matches; None as the hash still spends the same time."""
    hasher = _hasher()
    try:
        return hasher.verify(password_hash or _dummy(), password[:MAX_VERIFIED]) and bool(
            password_hash)
    except _refusals():
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher().check_needs_rehash(password_hash)
