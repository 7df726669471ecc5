"""/metrics: the Prometheus text of every process of a `herald serve` or `herald worker`.

Each process counts into its own file in a metrics directory (prometheus-client's
multiprocess mode); /metrics sums them, so whichever gunicorn worker answers a scrape
reports the whole server. The directory is PROMETHEUS_MULTIPROC_DIR when the operator sets
it (emptied at start: counts of an earlier run would be summed in), else a fresh one the
process makes. Outside those commands (tests, wsgi.py without it) one process's registry.
Served only with ``Authorization: Bearer $HERALD_METRICS_TOKEN``: 404 without the setting,
401 with a missing or wrong token.
"""

from __future__ import annotations

import atexit
import glob
import hmac
import os
import shutil
import tempfile
from typing import Any

from engine.observability.queue_gauges import QueueCollector

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"


def prepare_directory() -> str:
    """Choose and empty the metrics directory before any process counts (the parent's
    start-up); its children inherit it through the environment."""
    chosen = os.environ.get(MULTIPROC_DIR)
    if chosen:
        os.makedirs(chosen, exist_ok=True)
        for stale in glob.glob(os.path.join(chosen, "*.db")):
            os.remove(stale)
        return chosen
    made = tempfile.mkdtemp(prefix="herald-metrics-")
    owner = os.getpid()
    # Removed by the process that made it, never by a child that exits first.
    atexit.register(lambda: os.getpid() == owner and shutil.rmtree(made, ignore_errors=True))
    os.environ[MULTIPROC_DIR] = made
    return made


def process_ended(pid: int) -> None:
    """A child process ended: its live gauges stop counting (gunicorn's child_exit)."""
    if os.environ.get(MULTIPROC_DIR):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)


_single: Any = None


def registry() -> Any:
    """The registry a scrape reads: every process's files summed, and the live gauges."""
    global _single
    from prometheus_client import REGISTRY, CollectorRegistry, multiprocess

    if os.environ.get(MULTIPROC_DIR):
        scraped = CollectorRegistry(auto_describe=False)
        multiprocess.MultiProcessCollector(scraped)
        scraped.register(QueueCollector())
        return scraped
    if _single is None:
        REGISTRY.register(QueueCollector())
        _single = REGISTRY
    return _single


def refused(authorization: str | None, token: str | None) -> int | None:
    """404 when metrics are off (no token set), 401 for a missing or wrong bearer token,
    None to serve them."""
    if not token:
        return 404
    given = (authorization or "").encode()
    if not hmac.compare_digest(given, f"Bearer {token}".encode()):
        return 401
    return None


def exposition() -> tuple[bytes, str]:
    """The Prometheus text of :func:`registry`, and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(registry()), CONTENT_TYPE_LATEST
