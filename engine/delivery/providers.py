"""Which provider sends a notification: the workspace's own, else the service default; a
list of either is tried in order (engine/delivery/failover.py)."""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from typing import Any

from engine import runtime
from engine.database import generations
from engine.database.models import Workspace
from engine.database.models.inbox import InboxMessage
from engine.delivery import breaker
from engine.delivery.breaker import breaker_key
from engine.delivery.failover import (
    FailoverProvider,
    ProviderEntry,
    setting_entries,
    workspace_entries,
)
from engine.delivery.pacing import PacedProvider, pace_key, rate_of
from engine.delivery.webhook_sending import SignedWebhookProvider
from engine.plugins.channel_contract import Channel
from engine.plugins.contracts import PermanentError, Provider, ProviderContext, TransientError
from engine.plugins.manager import open_provider, provider_scheme, provider_url
from engine.plugins.provider_order import Candidate, label
from engine.webhooks.provider_hosts import ProviderEgress

# The notification being delivered, so the dev inbox can file what it stores under it.
current_notification: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "herald_current_notification", default=None)

_cache: dict[tuple[str, str, bool], Provider] = {}
_failovers: dict[tuple[Candidate, ...], FailoverProvider] = {}
_lock = threading.Lock()


def _store_inbox_message(data: dict[str, Any]) -> None:
    ids = current_notification.get() or (None, None)
    InboxMessage.create(workspace_id=ids[0], notification_id=ids[1], **data)


def _context(own: bool) -> ProviderContext:
    """A workspace's own provider (``own``) connects only where spec 6.1's address rules
    allow (engine/webhooks/provider_hosts.py); the operator's settings are trusted."""
    settings = runtime.settings()
    egress = ProviderEgress(settings.webhook_allow_private) if own else None
    return ProviderContext(store_inbox_message=_store_inbox_message, settings=settings,
                           egress=egress)


# workspace -> (expires at, its own provider setting, the generation it was read under)
_own_providers: dict[str, tuple[float, str | None, str | None]] = {}
OWN_PROVIDER_TTL = 5.0


def _own_provider(workspace_id: Any) -> str | None:
    """A workspace's own provider setting, kept while the workspace's generation holds: a
    change saved anywhere is used from the next delivery on (one Redis read here)."""
    key = str(workspace_id)
    scope = generations.workspace_scope(key)
    generations.refresh([scope])
    now = time.monotonic()
    hit = _own_providers.get(key)
    if hit is not None and hit[0] > now and generations.current(hit[2], scope):
        return hit[1]
    tag = generations.known(scope)
    row = Workspace.select(Workspace.email_provider).where(Workspace.id == workspace_id).first()
    value = row.email_provider if row else None
    if len(_own_providers) > 10000:
        _own_providers.clear()
    _own_providers[key] = (now + OWN_PROVIDER_TTL, value, tag)
    return value


def uses_own_provider(workspace_id: Any) -> bool:
    """True when the workspace sends email through its own provider (D9)."""
    return bool(_own_provider(workspace_id))


def _entries(channel: Channel, workspace_id: Any) -> tuple[list[ProviderEntry], bool]:
    """The providers to try in order: the workspace's own when the channel takes one (True),
    else the ones its setting names."""
    own_setting = _own_provider(workspace_id) if channel.own_provider else None
    if own_setting:
        return workspace_entries(own_setting), True
    if channel.provider_setting:
        return setting_entries(provider_url(runtime.settings(),
                                            channel.provider_setting)), False
    return [], False


def _opened(plugin: str | None, url: str, own: bool = False) -> Provider:
    key = (provider_scheme(url, plugin), url, own)
    with _lock:
        provider = _cache.get(key)
        if provider is None:
            try:
                provider = open_provider(url, _context(own), plugin)
            except (LookupError, ValueError) as err:
                raise PermanentError(str(err)) from None
            with contextlib.suppress(AttributeError):  # a plugin's object may refuse it
                provider.herald_scheme = key[0]  # named on each attempt (reports)
            try:
                rate = rate_of(url)
            except ValueError as err:
                raise PermanentError(str(err)) from None
            if rate is not None:  # rate=R: paced across every process (pacing.py)
                provider = PacedProvider(provider, pace_key(plugin, url), rate)
            _cache[key] = provider
    return provider


