"""Webhook destination policy (spec 6.1, docs/api.md): public https://host:443 only, judged
on every DNS answer.

An explicit deny list, not ``ipaddress.is_global`` alone (it is wrong for several ranges),
and the host must be read the same way by urllib.parse and by urllib3. With private
destinations allowed (HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS, development and test only)
loopback is reachable over https:// or http:// on any port, and nothing else is relaxed.

Every refusal names the rule it applies; with ``hint`` (outside production) a refusal the
setting would lift also names the setting, so a developer aiming at a local receiver is
told what to change.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from engine import dns_resolver

if TYPE_CHECKING:
    import dns.resolver

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

DENIED_V4 = [ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "255.255.255.255/32",
)]
DENIED_V6 = [ipaddress.ip_network(n) for n in (
    "::/128", "::1/128", "::ffff:0:0/96", "::/96", "64:ff9b::/96", "64:ff9b:1::/48",
    "100::/64", "2001::/32", "2001:db8::/32", "2001:10::/28", "2001:20::/28", "2002::/16",
    "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
)]
LOOPBACK = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")]
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x20\x7f\\]")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*"
                       r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


class DestinationError(ValueError):
    """The destination breaks spec 6.1 (docs/api.md); the message says which rule."""


RULE_HTTPS = "rule: https:// only"
RULE_PORT = "rule: port 443 only"
RULE_PUBLIC = "rule: public addresses only"
SETTING_HINT = ("; for a receiver on this machine in development, set "
                "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true (loopback over http:// or "
                "https://, any port)")


def _refused(message: str, rule: str, hint: bool = False) -> DestinationError:
    return DestinationError(f"{message} ({rule}, spec 6.1){SETTING_HINT if hint else ''}")


class DestinationUnavailable(DestinationError):
    """The name could not be resolved now (no answer in time, a failing DNS server): not a
    rule the destination breaks but a network failure, which an attempt retries (6.5)."""


class HostNotFound(DestinationError):
    """No A or AAAA record: refused for a webhook; a provider's host is judged again at
    each connection (engine/webhooks/provider_hosts.py)."""


@dataclass(frozen=True)
class CheckedDestination:
    url: str
    scheme: str
    host: str
    port: int
    target: str
    addresses: tuple[str, ...]


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address inside mapped, compatible, NAT64, 6to4 and Teredo forms."""
    if address.ipv4_mapped:
        return address.ipv4_mapped
    packed = int(address)
    if address in ipaddress.ip_network("::/96") and packed > 1:
        return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    if address in ipaddress.ip_network("64:ff9b::/96"):
        return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    if address.sixtofour:
        return address.sixtofour
    if address.teredo:
        return address.teredo[1]
    return None


def is_forbidden_address(address: str | IPAddress, allow_loopback: bool = False) -> bool:
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if allow_loopback and any(ip in net for net in LOOPBACK):
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_v4(ip)
        if inner is not None and is_forbidden_address(inner, allow_loopback):
            return True
        if ip.scope_id:
            return True
        return any(ip in net for net in DENIED_V6) or not ip.is_global
    return any(ip in net for net in DENIED_V4) or not ip.is_global


def _literal_ip(host: str) -> IPAddress | None:
    """IP literals in any notation: dotted, decimal, octal, hex, short forms, bracketed v6."""
    text = host.strip("[]")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if ":" in text:
        return None
    try:
        # inet_aton reads 0x7f.1, 017700000001, 2130706433 and 127.1 as the C library does.
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


@functools.cache
def _urllib3_parse_url() -> Callable[[str], Any]:
    """urllib3's URL parser, imported by the first URL read (then kept per URL, _read): a
    process that checks no URL does not hold urllib3 (docs/performance.md, "Memory at
    rest")."""
    from urllib3.util import parse_url

    return parse_url


