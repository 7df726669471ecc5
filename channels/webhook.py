"""One signed webhook attempt, pinned to the address that was just checked.

Pinned: connecting to the checked IP (with SNI and certificate checks for the host name)
closes the DNS-rebinding gap between checking a name and connecting to it.
"""

from __future__ import annotations

import ipaddress
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

import dns.resolver
import requests
from requests.adapters import HTTPAdapter

from engine.destinations import DestinationError, check_destination
from engine.hookspecs import hookimpl
from engine.retry import classify_status, parse_retry_after
from engine.signatures import sign

EXCERPT_BYTES = 4096
USER_AGENT = "Herald-Webhooks/1"


@dataclass
class AttemptResult:
    outcome: str  # delivered | transient | permanent
    status_code: int | None
    duration_ms: int
    response_excerpt: str
    error: str | None
    retry_after: float | None


class _PinnedAdapter(HTTPAdapter):
    """Connects to an IP literal while TLS speaks (SNI) and verifies the original host name."""

    def __init__(self, hostname: str) -> None:
        self.hostname = hostname
        super().__init__(max_retries=0)

    def init_poolmanager(self, connections, maxsize, block=False, **pool_kwargs):
        pool_kwargs["server_hostname"] = self.hostname
        pool_kwargs["assert_hostname"] = self.hostname
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)


def _read_capped(response: requests.Response, deadline: float) -> str:
    data = b""
    for chunk in response.iter_content(1024):
        data += chunk
        if len(data) >= EXCERPT_BYTES or time.monotonic() > deadline:
            break
    return data[:EXCERPT_BYTES].decode("utf-8", "replace")


def deliver_webhook(url: str, body: bytes, *, content_type: str,
                    custom_headers: Mapping[str, str] | None, secret: str, delivery_id: str,
                    allow_private: bool = False, timeout: float = 10.0,
                    resolver: dns.resolver.Resolver | None = None,
                    ca_bundle: str | None = None) -> AttemptResult:
    """One attempt: check the destination again, sign the exact bytes, POST, classify."""
    started = time.monotonic()

    def result(outcome: str, status: int | None = None, excerpt: str = "",
               error: str | None = None, retry_after: float | None = None) -> AttemptResult:
        elapsed = int((time.monotonic() - started) * 1000)
        return AttemptResult(outcome, status, elapsed, excerpt, error, retry_after)

    try:
        checked = check_destination(url, allow_private=allow_private, resolver=resolver)
    except DestinationError as err:
        return result("permanent", error=f"destination refused: {err}")
    address = ipaddress.ip_address(checked.addresses[0])
    literal = f"[{address}]" if address.version == 6 else str(address)
    pinned_url = f"https://{literal}:{checked.port}{checked.target}"
    timestamp = int(time.time())
    host_header = checked.host if checked.port == 443 else f"{checked.host}:{checked.port}"
    headers = {**(custom_headers or {}),
               "Host": host_header,
               "Content-Type": content_type,
               "User-Agent": USER_AGENT,
               "X-Service-Delivery-Id": delivery_id,
               "Idempotency-Key": delivery_id,
               "X-Service-Timestamp": str(timestamp),
               "X-Service-Signature": sign(secret, timestamp, delivery_id, body)}
    verify: str | bool = ca_bundle or os.environ.get("REQUESTS_CA_BUNDLE") or True
    session = _session(checked.host, str(address), checked.port, verify)
    try:
        with session.post(pinned_url, data=body, headers=headers, timeout=(5.0, timeout),
                          allow_redirects=False, stream=True, verify=verify) as response:
            excerpt = _read_capped(response, started + timeout)
            outcome = classify_status(response.status_code)
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            error = None
            if 300 <= response.status_code < 400:
                error = "redirects are never followed"
            elif outcome != "delivered":
                error = f"receiver answered {response.status_code}"
            return result(outcome, response.status_code, excerpt, error,
                          retry_after if outcome == "transient" else None)
    except requests.exceptions.SSLError as err:
        return result("transient", error=f"TLS failed: {err.__class__.__name__}")
    except requests.Timeout:
        return result("transient", error="timed out")
    except requests.RequestException as err:
        return result("transient", error=f"network failure: {err.__class__.__name__}")


_sessions: OrderedDict[tuple, requests.Session] = OrderedDict()
_sessions_lock = threading.Lock()
MAX_SESSIONS = 64


def _session(host: str, address: str, port: int, verify: str | bool) -> requests.Session:
    """A kept-alive session per checked (host, address): TLS is set up once, not per attempt.

    Keyed by the address too, so a host that now resolves elsewhere gets a new connection.
    """
    key = (host, address, port, verify)
    with _sessions_lock:
        session = _sessions.get(key)
        if session is not None:
            _sessions.move_to_end(key)
            return session
        session = requests.Session()
        session.trust_env = False  # no proxy, .netrc or CA bundle taken from the environment
        session.mount("https://", _PinnedAdapter(host))
        _sessions[key] = session
        if len(_sessions) > MAX_SESSIONS:
            _, oldest = _sessions.popitem(last=False)
            oldest.close()
        return session


class WebhookChannel:
    """Registered like any channel; it needs no provider (the receiver is the destination)."""

    name = "webhook"
    needs_provider = False


@hookimpl
def register_channels(register) -> None:
    register("webhook", WebhookChannel())
