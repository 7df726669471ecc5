"""One webhook attempt: check the destination again, sign, POST pinned, classify the answer.

Recording it and scheduling the next is the delivery's (engine/delivery/webhook_sending.py)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from engine.database.vocabulary import Outcome
from engine.plugins.contracts import parse_retry_after
from engine.webhooks.destinations import DestinationError, DestinationUnavailable, check_destination
from engine.webhooks.headers import unsendable_headers
from engine.webhooks.signatures import V2_HEADER, sign, sign_v2

if TYPE_CHECKING:
    import dns.resolver

USER_AGENT = "Herald-Webhooks/1"
FAILURES = {"timeout": "timed out", "tls": "TLS failed", "network": "network failure",
            "too_large": "answer too large"}


def classify_status(status: int) -> Outcome:
    """A receiver's answer as an outcome (spec 6.5, docs/api.md): 2xx delivered; 408, 429
    and 5xx worth another attempt; anything else (redirects included) fails the same way
    again."""
    if 200 <= status < 300:
        return Outcome.DELIVERED
    if status in (408, 429) or status >= 500:
        return Outcome.TRANSIENT
    return Outcome.PERMANENT


@dataclass
class AttemptResult:
    outcome: Outcome  # delivered, transient or permanent
    status_code: int | None
    duration_ms: int
    response_excerpt: str
    error: str | None
    retry_after: float | None


@cache
def _transports() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """(post_plain, post_pinned), imported by the first webhook posted, not at start: the
    https transport brings urllib3 and certifi, about 1 MiB of a process's memory that an
    API worker or a worker delivering email never uses (docs/performance.md, "Memory at
    rest")."""
    from engine.webhooks.plain_transport import post_plain
    from engine.webhooks.transport import post_pinned

    return post_plain, post_pinned


def deliver_webhook(url: str, body: bytes, *, content_type: str,
                    custom_headers: Mapping[str, str] | None, secret: str, delivery_id: str,
                    allow_private: bool = False, timeout: float = 10.0,
                    resolver: dns.resolver.Resolver | None = None,
                    ca_bundle: str | None = None, hint: bool = False) -> AttemptResult:
    """One attempt; the destination is resolved and judged again, never trusted from send."""
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    if unsendable := unsendable_headers(custom_headers or {}):
        names = ", ".join(repr(name) for name in unsendable)
        return AttemptResult(Outcome.PERMANENT, None, elapsed(), "",
                             f"custom headers cannot be sent: {names}", None)
    try:
        checked = check_destination(url, allow_private=allow_private, resolver=resolver,
                                    hint=hint)
    except DestinationUnavailable as err:  # DNS down or slow: retried like a network failure
        return AttemptResult(Outcome.TRANSIENT, None, elapsed(), "",
                             f"{FAILURES['network']}: {err}", None)
    except DestinationError as err:
        return AttemptResult(Outcome.PERMANENT, None, elapsed(), "", f"destination refused: {err}",
                             None)
    timestamp = int(time.time())
    headers = {**(custom_headers or {}),
               "Content-Type": content_type,
               "User-Agent": USER_AGENT,
               "X-Service-Delivery-Id": delivery_id,
               "Idempotency-Key": delivery_id,
               "X-Service-Timestamp": str(timestamp),
               "X-Service-Signature": sign(secret, timestamp, delivery_id, body),
               V2_HEADER: sign_v2(secret, timestamp, delivery_id, url, body)}
    # Outbound TLS honours REQUESTS_CA_BUNDLE explicitly: the session ignores the environment.
    verify: str | bool = ca_bundle or os.environ.get("REQUESTS_CA_BUNDLE") or True
    post_plain, post_pinned = _transports()
    if checked.scheme == "http":  # loopback only, with private destinations allowed
        answer = post_plain(checked.host, checked.addresses[0], checked.port, checked.target,
                            body, headers, timeout=timeout)
    else:
        answer = post_pinned(checked.host, checked.addresses[0], checked.port,
                             checked.target, body, headers, timeout=timeout, verify=verify)
    if answer.status_code is None:
        error = FAILURES[answer.failure or "network"]
        detail = f"{error}: {answer.detail}" if answer.detail else error
        return AttemptResult(Outcome.TRANSIENT, None, elapsed(), "", detail, None)
    outcome = classify_status(answer.status_code)
    error = None
    if 300 <= answer.status_code < 400:
        error = "redirects are never followed"
    elif outcome != Outcome.DELIVERED:
        error = f"receiver answered {answer.status_code}"
    retry_after = parse_retry_after(answer.headers.get("retry-after"))
    return AttemptResult(outcome, answer.status_code, elapsed(), answer.excerpt, error,
                         retry_after if outcome == Outcome.TRANSIENT else None)
