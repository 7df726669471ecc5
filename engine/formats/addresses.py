"""Address checks shared by validation and recipient resolution: email (D4, docs/api.md)
and E.164 numbers."""

from __future__ import annotations

import re
from email.utils import parseaddr
from functools import cache
from types import ModuleType

import idna
from email_validator import EmailNotValidError, validate_email

from engine.formats.header_text import CONTROL

_E164_FORM = re.compile(r"\+[1-9][0-9]{6,14}")
_PHONE_PUNCTUATION = re.compile(r"[\s().-]")

# One mailbox, ``Name <addr>``: the name a quoted string, or words of letters, digits,
# atext and periods (``John Q. Public``, ``=?utf-8?q?...?=``); no comment, no second
# address, no group. A grammar of our own, linear, where the standard library's strict
# parser is slow on long input (docs/performance.md, "Measurements behind the code's shape")
# and raises AttributeError on some hostile input.
_NAMED = re.compile(r"""(?:"(?:[^"\\]|\\.)*" *|[\w!#$%&'*+/=?^`{|}~. -]*)"""
                    r"""<([^\s<>()\[\]\\,;:@"]+@[^\s<>()\[\]\\,;:@"]+)>""")


def bare_address(value: str) -> str:
    """``Name <a@b>`` or ``a@b`` -> ``a@b``."""
    return parseaddr(value)[1] if "<" in value else value.strip()


def ascii_form(domain: str) -> str:
    """An internationalised domain in the ASCII form mail is sent to (IDNA 2008 with UTS 46
    mapping, as the API's validator reads it: fullwidth letters and an ideographic full
    stop name the same domain); an ASCII domain, or one that has no such form, as it is."""
    if domain.isascii():
        return domain
    try:
        return idna.encode(domain, uts46=True).decode("ascii")
    except idna.IDNAError:
        return domain


def suppression_key(value: str) -> str:
    """How an address or number is kept on a suppression list: bare, lower-cased, its
    domain in the ASCII form mail goes to, so that every spelling of one mailbox's domain
    (fullwidth letters, an ideographic full stop, a bounce reported as ``xn--...``)
    is one key."""
    bare = value.rpartition("<")[2].rstrip(">").strip()
    if not bare.isascii():
        local, at, domain = bare.rpartition("@")
        if at:
            bare = f"{local}@{ascii_form(domain)}"
    return bare.lower()


def valid_email(value: object) -> bool:
    """A real validator (syntax, IDN) of exactly one mailbox, bare or ``Name <addr>``.

    A named value must be one mailbox by our grammar (_NAMED) and read as that mailbox by
    every parser that later looks at it: ``parseaddr`` (the SMTP envelope, the To header)
    and ``suppression_key``. Where they could disagree (``a@x, <b@y>``: parseaddr reads a@x,
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
    named = _NAMED.fullmatch(text)
    if named is None:
        return None
    addr = named[1]
    if parseaddr(text)[1] != addr or suppression_key(text) != suppression_key(addr):
        return None
    return addr


@cache
def _phonenumbers() -> ModuleType:
    """phonenumbers (about 1 MiB of a process's memory), imported by the first number checked,
    not at start: email sends never need it (docs/performance.md, "Memory at rest")."""
    import phonenumbers

    return phonenumbers


def valid_e164(value: object) -> bool:
    if not isinstance(value, str) or not value.startswith("+") or len(value) > 16:
        return False
    phonenumbers = _phonenumbers()
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        return False
    return (phonenumbers.is_valid_number(number)
            and phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164) == value)


def e164_form(value: object) -> bool:
    """An E.164 number as written: ``+``, a country code and at most 15 digits in all, a
    length its country's plan allows (phonenumbers' "possible"). For a From number: a
    sender's own number may be in a range phonenumbers does not list as assigned (UK
    `+447700900123` is one), where a recipient's must be valid (valid_e164)."""
    if not isinstance(value, str) or not _E164_FORM.fullmatch(value):
        return False
    phonenumbers = _phonenumbers()
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        return False
    return (phonenumbers.is_possible_number(number)
            and phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164) == value)


def typed_phone(value: str) -> str:
    """A phone number as people type it, its spaces, dots, hyphens and brackets dropped
    (``+44 7911 123456`` is ``+447911123456``), as a list's phone column is read."""
    return _PHONE_PUNCTUATION.sub("", value.strip())


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
