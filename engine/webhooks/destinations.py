"""Webhook destination policy (spec 6.1, docs/api.md): public https://host:443 only, judged
on every DNS answer.

An explicit deny list, not ``ipaddress.is_global`` alone (it is wrong for several ranges),
and the host must be read the same way by urllib.parse and by urllib3.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import dns.exception
import dns.resolver
import urllib3.util

from engine import dns_resolver

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


class DestinationUnavailable(DestinationError):
    """The name could not be resolved now (no answer in time, a failing DNS server): not a
    rule the destination breaks but a network failure, which an attempt retries (6.5)."""


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


def _parse(url: str, allow_private: bool) -> tuple[str, str, int, str]:
    if not isinstance(url, str) or not url or len(url) > 2048:
        raise DestinationError("the destination must be an absolute https:// URL")
    if _FORBIDDEN_CHARS.search(url) or not url.isascii():
        raise DestinationError("whitespace, backslashes, control and non-ASCII characters "
                               "are not allowed in the URL")
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port if parts.port is not None else 443
    except ValueError:
        raise DestinationError("the URL cannot be parsed") from None
    if parts.scheme.lower() != "https":
        raise DestinationError("only https:// destinations are allowed")
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        raise DestinationError("credentials in the URL are not allowed")
    if not host:
        raise DestinationError("the URL has no host")
    if not 0 < port < 65536:
        raise DestinationError("the port is not valid")
    try:
        other = urllib3.util.parse_url(url)
    except ValueError:
        raise DestinationError("the URL cannot be parsed") from None
    other_port = other.port if other.port is not None else 443
    if (other.host or "").lower().strip("[]") != host.strip("[]") or other_port != port:
        raise DestinationError("the URL is ambiguous (parsers disagree on its host)")
    if port != 443 and not allow_private:
        raise DestinationError("only port 443 is allowed")
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return parts.scheme.lower(), host, port, target


def _resolve(host: str, resolver: dns.resolver.Resolver | None, timeout: float) -> list[str]:
    resolver = resolver or dns_resolver.resolver()  # HERALD_DNS_NAMESERVERS
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
        raise DestinationError("the host does not resolve")
    return answers


@functools.lru_cache(maxsize=1024)
def _read(url: str, allow_private: bool) -> tuple[str, str, int, str, tuple[str, ...] | None]:
    """Scheme, host, port and target of ``url``, and its addresses when the URL itself gives
    them (an IP literal, or localhost where allowed); None: the name must be resolved.

    A function of the URL alone, so read once per process (every attempt of a webhook reads
    the same URL); the resolution and the judging of its answers are never cached.
    """
    scheme, host, port, target = _parse(url, allow_private)
    literal = _literal_ip(host)
    if literal is not None:
        return scheme, host, port, target, (str(literal),)
    if host == "localhost" and allow_private:
        return scheme, host, port, target, ("127.0.0.1",)
    if not _HOSTNAME.match(host.rstrip(".")) or "." not in host.rstrip("."):
        raise DestinationError("the host is not a valid public host name")
    return scheme, host, port, target, None


def check_destination(url: str, *, allow_private: bool = False,
                      resolver: dns.resolver.Resolver | None = None,
                      timeout: float = 3.0) -> CheckedDestination:
    """Syntax, then every A/AAAA answer judged; the addresses returned are the ones to use."""
    if not isinstance(url, str):
        raise DestinationError("the destination must be an absolute https:// URL")
    scheme, host, port, target, given = _read(url, bool(allow_private))
    addresses = list(given) if given is not None else _resolve(host, resolver, timeout)
    for address in addresses:
        if is_forbidden_address(address, allow_loopback=allow_private):
            raise DestinationError(f"the host resolves to a non-public address ({address})")
    if allow_private and port != 443 and not all(
            any(ipaddress.ip_address(a) in net for net in LOOPBACK) for a in addresses):
        raise DestinationError("only port 443 is allowed")
    return CheckedDestination(url, scheme, host, port, target, tuple(addresses))
