"""The webhook channel: one HTTPS POST, pinned to an address the engine has just checked.

Pinned: connecting to the checked IP (with SNI and certificate checks for the host name)
closes the DNS-rebinding gap between checking a name and connecting to it. The policy
(which addresses are allowed, signing, retry classes) is the engine's; this module only
speaks HTTP, as a channel should.
"""

from __future__ import annotations

import ipaddress
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

import certifi
import urllib3
from urllib3.exceptions import HTTPError, NewConnectionError, SSLError, TimeoutError

from engine.hookspecs import hookimpl

EXCERPT_BYTES = 4096
USER_AGENT = "Herald-Webhooks/1"
MAX_POOLS = 64
CONNECT_TIMEOUT = 5.0


@dataclass
class HttpAnswer:
    """What the receiver said, or why nothing was said (``failure``)."""

    status_code: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case
    excerpt: str = ""
    failure: str | None = None  # "timeout", "tls" or "network"
    detail: str | None = None


_pools: OrderedDict[tuple, urllib3.HTTPSConnectionPool] = OrderedDict()
_pools_lock = threading.Lock()


def _pool(host: str, address: str, port: int, verify: str | bool) -> urllib3.HTTPSConnectionPool:
    """Kept-alive connections per checked (host, address): TLS is set up once, not per attempt.

    urllib3 itself, not a requests Session: a session's cookies, hooks, environment proxies,
    netrc and redirects are all things a webhook must not have, and skipping them saves about
    0.4 ms an attempt. The pool connects to ``address`` while SNI and the certificate check
    use ``host``; keyed by the address too, so a host that now resolves elsewhere gets a new
    connection.
    """
    key = (host, address, port, verify)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is not None:
            _pools.move_to_end(key)
            return pool
        bundle = verify if isinstance(verify, str) else certifi.where()
        pool = urllib3.HTTPSConnectionPool(
            address, port, maxsize=4, block=False, retries=False,
            server_hostname=host, assert_hostname=host, cert_reqs="CERT_REQUIRED",
            ca_certs=None if os.path.isdir(bundle) else bundle,
            ca_cert_dir=bundle if os.path.isdir(bundle) else None)
        _pools[key] = pool
        if len(_pools) > MAX_POOLS:
            _, oldest = _pools.popitem(last=False)
            oldest.close()
        return pool


def _read_capped(response: urllib3.BaseHTTPResponse, deadline: float) -> tuple[bytes, bool]:
    """At most EXCERPT_BYTES of the body, and whether the body was read to its end."""
    data = b""
    while len(data) < EXCERPT_BYTES and time.monotonic() <= deadline:
        chunk = response.read(1024)
        if not chunk:
            return data, True
        data += chunk
    return data[:EXCERPT_BYTES], False


def post_pinned(host: str, address: str, port: int, target: str, body: bytes,
                headers: Mapping[str, str], *, timeout: float,
                verify: str | bool) -> HttpAnswer:
    """POST ``body`` to https://host:port/target over a connection to ``address``.

    Redirects are never followed; at most EXCERPT_BYTES of the answer are read.
    """
    ip = str(ipaddress.ip_address(address))
    host_header = host if port == 443 else f"{host}:{port}"
    pool = _pool(host, ip, port, verify)
    deadline = time.monotonic() + timeout
    try:
        response = pool.urlopen(
            "POST", target, body=body, headers={**headers, "Host": host_header},
            redirect=False, retries=False, preload_content=False, assert_same_host=False,
            timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT, read=timeout))
        complete = False
        try:
            excerpt, complete = _read_capped(response, deadline)
        finally:
            if not complete:
                response.close()  # bytes left unread: this connection cannot be reused
            response.release_conn()
        # Names lower-cased: header names are case-insensitive, and proxies speaking HTTP/2
        # to the receiver hand them on in lower case.
        headers = {name.lower(): value for name, value in response.headers.items()}
        return HttpAnswer(response.status, headers, excerpt.decode("utf-8", "replace"))
    except SSLError as err:
        return HttpAnswer(failure="tls", detail=err.__class__.__name__)
    except NewConnectionError as err:  # a subclass of TimeoutError, but a refusal
        return HttpAnswer(failure="network", detail=err.__class__.__name__)
    except TimeoutError:
        return HttpAnswer(failure="timeout")
    except (HTTPError, OSError) as err:
        return HttpAnswer(failure="network", detail=err.__class__.__name__)


class WebhookChannel:
    """Registered like any channel; it needs no provider (the receiver is the destination)."""

    name = "webhook"
    needs_provider = False


@hookimpl
def register_channels(register) -> None:
    register("webhook", WebhookChannel())
