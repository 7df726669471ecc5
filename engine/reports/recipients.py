"""The recipients a notification's payload names, as the reports show and search them.

Its own module, below the feed and the lookup index that both read it: the index is
built from it (lookup) and the feed falls back to it for rows not indexed yet.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit


def payload_recipients(payload: Any) -> list[str]:
    """The recipients a payload names, whatever its channel (docs/plugins.md, "The channel
    contract"): its suppression keys, and the host of its ``url`` (a webhook's destination, a
    plugin's room)."""
    if isinstance(payload, str):
        payload = json.loads(payload)
    payload = payload or {}
    found = sorted(str(k) for k in payload.get("suppressionKeys") or [])
    url = payload.get("url")
    try:
        host = urlsplit(url).hostname if isinstance(url, str) else None
    except ValueError:  # not a URL after all (an unclosed IPv6 bracket)
        host = None
    return [*found, host] if host else found
