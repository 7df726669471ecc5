"""A workspace's callback URL and its switch for opens and clicks: checked where they are
set (spec 6.1, the rule broken named), read on every outcome through a short cache."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from engine import runtime
from engine.database.models import Workspace
from engine.webhooks.destinations import DestinationError, check_destination

CACHE_SECONDS = 5.0  # a URL set or removed applies within this long on other processes
MAX_URL = 2048


class CallbackUrlError(ValueError):
    """The URL breaks a destination rule; the message says which."""


@dataclass(frozen=True)
class Target:
    url: str
    tracking: bool  # opens and clicks are called back too


_cache: dict[str, tuple[float, Target | None]] = {}
_lock = threading.Lock()


def check_url(url: str) -> str:
    """``url`` stripped, or CallbackUrlError naming the rule of spec 6.1 it breaks (with
    HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS loopback is allowed, as for webhooks)."""
    url = (url or "").strip()
    if not url:
        raise CallbackUrlError("Enter the callback URL, such as https://example.com/herald.")
    if len(url) > MAX_URL:
        raise CallbackUrlError(f"Enter a URL of at most {MAX_URL} characters.")
    settings = runtime.settings()
    try:
        check_destination(url, allow_private=settings.webhook_allow_private,
                          hint=not settings.production)
    except DestinationError as err:
        message = str(err)
        raise CallbackUrlError(message[0].upper() + message[1:] + ".") from None
    return url


def set_target(workspace: Workspace, url: str, tracking: bool | None = None) -> str:
    """Check and store the callback URL (and the opens-and-clicks switch when given)."""
    workspace.callback_url = check_url(url)
    if tracking is not None:
        workspace.callback_tracking = tracking
    workspace.save()
    forget(workspace.id)
    return workspace.callback_url


def set_tracking(workspace: Workspace, tracking: bool) -> None:
    workspace.callback_tracking = tracking
    workspace.save()
    forget(workspace.id)


def remove_target(workspace: Workspace) -> None:
    """No more callbacks; those pending fail at their next attempt (nowhere to send them)."""
    workspace.callback_url = None
    workspace.save()
    forget(workspace.id)


def forget(workspace_id: Any) -> None:
    with _lock:
        _cache.pop(str(workspace_id), None)


def target(workspace_id: Any) -> Target | None:
    """Where the workspace's outcomes go, or None: one query per CACHE_SECONDS per
    workspace, so a delivery pays nothing for callbacks it does not have."""
    key = str(workspace_id)
    now = time.monotonic()
    with _lock:
        cached = _cache.get(key)
    if cached is not None and cached[0] > now:
        return cached[1]
    row = (Workspace.select(Workspace.callback_url, Workspace.callback_tracking)
           .where(Workspace.id == workspace_id).tuples().first())
    found = Target(row[0], row[1] is not False) if row and row[0] else None
    with _lock:
        if len(_cache) > 10_000:
            _cache.clear()
        _cache[key] = (now + CACHE_SECONDS, found)
    return found
