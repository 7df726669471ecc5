"""What verified mail carries when the worker sends it: the DKIM key of its domain, its
return-path host, and a single sender's postal footer (engine/delivery/planning.py adds
them to mail through the service's provider only: a workspace with its own provider is
outside sender verification, D9, and its provider decides its envelope and signatures).
"""

from __future__ import annotations

import html
import re
import threading
import time
from typing import Any

from engine.database import generations
from engine.database.models import Sender
from engine.formats.addresses import bare_address, suppression_key
from engine.senders.dkim_keys import signing_key
from engine.senders.names import return_path_host

KEEP_SECONDS = 5.0  # a backstop: the account's generation is what keeps an answer current
_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)
# (account, address) -> (expires at, the identity, the account's generation it was read under)
_cache: dict[tuple[str, str], tuple[float, dict[str, Any], str | None]] = {}
_lock = threading.Lock()


def _identity(account_id: str, address: str) -> dict[str, Any]:
    """The DKIM key, return-path host and postal footer for mail from ``address``."""
    domain = address.rpartition("@")[2]
    rows = {row.kind: row for row in Sender.select().where(
        Sender.account == account_id, Sender.verified == True,  # noqa: E712
        ((Sender.kind == "domain") & (Sender.value == domain))
        | ((Sender.kind == "address") & (Sender.value == address)))}
    found: dict[str, Any] = {}
    if (domain_row := rows.get("domain")) is not None:
        found["dkim"] = signing_key(domain_row)
        if any(r["purpose"] == "return-path" and r.get("status") == "verified"
               for r in domain_row.records or []):
            found["host"] = return_path_host(domain)
    if (single := rows.get("address")) is not None and single.postal_address:
        found["footer"] = (single.from_name or "", single.postal_address)
    return found


def _cached(account_id: str, address: str) -> dict[str, Any]:
    key = (account_id, address)
    scope = generations.account_scope(account_id)
    generations.refresh([scope])  # a sender verified or gone anywhere counts at once
    now = time.monotonic()
    hit = _cache.get(key)
    if hit is not None and hit[0] > now and generations.current(hit[2], scope):
        return hit[1]
    tag = generations.known(scope)
    value = _identity(account_id, address)
    with _lock:
        if len(_cache) > 10000:
            _cache.clear()
        _cache[key] = (now + KEEP_SECONDS, value, tag)
    return value


def footer_html(name: str, postal: str) -> str:
    lines = ", ".join(html.escape(part.strip()) for part in postal.splitlines() if part.strip())
    sender = f"{html.escape(name)}, " if name else ""
    return (f'<p style="margin-top:24px;font-size:12px;color:#666666">{sender}{lines}</p>')


def sender_additions(account_id: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload keys the sender of an email payload adds: ``dkim`` (a DkimKey),
    ``returnPathHost`` and, for Marketing mail from a single sender, ``html`` with its
    postal footer."""
    if not payload.get("from", {}).get("address"):
        return {}
    address = suppression_key(bare_address(payload["from"]["address"]))
    found = _cached(str(account_id), address)
    extra: dict[str, Any] = {}
    if found.get("dkim") is not None:
        extra["dkim"] = found["dkim"]
    if found.get("host"):
        extra["returnPathHost"] = found["host"]
    if found.get("footer") and payload.get("emailType") == "Marketing" and payload.get("html"):
        footer = footer_html(*found["footer"])
        body = payload["html"]
        ends = list(_BODY_END.finditer(body))
        extra["html"] = (body[:ends[-1].start()] + footer + body[ends[-1].start():]
                         if ends else body + footer)
    return extra


def clear() -> None:
    with _lock:
        _cache.clear()
