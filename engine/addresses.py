"""Address checks shared by validation and recipient resolution: email (D4) and E.164 numbers."""

from __future__ import annotations

from email.utils import parseaddr

import phonenumbers
from email_validator import EmailNotValidError, validate_email


def bare_address(value: str) -> str:
    """``Name <a@b>`` or ``a@b`` -> ``a@b``."""
    return parseaddr(value)[1] if "<" in value else value.strip()


def suppression_key(value: str) -> str:
    """How an address or number is kept on a suppression list: bare and lower-cased."""
    return value.rpartition("<")[2].rstrip(">").strip().lower()


def valid_email(value: object) -> bool:
    """A real validator (syntax, IDN), bare or ``Name <addr>``; CR or LF anywhere is refused."""
    if not isinstance(value, str) or "\r" in value or "\n" in value or len(value) > 998:
        return False
    text = value.strip()
    if "<" in text:
        _name, addr = parseaddr(text)
        if not addr or not text.endswith(">"):
            return False
        text = addr
    try:
        validate_email(text, check_deliverability=False, allow_smtputf8=True)
    except EmailNotValidError:
        return False
    return True


def valid_e164(value: object) -> bool:
    if not isinstance(value, str) or not value.startswith("+") or len(value) > 16:
        return False
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        return False
    return (phonenumbers.is_valid_number(number)
            and phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164) == value)


def dedupe(values: list[str]) -> list[str]:
    """Case-insensitive de-duplication on the bare address, first occurrence kept."""
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        key = bare_address(value).lower()
        if key not in seen:
            seen.add(key)
            out.append(value.strip())
    return out