def _parse(url: str) -> tuple[str, str, int, str]:
    """Scheme (https or http), host, port and target; the syntax rules, whatever the mode."""
    if not isinstance(url, str) or not url or len(url) > 2048:
        raise _refused("the destination must be an absolute https:// URL", RULE_HTTPS)
    if _FORBIDDEN_CHARS.search(url) or not url.isascii():
        raise DestinationError("whitespace, backslashes, control and non-ASCII characters "
                               "are not allowed in the URL (rule: a plain ASCII URL)")
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        port = parts.port if parts.port is not None else (80 if scheme == "http" else 443)
    except ValueError:
        raise DestinationError("the URL cannot be parsed") from None
    if scheme not in ("https", "http"):
        raise _refused("only https:// destinations are allowed", RULE_HTTPS)
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        raise DestinationError("credentials in the URL are not allowed (rule: no userinfo)")
    if not host:
        raise DestinationError("the URL has no host")
    if not 0 < port < 65536:
        raise DestinationError("the port is not valid")
    try:
        other = _urllib3_parse_url()(url)
    except ValueError:
        raise DestinationError("the URL cannot be parsed") from None
    other_port = other.port if other.port is not None else port
    if (other.host or "").lower().strip("[]") != host.strip("[]") or other_port != port:
        raise DestinationError("the URL is ambiguous (parsers disagree on its host)")
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return scheme, host, port, target


def _resolve(host: str, resolver: dns.resolver.Resolver | None, timeout: float) -> list[str]:
    resolver = resolver or dns_resolver.resolver()  # HERALD_DNS_NAMESERVERS
    dns = dns_resolver.dns_package()
    answers: list[str] = []
    for rdtype in ("A", "AAAA"):
        try:
            answer = resolver.resolve(host, rdtype, lifetime=timeout, search=False)
        except (dns.resolver.NoAnswer, dns.resolver.NXDOMAIN):
            continue
        except (dns.exception.DNSException, OSError) as err:
            raise DestinationUnavailable(
                f"the host could not be resolved ({err.__class__.__name__})") from None
        answers.extend(r.address for r in answer)
    if not answers:
        raise HostNotFound("the host does not resolve")
    return answers


@functools.lru_cache(maxsize=1024)
def _read(url: str) -> tuple[str, str, int, str, tuple[str, ...] | None]:
    """Scheme, host, port and target of ``url``, and its addresses when the URL itself gives
    them (an IP literal, or localhost); None: the name must be resolved.

    A function of the URL alone, so read once per process (every attempt of a webhook reads
    the same URL); the resolution and the judging of its answers are never cached.
    """
    scheme, host, port, target = _parse(url)
    literal = _literal_ip(host)
    if literal is not None:
        return scheme, host, port, target, (str(literal),)
    if host == "localhost":  # never asked of DNS: it is this machine, judged as such
        return scheme, host, port, target, ("127.0.0.1",)
    if not _HOSTNAME.match(host.rstrip(".")) or "." not in host.rstrip("."):
        raise DestinationError("the host is not a valid public host name "
                               f"({RULE_PUBLIC}, spec 6.1)")
    return scheme, host, port, target, None


def _is_loopback(address: str) -> bool:
    return any(ipaddress.ip_address(address) in net for net in LOOPBACK)


def check_destination(url: str, *, allow_private: bool = False,
                      resolver: dns.resolver.Resolver | None = None,
                      timeout: float = 3.0, hint: bool = False) -> CheckedDestination:
    """Syntax, then every A/AAAA answer judged; the addresses returned are the ones to use.

    ``hint``: name HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS in a refusal it would lift
    (outside production only: the setting is refused there).
    """
    if not isinstance(url, str):
        raise _refused("the destination must be an absolute https:// URL", RULE_HTTPS)
    scheme, host, port, target, given = _read(url)
    relaxable = hint and not allow_private
    if not allow_private:  # decided before any DNS query
        if scheme != "https":
            raise _refused("only https:// destinations are allowed", RULE_HTTPS, relaxable)
        if port != 443:
            raise _refused("only port 443 is allowed", RULE_PORT, relaxable)
    addresses = list(given) if given is not None else _resolve(host, resolver, timeout)
    for address in addresses:
        if is_forbidden_address(address, allow_loopback=allow_private):
            raise _refused(f"the host resolves to a non-public address ({address})",
                           RULE_PUBLIC, relaxable and _is_loopback(address))
    if (scheme != "https" or port != 443) and not all(_is_loopback(a) for a in addresses):
        rule = RULE_HTTPS if scheme != "https" else RULE_PORT
        raise _refused(f"{'http://' if scheme != 'https' else f'port {port}'} is allowed only "
                       "to loopback addresses, with private destinations allowed", rule)
    return CheckedDestination(url, scheme, host, port, target, tuple(addresses))
