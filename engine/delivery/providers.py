"""Which provider sends a notification: the workspace's own, else the service default."""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
import time
from typing import Any

from engine import runtime
from engine.plugins.channel_contract import Channel
from engine.plugins.contracts import PermanentError, Provider, ProviderContext
from engine.plugins.manager import open_provider, provider_scheme, provider_url
from engine.store.models import InboxMessage, Workspace

# The notification being delivered, so the dev inbox can file what it stores under it.
current_notification: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "herald_current_notification", default=None)

_cache: dict[tuple[str, str], Provider] = {}
_lock = threading.Lock()


def _store_inbox_message(data: dict[str, Any]) -> None:
    ids = current_notification.get() or (None, None)
    InboxMessage.create(workspace_id=ids[0], notification_id=ids[1], **data)


def _context() -> ProviderContext:
    return ProviderContext(store_inbox_message=_store_inbox_message, settings=runtime.settings())


_own_providers: dict[str, tuple[float, str | None]] = {}
OWN_PROVIDER_TTL = 5.0


def _own_provider(workspace_id: Any) -> str | None:
    """A workspace's own provider setting, re-read at most every few seconds per process."""
    key = str(workspace_id)
    now = time.monotonic()
    hit = _own_providers.get(key)
    if hit is not None and hit[0] > now:
        return hit[1]
    row = Workspace.select(Workspace.email_provider).where(Workspace.id == workspace_id).first()
    value = row.email_provider if row else None
    if len(_own_providers) > 10000:
        _own_providers.clear()
    _own_providers[key] = (now + OWN_PROVIDER_TTL, value)
    return value


def uses_own_provider(workspace_id: Any) -> bool:
    """True when the workspace sends email through its own provider (D9)."""
    return bool(_own_provider(workspace_id))


def provider_for(channel: Channel, workspace_id: Any) -> Provider:
    """The workspace's own provider when the channel takes one, else the one its setting
    names; cached per process and URL, so an SMTP connection is kept across notifications."""
    plugin, url = None, ""
    own_setting = _own_provider(workspace_id) if channel.own_provider else None
    if own_setting:
        own = json.loads(own_setting)
        plugin, url = own.get("plugin"), own.get("url", "")
    elif channel.provider_setting:
        url = provider_url(runtime.settings(), channel.provider_setting)
    if not url:
        raise PermanentError(f"no {channel.name} provider is configured "
                             f"({channel.provider_setting})")
    key = (provider_scheme(url, plugin), url)
    with _lock:
        provider = _cache.get(key)
        if provider is None:
            try:
                provider = open_provider(url, _context(), plugin)
            except (LookupError, ValueError) as err:
                raise PermanentError(str(err)) from None
            with contextlib.suppress(AttributeError):  # a plugin's object may refuse it
                provider.herald_scheme = key[0]  # named on each attempt (reports)
            _cache[key] = provider
    return provider


def close_all() -> None:
    """Close kept connections (worker shutdown, tests)."""
    with _lock:
        for provider in _cache.values():
            close = getattr(provider, "close", None)
            if close is not None:
                close()
        _cache.clear()
        _own_providers.clear()
