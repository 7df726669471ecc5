"""Address checks shared by validation and recipient resolution: email (D4) and E.164 numbers."""

from __future__ import annotations

import email.policy
import re
from email.utils import parseaddr

import phonenumbers
from email_validator import EmailNotValidError, validate_email

from engine.header_text import CONTROL

# ``Ada Lovelace <ada@example.com>``: words of letters and digits, one address of no
# specials, which every parser reads alike (the strict parser costs ~100 us).
_SIMPLE_NAMED = re.compile(r"[A-Za-z0-9 ]*<([^\s<>()\[\]\\,;:@\"]+@[^\s<>()\[\]\\,;:@\"]+)>")


def bare_address(value: str) -> str:
    """``Name <a@b>`` or ``a@b`` -> ``a@b``."""
    return parseaddr(value)[1] if "<" in value else value.strip()


def suppression_key(value: str) -> str:
    """How an address or number is kept on a suppression list: bare and lower-cased."""
    return value.rpartition("<")[2].rstrip(">").strip().lower()


def valid_email(value: object) -> bool:
    """A real validator (syntax, IDN) of exactly one mailbox, bare or ``Name <addr>``.

    A named value must read as that one mailbox to every parser that later looks at it:
    the strict header parser, ``parseaddr`` (the SMTP envelope, the To header) and
    ``suppression_key``. Where they could disagree (``a@x, <b@y>``: parseaddr reads a@x,
    the suppression list b@y) the value is refused, so no one address is checked while
    another is mailed.
    """
    if not isinstance(value, str) or len(value) > 998 or CONTROL.search(value):
        return False
    text = value.strip()
    if "<" in text:
        addr = _one_named_mailbox(text)
        if addr is None:
            return False
        text = addr
    try:
        validate_email(text, check_deliverability=False, allow_smtputf8=True)
    except EmailNotValidError:
        return False
    return True


def _one_named_mailbox(text: str) -> str | None:
    """The address of ``Name <addr>`` when every parser reads that one mailbox; else None."""
    simple = _SIMPLE_NAMED.fullmatch(text)
    if simple:
        return simple[1]
    try:
        header = email.policy.default.header_factory("To", text)
    except Exception:  # on hostile input the parser breaks in ways of its own
        return None    # (AttributeError on ':<?ZA;:@example.com>'): not one mailbox
    groups = header.groups
    if header.defects or len(groups) != 1 or groups[0].display_name is not None or \
            len(groups[0].addresses) != 1:
        return None
    addr = groups[0].addresses[0].addr_spec
    if not text.endswith(">") or parseaddr(text)[1] != addr or \
            suppression_key(text) != addr.lower():
        return None
    return addr


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
