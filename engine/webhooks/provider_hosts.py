"""Where a workspace's own email provider may connect: spec 6.1's address rules, as for
webhooks, under the same setting (HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS).

A workspace's Admin types the provider URL, so its host is the Admin's to choose: without
this, ``smtp://127.0.0.1:6379`` or a vendor's ``scheme`` aimed at 169.254.169.254 would make
Herald a port scanner and a proxy into the operator's network. Every connection is judged
where it is made (each A/AAAA answer must be a public address) and made to the address
judged, so a name that resolves elsewhere a moment later (DNS rebinding) gains nothing. The
operator's own HERALD_*_PROVIDER settings never come here: they are trusted.

An SMTP host may use any port (587, 465, 25 are all ordinary); an HTTP vendor's endpoint
obeys spec 6.1 whole (https:// on port 443), since it is a URL like a webhook's.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from engine.plugins.contracts import DestinationRefused, DestinationUnreachable
from engine.webhooks.destinations import (
    DestinationError,
    DestinationUnavailable,
    HostNotFound,
    check_destination,
)

if TYPE_CHECKING:
    import dns.resolver

RESOLVE_SECONDS = 3.0
CONNECTS_NOWHERE = {"inbox"}  # the dev inbox keeps mail in a table: its URL names no host


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class ProviderEgress:
    """The Egress (engine/plugins/contracts.py) a workspace's own provider is given."""

    def __init__(self, allow_private: bool,
                 resolver: dns.resolver.Resolver | None = None) -> None:
        self.allow_private = allow_private
        self.resolver = resolver

    def addresses(self, host: str) -> tuple[str, ...]:
        """Every address ``host`` resolves to, each one allowed; raises DestinationRefused
        or DestinationUnreachable."""
        # Judged as the host of https://host/ : the address rules alone, whatever the port.
        try:
            checked = check_destination(f"https://{_bracketed(host)}/",
                                        allow_private=self.allow_private,
                                        resolver=self.resolver, timeout=RESOLVE_SECONDS)
        except (DestinationUnavailable, HostNotFound) as err:
            raise DestinationUnreachable(str(err)) from None
        except DestinationError as err:
            raise DestinationRefused(f"provider host refused: {err}") from None
        return checked.addresses

    def connect(self, host: str, port: int, timeout: float | None) -> socket.socket:
        """Connect to the first allowed address of ``host`` that answers (pinned)."""
        last: OSError | None = None
        for address in self.addresses(host):
            try:
                return socket.create_connection((address, port), timeout=timeout)
            except OSError as err:
                last = err
        assert last is not None  # addresses() never returns an empty tuple
        raise last

    def check_url(self, url: str) -> None:
        try:
            check_destination(url, allow_private=self.allow_private, resolver=self.resolver,
                              timeout=RESOLVE_SECONDS)
        except (DestinationUnavailable, HostNotFound) as err:
            raise DestinationUnreachable(str(err)) from None
        except DestinationError as err:
            raise DestinationRefused(f"provider endpoint refused: {err}") from None


def host_problem(url: str, egress: ProviderEgress) -> str | None:
    """Why the host a provider URL names is refused, or None (where the URL is set: the
    web page and `herald apply`). A name that cannot be resolved now is not refused here:
    it is judged again at every connection."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return "the URL cannot be parsed"
    if not host:
        return None
    try:
        egress.addresses(host)
    except DestinationUnreachable:
        return None
    except DestinationRefused as err:
        return str(err)
    return None


def own_provider_problem(url: str, plugin: str | None, settings: Any) -> str | None:
    """Why a workspace's own provider URL cannot be saved, or None: its plugin refuses it
    (built with the egress it will send through), or its host breaks the rules."""
    from engine.plugins.manager import provider_problem, provider_scheme

    egress = ProviderEgress(bool(getattr(settings, "webhook_allow_private", False)))
    if problem := provider_problem(url, plugin, settings, egress):
        return problem
    if provider_scheme(url, plugin).strip().lower() in CONNECTS_NOWHERE:
        return None
    return host_problem(url, egress)
