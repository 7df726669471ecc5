"""What the HTTP vendor providers share: one session per provider, status to outcome."""

from __future__ import annotations

import os
from typing import Any, NoReturn

import requests

from engine.plugins.contracts import PermanentError, TransientError, parse_retry_after


def session() -> requests.Session:
    s = requests.Session()
    s.trust_env = False  # vendor calls never go through a proxy taken from the environment
    # ... but outbound TLS still honours REQUESTS_CA_BUNDLE (the operator contract).
    s.verify = os.environ.get("REQUESTS_CA_BUNDLE") or True
    return s


def post(session: requests.Session, url: str, **kwargs: Any) -> tuple[requests.Response, dict]:
    """POST, mapping transport failures to TransientError; the JSON body or {} alongside."""
    try:
        response = session.post(url, timeout=30, **kwargs)
    except requests.RequestException as err:
        raise_for_transport(err)
    try:
        data = response.json()
    except ValueError:
        data = {}
    return response, data if isinstance(data, dict) else {}


def raise_for_transport(err: requests.RequestException) -> NoReturn:
    raise TransientError(f"provider unreachable: {err.__class__.__name__}: {err}") from None


def raise_for_status(status: int, detail: str, retry_after: str | None) -> None:
    """408, 429 and 5xx are worth retrying; any other non-2xx will fail the same way again."""
    if status in (408, 429) or status >= 500:
        raise TransientError(f"provider answered {status}: {detail}", status_code=status,
                             retry_after=parse_retry_after(retry_after))
    raise PermanentError(f"provider answered {status}: {detail}", status_code=status)
