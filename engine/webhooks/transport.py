"""A webhook attempt's HTTP: one HTTPS POST, pinned to an address the engine has just checked.

Pinned: connecting to the checked IP (with SNI and certificate checks for the host name)
closes the DNS-rebinding gap between checking a name and connecting to it. The engine owns
this, not the webhook channel: pinning, the whole-exchange deadline and the answer cap are
the same security policy as the destination check (engine/webhooks/destinations.py), and a
channel plugin must not be able to weaken them.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

import certifi
import urllib3
from urllib3.exceptions import HTTPError, NewConnectionError, SSLError
from urllib3.exceptions import TimeoutError as HttpTimeout
from urllib3.util.ssl_ import create_urllib3_context

EXCERPT_BYTES = 4096
ANSWER_BYTES = 64 * 1024  # status line, headers and excerpt: all of an answer ever read
MAX_POOLS = 64
# Kept-alive connections per destination: a worker has up to 32 deliveries in flight
# (herald worker --concurrency), and one more beyond these is opened and closed after use.
POOL_CONNECTIONS = 32
CONNECT_TIMEOUT = 5.0


@dataclass
class HttpAnswer:
    """What the receiver said, or why nothing was said (``failure``)."""

    status_code: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case
    excerpt: str = ""
    failure: str | None = None  # "timeout", "tls", "network" or "too_large"
    detail: str | None = None


@dataclass
class _Exchange:
    """One attempt's allowance: the moment it must be over, and the answer bytes left."""

    deadline: float
    unread: int = ANSWER_BYTES
    overrun: bool = False


_exchange: ContextVar[_Exchange | None] = ContextVar("webhook_exchange", default=None)


class AnswerTooLarge(OSError):
    """The answer went past ANSWER_BYTES before its status, headers and excerpt were read."""


class _DeadlineSocket(ssl.SSLSocket):
    """A TLS socket whose every blocking step gets only the time left to the attempt.

    A socket timeout bounds one recv or send, so a receiver that sends a byte every few
    seconds (in the handshake, the headers or the body) would never time out and would
    hold a worker's delivery slot for as long as it liked.
    """

    def _arm(self) -> _Exchange | None:
        exchange = _exchange.get()
        if exchange is not None:
            left = exchange.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the webhook attempt ran out of time")
            self.settimeout(left)
        return exchange

    def do_handshake(self, block: bool = False) -> None:
        self._arm()
        super().do_handshake(block)

    def read(self, nbytes: int = 1024, buffer=None):  # recv and recv_into both come here
        exchange = self._arm()
        if exchange is None:
            return super().read(nbytes, buffer)
        if exchange.unread <= 0:
            exchange.overrun = True
            raise AnswerTooLarge(f"answer over {ANSWER_BYTES} bytes")
        got = super().read(min(nbytes, exchange.unread), buffer)
        exchange.unread -= got if isinstance(got, int) else len(got)
        return got

    def send(self, data, flags: int = 0) -> int:
        self._arm()
        return super().send(data, flags)


@functools.lru_cache(maxsize=8)
def _tls_context(bundle: str) -> ssl.SSLContext:
    """One context per CA bundle, its certificates loaded once, making _DeadlineSockets."""
    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
    if os.path.isdir(bundle):
        context.load_verify_locations(capath=bundle)
    else:
        context.load_verify_locations(cafile=bundle)
    context.sslsocket_class = _DeadlineSocket
    return context


_pools: OrderedDict[tuple, urllib3.HTTPSConnectionPool] = OrderedDict()
_pools_lock = threading.Lock()


def _pool(host: str, address: str, port: int, verify: str | bool) -> urllib3.HTTPSConnectionPool:
    """Kept-alive connections per checked (host, address): TLS is set up once, not per attempt.

    urllib3 itself, not a requests Session: a session's cookies, hooks, environment proxies,
    netrc and redirects are all things a webhook must not have, and they cost time at every
    attempt (docs/performance.md, "Measurements behind the code's shape"). The pool
    connects to ``address`` while SNI and the certificate check
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
            address, port, maxsize=POOL_CONNECTIONS, block=False, retries=False,
            server_hostname=host, assert_hostname=host, cert_reqs="CERT_REQUIRED",
            ssl_context=_tls_context(bundle))
        _pools[key] = pool
        if len(_pools) > MAX_POOLS:
            _, oldest = _pools.popitem(last=False)
            oldest.close()
        return pool


def _read_capped(response: urllib3.BaseHTTPResponse) -> tuple[bytes, bool]:
    """At most EXCERPT_BYTES of the body, and whether the body was read to its end."""
    data = b""
    while len(data) < EXCERPT_BYTES:
        chunk = response.read(1024)
        if not chunk:
            return data, True
        data += chunk
    return data[:EXCERPT_BYTES], False


def post_pinned(host: str, address: str, port: int, target: str, body: bytes,
                headers: Mapping[str, str], *, timeout: float,
                verify: str | bool) -> HttpAnswer:
    """POST ``body`` to https://host:port/target over a connection to ``address``.

    ``timeout`` bounds the whole exchange: connect, TLS, request, status line, headers and
    excerpt. Redirects are never followed; at most ANSWER_BYTES of the answer are read.
    """
    ip = str(ipaddress.ip_address(address))
    host_header = host if port == 443 else f"{host}:{port}"
    pool = _pool(host, ip, port, verify)
    exchange = _Exchange(time.monotonic() + timeout)
    token = _exchange.set(exchange)
    try:
        response = pool.urlopen(
            "POST", target, body=body, headers={**headers, "Host": host_header},
            redirect=False, retries=False, preload_content=False, assert_same_host=False,
            timeout=urllib3.Timeout(connect=min(CONNECT_TIMEOUT, timeout), read=timeout))
        complete = False
        try:
            excerpt, complete = _read_capped(response)
        finally:
            if not complete:
                response.close()  # bytes left unread: this connection cannot be reused
            response.release_conn()
        # Names lower-cased: header names are case-insensitive, and proxies speaking HTTP/2
        # to the receiver hand them on in lower case.
        headers = {name.lower(): value for name, value in response.headers.items()}
        return HttpAnswer(response.status, headers, excerpt.decode("utf-8", "replace"))
    except (HTTPError, OSError) as err:
        return _failure(err, exchange)
    finally:
        _exchange.reset(token)


def _failure(err: Exception, exchange: _Exchange) -> HttpAnswer:
    """Why no answer came. urllib3 wraps a timeout while sending as a ProtocolError, so the
    clock decides as well as the exception type."""
    if exchange.overrun:
        return HttpAnswer(failure="too_large", detail=f"over {ANSWER_BYTES // 1024} KiB")
    if isinstance(err, SSLError):
        return HttpAnswer(failure="tls", detail=err.__class__.__name__)
    if isinstance(err, NewConnectionError):  # a subclass of TimeoutError, but a refusal
        return HttpAnswer(failure="network", detail=err.__class__.__name__)
    if isinstance(err, (HttpTimeout, TimeoutError)) or time.monotonic() >= exchange.deadline:
        return HttpAnswer(failure="timeout")
    return HttpAnswer(failure="network", detail=err.__class__.__name__)
