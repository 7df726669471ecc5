"""Publishing what Herald issued, as a customer and an operator would."""

from __future__ import annotations

from typing import Any

from engine.senders.dkim_keys import published_records


def publish(zone: Any, document: dict[str, Any], *, skip: tuple[str, ...] = ()) -> None:
    """The customer's records of a domain (``skip``: purposes left out) and the operator's
    DKIM keys in HERALD_DKIM_ZONE."""
    for record in document["records"]:
        if record["purpose"] not in skip:
            zone.add(record["host"], record["type"], record["value"])
    for record in published_records():
        zone.remove(record["host"])
        zone.add(record["host"], "TXT", record["value"])


def by_purpose(document: dict[str, Any], purpose: str, index: int = 0) -> dict[str, Any]:
    return [r for r in document["records"] if r["purpose"] == purpose][index]