def provider_for(channel: Channel, workspace_id: Any) -> Provider:
    """The workspace's own provider when the channel takes one, else the one its setting
    names; cached per process and URL, so an SMTP connection is kept across notifications.
    A list of providers is tried in order (engine/delivery/failover.py)."""
    listed, own = _entries(channel, workspace_id)
    entries = [(plugin, url) for plugin, url in listed if url]
    if not entries:
        raise PermanentError(f"no {channel.name} provider is configured "
                             f"({channel.provider_setting})")
    if len(entries) == 1 and own:
        plugin, url = entries[0]
        return GatedProvider(_opened(plugin, url, own), breaker_key(plugin, url))
    if len(entries) == 1:
        return _opened(*entries[0], own)
    candidates = tuple(Candidate(label(plugin, url), _opened(plugin, url, own),
                                 breaker_key(plugin, url)) for plugin, url in entries)
    with _lock:
        failover = _failovers.get(candidates)
        if failover is None:
            failover = _failovers[candidates] = FailoverProvider(list(candidates))
    return failover


def sender_of(channel: Channel, notification: Any) -> Any:
    """Who sends a notification's messages: the engine's signed POST for the channel whose
    delivery is the engine's webhook, the channel itself when it sends its own
    (``needs_provider`` false: its ``send``), else the provider its setting or the
    workspace names (``provider_for``)."""
    if channel.delivery == "webhook":
        return SignedWebhookProvider(notification)
    if not channel.needs_provider:
        return channel
    return provider_for(channel, notification.workspace_id)


class GatedProvider:
    """A workspace's own provider behind the circuit breaker (engine/delivery/breaker.py),
    as each provider of a list already is.

    A dead or tarpit provider costs its timeout at every delivery, on the worker thread that
    every workspace shares: four sends of one workspace through a tarpit once held another's
    password reset for a minute (issue 37). After HERALD_PROVIDER_BREAKER_FAILURES transient
    failures in a row the provider is skipped without a connection (a transient outcome,
    retried when it may be probed), so one workspace's broken provider holds the others'
    mail for a few timeouts, not for as long as its sends keep coming.
    """

    def __init__(self, provider: Provider, key: str) -> None:
        self.provider = provider
        self.key = key
        self.herald_scheme = getattr(provider, "herald_scheme", None)
        self.channel = getattr(provider, "channel", None)
        self.max_concurrency = getattr(provider, "max_concurrency", 1)
        if hasattr(provider, "send_many"):
            self.send_many = self._send_many

    def _skipped(self, wait: float) -> TransientError:
        return TransientError("the workspace's provider is skipped while its circuit is open "
                              "(it failed several times in a row)", retry_after=wait,
                              reason="skipped: failing")

    def send(self, message: Any) -> Any:
        admission = breaker.admit(self.key)
        if not admission.allowed:
            raise self._skipped(admission.wait)
        try:
            result = self.provider.send(message)
        except (TransientError, OSError):
            breaker.failed(self.key)
            raise
        except Exception:  # it answered (a refusal): it is up
            breaker.succeeded(self.key, admission)
            raise
        breaker.succeeded(self.key, admission)
        return result

    def _send_many(self, messages: Any) -> Any:
        admission = breaker.admit(self.key)
        if not admission.allowed:
            for _ in messages:
                yield self._skipped(admission.wait)
            return
        answered = False
        for outcome in self.provider.send_many(messages):  # type: ignore[attr-defined]
            if isinstance(outcome, TransientError):
                breaker.failed(self.key)
            elif not answered:
                answered = True
                breaker.succeeded(self.key, admission)
            yield outcome


def close_all() -> None:
    """Close kept connections (worker shutdown, tests)."""
    with _lock:
        for provider in _cache.values():
            close = getattr(provider, "close", None)
            if close is not None:
                close()
        _cache.clear()
        _failovers.clear()
        _own_providers.clear()
