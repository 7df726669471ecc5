"""The base of providers that call a vendor's HTTP API (django-anymail's ``base_requests``
shape): one session per provider, transport failures and HTTP statuses mapped onto the
outcome types. Postmark and Twilio are subclasses; so is a new HTTP provider.

``requests`` is imported on first use: a process that loads the plugins without sending
through an HTTP vendor (the API) does not pay for it.
"""

from __future__ import annotations

import os
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
        from requests.adapters import HTTPAdapter

        adapter = HTTPAdapter(max_retries=0, pool_maxsize=POOL_CONNECTIONS)
    s.mount("https://", adapter)
    s.mount("http://", adapter)
    return s


def _pinned_adapter(egress: Egress) -> Any:
    """A requests adapter whose connections' sockets come from ``egress.connect``: urllib3
    still sends SNI and checks the certificate for the host name, but connects only to an
    address the engine has just judged (no second DNS lookup in between)."""
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
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
    adapter = HTTPAdapter(max_retries=0, pool_maxsize=POOL_CONNECTIONS)
    adapter.poolmanager.pool_classes_by_scheme = {
        "http": type("PinnedHTTPPool", (HTTPConnectionPool,), {"ConnectionCls": plain}),
        "https": type("PinnedHTTPSPool", (HTTPSConnectionPool,), {"ConnectionCls": secure}),
    }
    return adapter


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
        try:
            response = self.session.post(url, timeout=self.timeout, allow_redirects=False,
                                         **kwargs)
        except requests.RequestException as err:
            raise_for_transport(err)
        try:
            data = response.json()
        except ValueError:
            data = {}
        return response, data if isinstance(data, dict) else {}

    raise_for_status = staticmethod(raise_for_status)

    def close(self) -> None:
        self.session.close()
