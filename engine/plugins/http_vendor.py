"""The base of providers that call a vendor's HTTP API (django-anymail's ``base_requests``
shape): one session per provider, transport failures and HTTP statuses mapped onto the
outcome types. Postmark and Twilio are subclasses; so is a new HTTP provider.

``requests`` is imported on first use: a process that loads the plugins without sending
through an HTTP vendor (the API) does not pay for it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NoReturn

from engine.plugins.contracts import PermanentError, TransientError, parse_retry_after

if TYPE_CHECKING:
    import requests

TIMEOUT = 30.0


def session() -> requests.Session:
    import requests

    s = requests.Session()
    s.trust_env = False  # vendor calls never go through a proxy taken from the environment
    # ... but outbound TLS still honours REQUESTS_CA_BUNDLE (the operator contract).
    s.verify = os.environ.get("REQUESTS_CA_BUNDLE") or True
    return s


def raise_for_transport(err: Exception) -> NoReturn:
    raise TransientError(f"provider unreachable: {err.__class__.__name__}: {err}") from None


def raise_for_status(status: int, detail: str, retry_after: str | None) -> None:
    """408, 429 and 5xx are worth retrying; any other non-2xx will fail the same way again."""
    if status in (408, 429) or status >= 500:
        raise TransientError(f"provider answered {status}: {detail}", status_code=status,
                             retry_after=parse_retry_after(retry_after))
    raise PermanentError(f"provider answered {status}: {detail}", status_code=status)


class HttpVendorProvider:
    """A provider that POSTs to a vendor: a subclass parses its URL in ``__init__`` (then
    calls ``super().__init__()``), builds each request in ``send`` and calls ``post``, reads
    the vendor's per-recipient answer, and raises ``raise_for_status`` for the rest."""

    timeout = TIMEOUT

    def __init__(self) -> None:
        self.session = session()

    def post(self, url: str, **kwargs: Any) -> tuple[requests.Response, dict[str, Any]]:
        """POST, mapping transport failures to TransientError; the JSON body or {} alongside."""
        import requests

        try:
            response = self.session.post(url, timeout=self.timeout, **kwargs)
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
