"""The Email provider form's separate fields (host, port, user, password, TLS) made into
one SMTP URL with each part percent-encoded, and the seal that keeps a typed password (or
URLs) in a refused form without ever showing it (docs/web.md, "Settings, Email provider")."""

from __future__ import annotations

import ipaddress
import json
import re
import time
from urllib.parse import quote

from config.redaction import MASK, mask_url
from engine.database import secrets
from engine.errors import UndecryptableSecret

SEAL_TTL = 1800  # seconds a refused form's sealed credential stays usable
# A host name (letters, digits, hyphens, dots) or an IPv4 address; IPv6 is checked apart.
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")


def fields_url(host: str, port: str, user: str, password: str, tls: str
               ) -> tuple[str | None, dict[str, str]]:
    """The SMTP URL the fields make, or the problem of each field that is wrong."""
    problems: dict[str, str] = {}
    host = host.strip()
    try:
        netloc_host = f"[{ipaddress.IPv6Address(host.strip('[]'))}]"
    except ValueError:
        netloc_host = host
        if not _HOST.match(host):
            problems["host"] = ("Enter the host as a name such as smtp.example.com or an "
                                "address, without a scheme, user or port.")
    number = port.strip()
    if not number.isdigit() or not 1 <= int(number) <= 65535:
        problems["port"] = "Enter the port as a number from 1 to 65535, such as 587."
    if tls not in ("starttls", "ssl", "none"):
        problems["tls"] = "Choose how the connection is encrypted."
    if password and not user.strip():
        problems["user"] = "Enter the user name that goes with the password."
    if len(user) > 500:
        problems["user"] = "Enter a user name of at most 500 characters."
    if len(password) > 500:
        problems["password"] = "Enter a password of at most 500 characters."
    if problems:
        return None, problems
    login = ""
    if user.strip():
        login = quote(user.strip(), safe="")
        login += f":{quote(password, safe='')}" if password else ""
        login += "@"
    return f"smtp://{login}{netloc_host}:{int(number)}?tls={tls}", {}


def seal(value: object, workspace_id: str, user_id: str) -> str:
    """A value sealed for this workspace and person, for a while: encrypted, so the page
    holds nothing readable, and bound, so no one else's form can replay it."""
    return secrets.encrypt(json.dumps({"w": workspace_id, "u": user_id, "at": time.time(),
                                       "v": value}))


def unseal(sealed: str | None, workspace_id: str, user_id: str) -> object | None:
    """What a seal of this workspace and person holds, or None (absent, altered, expired)."""
    if not sealed:
        return None
    try:
        body = json.loads(secrets.decrypt(sealed))
    except (ValueError, UndecryptableSecret):
        return None
    if (body.get("w"), body.get("u")) != (workspace_id, user_id):
        return None
    if not 0 <= time.time() - float(body.get("at", 0)) <= SEAL_TTL:
        return None
    return body.get("v")


def unmasked(lines: list[str], kept: object) -> list[str]:
    """The URLs typed, each masked one (`***`) given back its credential from the URLs kept
    sealed, when only what is outside the credential changed."""
    if not isinstance(kept, list) or not kept:
        return lines
    result = []
    for line in lines:
        if MASK in line:
            line = next((_restored(line, url) for url in kept if isinstance(url, str)
                         and _restored(line, url)), line)
        result.append(line)
    return result


def _restored(line: str, url: str) -> str | None:
    """``line`` with ``url``'s credential, when both name the same scheme, user, host and
    port and only the credential of ``url`` was masked."""
    masked = mask_url(url)
    at = masked.find(MASK)
    if at < 0:
        return None
    head, tail = masked[:at], masked[at + len(MASK):]
    if not (url.startswith(head) and url.endswith(tail) and line.startswith(head + MASK)):
        return None
    typed_tail = line[len(head) + len(MASK):]
    if not typed_tail.startswith("@") or _authority(typed_tail) != _authority(tail):
        return None
    return url[: len(url) - len(tail)] + typed_tail


def _authority(tail: str) -> str:
    """The host and port after a credential's ``@``: what a corrected URL must keep."""
    rest = tail[1:]
    for stop in "/?#":
        rest = rest.split(stop, 1)[0]
    return rest.lower()
