"""The one way Herald asks DNS: the servers of HERALD_DNS_NAMESERVERS (else the system's),
every lookup bounded in time.

Sender checks and the webhook destination check both resolve through here, so an operator
(or a test) who points the setting at a server sees every question Herald asks.
"""

from __future__ import annotations

import threading
from types import ModuleType
from typing import TYPE_CHECKING

from engine import runtime

if TYPE_CHECKING:
    import dns.resolver

# A lookup's whole budget, retries included: a slow or silent server is "try again" after
# this, never a hang.
LOOKUP_SECONDS = 4.0

_cached: dict[tuple[tuple[str, int], ...], dns.resolver.Resolver] = {}
_lock = threading.Lock()
# dnspython (about 3 MiB of a process's memory) is imported by the first resolver built, not
# at start: most processes ask DNS nothing before a webhook or a sender check
# (docs/performance.md, "Memory at rest").
_dns: ModuleType | None = None


def dns_package() -> ModuleType:
    """The ``dns`` package with its resolver, exceptions and name servers, imported once."""
    global _dns
    if _dns is None:
        import dns.exception
        import dns.nameserver
        import dns.resolver

        _dns = dns
    return _dns


def _build(servers: tuple[tuple[str, int], ...]) -> dns.resolver.Resolver:
    dns = dns_package()
    if not servers:
        resolver = dns.resolver.Resolver()  # /etc/resolv.conf
    else:
        resolver = dns.resolver.Resolver(configure=False)
        resolver.nameservers = [dns.nameserver.Do53Nameserver(host, port)
                                for host, port in servers]
    resolver.timeout = 2.0  # per server and try; ``lifetime`` bounds the lookup
    resolver.lifetime = LOOKUP_SECONDS
    resolver.cache = None  # a check must see what DNS says now, not a minute ago
    return resolver


def resolver() -> dns.resolver.Resolver:
    """The process's resolver for the current settings (thread-safe to share: it is never
    changed once built)."""
    servers = runtime.settings().dns_nameservers
    with _lock:
        found = _cached.get(servers)
        if found is None:
            found = _cached[servers] = _build(servers)
    return found
