"""Plugin loading: built-ins and third-party packages all come through `herald` entry points."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import pluggy

from engine.plugins import hookspecs
from engine.plugins.channel_contract import Channel
from engine.plugins.contracts import Egress, Provider, ProviderContext, ProviderFactory
from engine.plugins.event_contract import EventWebhook

ENTRY_POINT_GROUP = "herald"


@dataclass
class Registry:
    """What the loaded plugins registered: channels by name, provider factories by URL
    scheme, providers' event webhooks by the name in their URL."""

    manager: pluggy.PluginManager
    channels: dict[str, Channel] = field(default_factory=dict)
    providers: dict[str, ProviderFactory] = field(default_factory=dict)
    event_webhooks: dict[str, EventWebhook] = field(default_factory=dict)

    def channel(self, name: str) -> Channel:
        try:
            return self.channels[name]
        except KeyError:
            raise LookupError(f"no channel plugin named {name!r} is installed") from None

    def ordered_channels(self) -> list[Channel]:
        """Every channel, by name: the order their request options are checked in (so a
        request's errorCodes come in the same order whatever order plugins loaded in)."""
        return [self.channels[name] for name in sorted(self.channels)]

    def served_by(self, setting: str) -> Channel:
        """The channel whose messages the provider of that ``HERALD_*`` setting sends (the
        service's own mail: HERALD_EMAIL_PROVIDER's)."""
        for channel in self.ordered_channels():
            if channel.provider_setting == setting:
                return channel
        raise LookupError(f"no channel plugin is served by {setting}")

    def provider_factory(self, scheme: str) -> ProviderFactory:
        try:
            return self.providers[scheme]
        except KeyError:
            raise LookupError(f"no provider plugin handles {scheme}:// URLs") from None


def make_plugin_manager(load_entrypoints: bool = True,
                        extra: tuple[object, ...] = ()) -> pluggy.PluginManager:
    """A fresh manager (tests build their own); check_pending catches misspelt hooks."""
    manager = pluggy.PluginManager("herald")
    manager.add_hookspecs(hookspecs)
    if load_entrypoints:
        manager.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    for plugin in extra:
        manager.register(plugin)
    manager.check_pending()
    return manager


def build_registry(manager: pluggy.PluginManager) -> Registry:
    registry = Registry(manager)

    def register_channel(name: str, channel: Channel) -> None:
        registry.channels[name] = channel

    def register_provider(scheme: str, factory: ProviderFactory) -> None:
        registry.providers[scheme] = factory

    def register_event_webhook(name: str, receiver: EventWebhook) -> None:
        registry.event_webhooks[name] = receiver

    manager.hook.register_channels(register=register_channel)
    manager.hook.register_providers(register=register_provider)
    manager.hook.register_event_webhooks(register=register_event_webhook)
    return registry


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The process-wide registry, loaded once."""
    return build_registry(make_plugin_manager())


def provider_scheme(url: str, plugin: str | None = None) -> str:
    """What picks a provider's factory: a workspace's own ``plugin``, else the URL's scheme."""
    return plugin or urlsplit(url).scheme


def open_provider(url: str, context: ProviderContext, plugin: str | None = None) -> Provider:
    """Build the provider for ``url``; the one resolution sends and start-up checks share.

    Raises LookupError when no plugin takes the scheme, ValueError for a URL its plugin
    refuses (a factory parses its URL; it connects on the first send, never here).
    """
    return default_registry().provider_factory(provider_scheme(url, plugin))(url, context)


def _no_inbox(data: dict[str, Any]) -> None:
    raise RuntimeError("a provider built to check its URL sends nothing")


def provider_problem(url: str, plugin: str | None = None, settings: Any = None,
                     egress: Egress | None = None) -> str | None:
    """Why ``url`` (with a workspace's ``plugin``) cannot send, or None if it can.

    Checked where it is set (start-up, `herald apply`), so that a URL no plugin takes, or
    one its plugin refuses, is not accepted only for every send to fail on it. ``egress``:
    a workspace's own provider, built as it will be sent through.
    """
    try:
        provider = open_provider(url, ProviderContext(_no_inbox, settings, egress), plugin)
    except (LookupError, ValueError) as err:
        return str(err)
    close = getattr(provider, "close", None)
    if callable(close):
        close()
    return None


def check_providers(settings: Any) -> None:
    """Resolve each channel's provider URL (HERALD_EMAIL_PROVIDER, HERALD_SMS_PROVIDER, a
    plugin channel's own) as a send would, at start-up
    (every command, the app factory, each worker process): an unknown scheme, or a URL its
    plugin refuses, is a ConfigError naming the setting instead of every send failing on it.

    Here rather than in config/, which imports nothing of Herald's: the check needs the
    plugins."""
    from config.settings import ConfigError

    for channel in default_registry().ordered_channels():
        setting = channel.provider_setting if channel.needs_provider else None
        value = provider_url(settings, setting) if setting else ""
        for url in value.split():  # an ordered list: failover (engine/delivery/failover.py)
            if problem := provider_problem(url, settings=settings):
                raise ConfigError(setting, problem)


def provider_url(settings: Any, setting: str) -> str:
    """The URL a channel's provider setting holds: HERALD_EMAIL_PROVIDER and
    HERALD_SMS_PROVIDER are read (and checked) with the other settings; a plugin channel's
    own variable is read from the environment as it is."""
    attribute = setting.lower().removeprefix("herald_")
    if hasattr(settings, attribute):
        return getattr(settings, attribute) or ""
    return os.environ.get(setting, "")
