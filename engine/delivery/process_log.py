"""How the processes of `herald worker` log: the parent, the workers and the scheduler."""

from __future__ import annotations

from engine.observability.log_format import TEXT_FORMAT as LOG_FORMAT
from engine.observability.log_format import configure_logging as _configure

__all__ = ["LOG_FORMAT", "configure_logging"]


def configure_logging(fmt: str | None = None) -> None:
    """Every line says when, how bad, which process and which part (HERALD_LOG_FORMAT)."""
    _configure(fmt)
