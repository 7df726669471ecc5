"""Herald's own metrics (docs/operations.md lists each): counted where the event happens.

Made on first use, not at import: under `herald serve` and `herald worker` the metrics
directory (PROMETHEUS_MULTIPROC_DIR, engine/observability/metrics_registry.py) is chosen at
start-up, and every process counts into its own file there, which /metrics then sums.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

# Seconds: a render is milliseconds; a send is a provider's round trip, up to its timeout.
RENDER_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
SEND_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@dataclass(frozen=True)
class _Metrics:
    accepted: Any
    deliveries: Any
    retries: Any
    suppressions: Any
    send_seconds: Any
    render_seconds: Any


_made: _Metrics | None = None
_lock = threading.Lock()


def _metrics() -> _Metrics:
    global _made
    if _made is None:
        with _lock:
            if _made is None:
                _made = _make()
    return _made


def _make() -> _Metrics:
    from prometheus_client import Counter, Histogram, values

    # The value class is chosen when prometheus_client is imported: choose again, so a
    # metrics directory set after that import is still honoured.
    values.ValueClass = values.get_value_class()
    return _Metrics(
        accepted=Counter("herald_notifications_accepted", "Sends accepted (202) by channel.",
                         ["channel"]),
        deliveries=Counter("herald_deliveries", "Delivery attempts by channel, provider and "
                           "outcome (delivered, retry, failed, suppressed).",
                           ["channel", "provider", "outcome"]),
        retries=Counter("herald_retries", "Attempts that ended in a retry being scheduled.",
                        ["channel"]),
        suppressions=Counter("herald_suppressions", "Recipients left out of a delivery "
                             "because they are suppressed.", ["channel"]),
        send_seconds=Histogram("herald_send_seconds", "Time a provider took to send one "
                               "message (or one webhook POST).", ["channel", "provider"],
                               buckets=SEND_BUCKETS),
        render_seconds=Histogram("herald_render_seconds", "Time to render and build a "
                                 "notification's payload on the request path.", ["channel"],
                                 buckets=RENDER_BUCKETS),
    )


# The labelled children of the two metrics every send counts, by channel: prometheus_client's
# labels() validates and joins the label values and takes a lock at every call.
_accepted: dict[str, Any] = {}
_rendered: dict[str, Any] = {}


def accepted(channel: str) -> None:
    child = _accepted.get(channel)
    if child is None:
        child = _accepted[channel] = _metrics().accepted.labels(channel)
    child.inc()


def rendered(channel: str, seconds: float) -> None:
    child = _rendered.get(channel)
    if child is None:
        child = _rendered[channel] = _metrics().render_seconds.labels(channel)
    child.observe(seconds)


def delivery(channel: str, provider: str, outcome: str, send_seconds: list[float],
             suppressed: int) -> None:
    """One attempt's outcome, the time each of its messages took, its suppressed recipients."""
    made = _metrics()
    made.deliveries.labels(channel, provider, outcome).inc()
    if outcome == "retry":
        made.retries.labels(channel).inc()
    if suppressed:
        made.suppressions.labels(channel).inc(suppressed)
    histogram = made.send_seconds.labels(channel, provider)
    for seconds in send_seconds:
        histogram.observe(seconds)
