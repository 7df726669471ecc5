"""How the processes of `herald worker` log: the parent, the workers and the scheduler."""

from __future__ import annotations

import logging

LOG_FORMAT = "%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"


def configure_logging() -> None:
    """Every line says when, how bad, which process and which part."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
