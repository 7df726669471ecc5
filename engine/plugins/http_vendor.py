"""The base of providers that call a vendor's HTTP API (django-anymail's ``base_requests``
shape): one session per provider, transport failures and HTTP statuses mapped onto the
outcome types. Postmark and Twilio are subclasses; so is a new HTTP provider.

``requests`` is imported on first use: a process that loads the plugins without sending
through an HTTP vendor (the API) does not pay for it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NoReturn

from engine.plugins.contracts import (
    Egress,
    PermanentError,
    ProviderContext,
    TransientError,
    parse_retry_after,
)

if TYPE_CHECKING:
    import requests

TIMEOUT = 30.0
# Kept-alive connections to one vendor host per process: a worker has up to 32 deliveries
# in flight (herald worker --concurrency); one beyond these is opened and closed after use.
POOL_CONNECTIONS = 32


class _Exchange:
    """One POST's sockets, shut down if its deadline passes first."""

    def __init__(self) -> None:
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.overdue = False

    def watch(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self.lock:
            if self.overdue:
                raise TimeoutError("the provider's deadline passed")
            self.sockets.append(sock)

    def cut(self) -> None:
        """The deadline: a vendor that sends a byte now and then, which no per-read timeout
        ends, loses its connection and the message is tried again later."""
        with self.lock:
            self.overdue = True
            sockets = list(self.sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


_exchange: ContextVar[_Exchange | None] = ContextVar("http_vendor_exchange", default=None)


def _watched(connection_class: type) -> type:
    """``connection_class`` whose socket joins the current POST's exchange when the answer is
    read (a kept-alive connection's too)."""

    def getresponse(self: Any, *args: Any, **kwargs: Any) -> Any:
        exchange = _exchange.get()
        if exchange is not None:
            exchange.watch(self.sock)
        return connection_class.getresponse(self, *args, **kwargs)

    return type(f"Watched{connection_class.__name__}", (connection_class,),
                {"getresponse": getresponse})


def _adapter(plain: type, secure: type) -> Any:
    """A requests adapter keeping POOL_CONNECTIONS connections a host, of these classes."""
    from requests.adapters import HTTPAdapter
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    adapter = HTTPAdapter(max_retries=0, pool_maxsize=POOL_CONNECTIONS)
    adapter.poolmanager.pool_classes_by_scheme = {
        "http": type("WatchedHTTPPool", (HTTPConnectionPool,),
                     {"ConnectionCls": _watched(plain)}),
        "https": type("WatchedHTTPSPool", (HTTPSConnectionPool,),
                      {"ConnectionCls": _watched(secure)}),
    }
    return adapter


def session(egress: Egress | None = None) -> requests.Session:
    """A session that uses no proxy; with ``egress`` (a workspace's own provider) every
    connection it opens goes through the engine's destination rules, pinned."""
    import requests

    s = requests.Session()
    s.trust_env = False  # vendor calls never go through a proxy taken from the environment
    # ... but outbound TLS still honours REQUESTS_CA_BUNDLE (the operator contract).
    s.verify = os.environ.get("REQUESTS_CA_BUNDLE") or True
    if egress is not None:
        adapter = _pinned_adapter(egress)
    else:
        from urllib3.connection import HTTPConnection, HTTPSConnection

        adapter = _adapter(HTTPConnection, HTTPSConnection)
    s.mount("https://", adapter)
    s.mount("http://", adapter)
    return s


def _pinned_adapter(egress: Egress) -> Any:
    """A requests adapter whose connections' sockets come from ``egress.connect``: urllib3
    still sends SNI and checks the certificate for the host name, but connects only to an
    address the engine has just judged (no second DNS lookup in between)."""
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

    def _new_conn(self: HTTPConnection) -> Any:
        timeout = self.timeout if isinstance(self.timeout, (int, float)) else None
        try:
            return egress.connect(self._dns_host, self.port, timeout)
        except TimeoutError as err:
            raise ConnectTimeoutError(self, "connect timed out") from err
        except OSError as err:
            raise NewConnectionError(self, f"cannot connect: {err.__class__.__name__}") from err

    plain = type("PinnedHTTPConnection", (HTTPConnection,), {"_new_conn": _new_conn})
    secure = type("PinnedHTTPSConnection", (HTTPSConnection,), {"_new_conn": _new_conn})
    return _adapter(plain, secure)


def _reason(err: Exception) -> str:
    """A short fixed phrase for a transport failure (shown where the message may not be)."""
    import requests

    if isinstance(err, requests.exceptions.SSLError):
        return "TLS"
    if isinstance(err, requests.exceptions.Timeout):
        return "timed out"
    if isinstance(err, requests.exceptions.ConnectionError):
        return "connection refused"
    return "network error"


def raise_for_transport(err: Exception) -> NoReturn:
    raise TransientError(f"provider unreachable: {err.__class__.__name__}: {err}",
                         reason=_reason(err)) from None


def raise_for_status(status: int, detail: str, retry_after: str | None) -> None:
    """408, 429 and 5xx are worth retrying; any other non-2xx will fail the same way again."""
    if status in (408, 429) or status >= 500:
        raise TransientError(f"provider answered {status}: {detail}", status_code=status,
                             retry_after=parse_retry_after(retry_after),
                             reason=f"provider answered {status}")
    raise PermanentError(f"provider answered {status}: {detail}", status_code=status,
                         reason="authentication" if status in (401, 403)
                         else f"provider answered {status}")


class HttpVendorProvider:
    """A provider that POSTs to a vendor: a subclass parses its URL in ``__init__`` (then
    calls ``super().__init__()``), builds each request in ``send`` and calls ``post``, reads
    the vendor's per-recipient answer, and raises ``raise_for_status`` for the rest."""

    timeout = TIMEOUT

    def __init__(self, context: ProviderContext | None = None) -> None:
        """``context``: pass the one the factory was given, so that a workspace's own
        provider connects only where the engine allows (its ``egress``)."""
        self.egress = context.egress if context is not None else None
        self.session = session(self.egress)

    def post(self, url: str, **kwargs: Any) -> tuple[requests.Response, dict[str, Any]]:
        """POST, mapping transport failures to TransientError; the JSON body or {} alongside.
        A workspace's own provider's endpoint is judged first (spec 6.1: https:// on 443).
        No redirect is followed: one would carry the vendor's credentials (a token header,
        which requests keeps across hosts) to wherever it points, and that server's answer
        would read as the vendor's; a 3xx is the vendor's answer, a permanent error."""
        import requests

        if self.egress is not None:
            self.egress.check_url(url)
        # ``timeout`` bounds each read; the exchange as a whole gets it too (a deadline).
        exchange = _Exchange()
        token = _exchange.set(exchange)
        timer = threading.Timer(self.timeout, exchange.cut)
        timer.daemon = True
        timer.start()
        try:
            response = self.session.post(url, timeout=self.timeout, allow_redirects=False,
                                         **kwargs)
        except (requests.RequestException, OSError) as err:
            if exchange.overdue:
                raise TransientError(f"provider did not answer within {self.timeout:g} s",
                                     reason="timed out") from None
            raise_for_transport(err)
        finally:
            timer.cancel()
            _exchange.reset(token)
        if exchange.overdue:  # cut off mid-answer: what was read is no answer
            response.close()
            raise TransientError(f"provider did not answer within {self.timeout:g} s",
                                 reason="timed out")
        try:
            data = response.json()
        except ValueError:
            data = {}
        return response, data if isinstance(data, dict) else {}

    raise_for_status = staticmethod(raise_for_status)

    def close(self) -> None:
        self.session.close()
