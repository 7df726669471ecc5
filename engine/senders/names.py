"""What a sender domain may be, and the records Herald issues for one.

Record names (docs/senders.md):

- ``hd1._domainkey.<domain> CNAME hd1.<label>.<HERALD_DKIM_ZONE>`` and ``hd2...``: two
  DKIM selectors, so a key can rotate while the other signs; ``<label>`` is the domain
  with hyphens for dots plus a random tag, so two accounts asking for one domain get
  different targets and only the one whose CNAMEs are published proves control.
- ``hrp.<domain> CNAME <HERALD_RETURN_PATH_DOMAIN>``: the return-path host, where bounces
  to the envelope sender (``bounces+...@hrp.<domain>``) arrive.
- ``_dmarc.<domain> TXT v=DMARC1; p=none;``: advisory, never blocking.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import socket
from typing import Any

import idna

from engine.formats.addresses import ascii_form, suppression_key
from engine.senders.errors import SenderError

SELECTORS = ("hd1", "hd2")
RETURN_PATH_LABEL = "hrp"
DMARC_VALUE = "v=DMARC1; p=none;"
MAX_NAME = 253
MAX_LABEL = 63
# The longest host issued is hd1._domainkey.<domain>: the domain leaves it room.
MAX_DOMAIN = MAX_NAME - len("hd1._domainkey.")
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_NOT_A_NAME = re.compile(r"[\s/:@?#\\\[\]]")
FIELD = "domain"


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
        return True
    except ValueError:
        pass
    if not re.fullmatch(r"[0-9a-fA-FxX.]+", text):
        return False
    try:
        socket.inet_aton(text)  # 127.1, 0x7f.1, 2130706433: what a C resolver reads as one
        return True
    except OSError:
        return False


def _length_problem(ascii_name: str) -> str | None:
    if len(ascii_name) > MAX_NAME:
        return f"is {len(ascii_name)} characters long; a domain has at most {MAX_NAME}"
    for label in ascii_name.split("."):
        if len(label) > MAX_LABEL:
            return (f"has a label of {len(label)} characters ({label[:20]}...); a label has "
                    f"at most {MAX_LABEL}")
    return None


def parse_domain(text: Any) -> str:
    """The domain in its ASCII form, lower-cased; SenderError saying what is wrong.

    An internationalised domain is fine in either form (``bücher.example`` or
    ``xn--bcher-kva.example``); an IP address, a URL, an email address, a single label,
    a name over 253 characters or a label over 63 are not domains.
    """
    if not isinstance(text, str) or not text.strip():
        raise SenderError("Enter a domain, such as acme.example.", FIELD)
    value = text.strip()
    if value.endswith(".") and not value.endswith(".."):
        value = value[:-1]
    if "://" in value or "/" in value:
        raise SenderError("Enter the domain alone, such as acme.example, not a URL.", FIELD)
    if "@" in value:
        raise SenderError("Enter the domain alone, such as acme.example; add a single "
                          "address as a single sender instead.", FIELD)
    if _is_ip(value):
        raise SenderError("An IP address is not a domain: enter a domain such as "
                          "acme.example.", FIELD)
    if _NOT_A_NAME.search(value):
        raise SenderError("A domain has no spaces, ports or other punctuation: enter one "
                          "such as acme.example.", FIELD)
    if value.isascii() and (problem := _length_problem(value.lower())):
        raise SenderError(f"This domain {problem}.", FIELD)
    try:
        ascii_name = idna.encode(value, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError) as err:
        raise SenderError(f"This is not a valid domain ({err}).", FIELD) from None
    if problem := _length_problem(ascii_name):
        raise SenderError(f"This domain {problem}.", FIELD)
    labels = ascii_name.split(".")
    if len(labels) < 2:
        raise SenderError("Enter a whole domain, such as acme.example (a single label is "
                          "not one).", FIELD)
    if not all(_LABEL.match(label) for label in labels) or labels[-1].isdigit():
        raise SenderError("This is not a valid domain: labels are letters, digits and "
                          "inner hyphens.", FIELD)
    if len(ascii_name) > MAX_DOMAIN:
        raise SenderError(f"This domain is too long for its DKIM record name "
                          f"(hd1._domainkey.<domain> must fit in {MAX_NAME} characters): at "
                          f"most {MAX_DOMAIN} characters.", FIELD)
    return ascii_name


def kept_value(kind: str, value: str) -> str:
    """How a sender is kept (and looked up): lower-cased, its domain in ASCII form."""
    text = value.strip()
    if kind == "domain":
        return ascii_form(text.rstrip(".")).lower()
    return suppression_key(text)


def target_label(domain: str) -> str:
    """A fresh label for this request's DKIM targets: readable, unique, a valid DNS label
    (no ``--`` that would read as an IDNA prefix)."""
    readable = re.sub(r"-{2,}", "-", domain.replace(".", "-"))[:48].strip("-")
    return f"{readable}-{secrets.token_hex(4)}"


def issued_records(domain: str, label: str, dkim_zone: str,
                   return_path_domain: str) -> list[dict[str, Any]]:
    """The records a domain must publish, in the order they are shown."""
    records: list[dict[str, Any]] = [
        {"purpose": "dkim", "type": "CNAME", "host": f"{selector}._domainkey.{domain}",
         "value": f"{selector}.{label}.{dkim_zone}"} for selector in SELECTORS]
    records.append({"purpose": "return-path", "type": "CNAME",
                    "host": f"{RETURN_PATH_LABEL}.{domain}", "value": return_path_domain})
    records.append({"purpose": "dmarc", "type": "TXT", "host": f"_dmarc.{domain}",
                    "value": DMARC_VALUE})
    for record in records:
        record.update(status="pending", reason="not checked yet")
    return records


def return_path_host(domain: str) -> str:
    return f"{RETURN_PATH_LABEL}.{domain}"


def selector_of(record: dict[str, Any]) -> str:
    """The DKIM selector a record's host names (``hd1`` of ``hd1._domainkey...``)."""
    return record["host"].partition(".")[0]
