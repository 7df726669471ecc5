"""The recipients a notification's payload names, as the reports show and search them.

Its own module, below the feed and the lookup index that both read it: the index is
built from it (lookup) and the feed falls back to it for rows not indexed yet.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit


def payload_recipients(payload: Any) -> list[str]:
    """The recipients a payload names: its suppression keys, or a webhook's host."""
    if isinstance(payload, str):
        payload = json.loads(payload)
    payload = payload or {}
    if payload.get("channel") == "webhook":
        host = urlsplit(str(payload.get("url") or "")).hostname
        return [host] if host else []
    return sorted(str(k) for k in payload.get("suppressionKeys") or [])
