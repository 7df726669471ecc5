"""How the processes of `herald worker` log: the parent, the workers and the scheduler."""

from __future__ import annotations

import logging

from engine.observability.log_format import TEXT_FORMAT as LOG_FORMAT
from engine.observability.log_format import configure_logging as _configure

__all__ = ["LOG_FORMAT", "configure_logging"]


class _NoJobSuccess(logging.Filter):
    """RQ calls every job that returns "successfully completed": a delivery job returns
    after recording a failure too. The delivery's own line says how it ended
    (engine/observability/deliveries.py), so RQ's is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: let the handler report it as logging does
            return True
        return not (message.startswith("Successfully completed") or "Job OK" in message)


def configure_logging(fmt: str | None = None) -> None:
    """Every line says when, how bad, which process and which part (HERALD_LOG_FORMAT)."""
    _configure(fmt)
    rq_log = logging.getLogger("rq.worker")
    if not any(isinstance(f, _NoJobSuccess) for f in rq_log.filters):
        rq_log.addFilter(_NoJobSuccess())
