"""The floor for the delivery figures: the worker class and configuration of `herald worker`
(its HeraldWorker, RQ's SimpleWorker handing delivery jobs to a delivery thread; the scheduler on,
per-job INFO logging), in burst mode, on no-op jobs."""

from __future__ import annotations

import logging
import os

from redis import Redis

from engine.worker.worker_class import HeraldWorker

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    connection = Redis.from_url(os.environ["HERALD_REDIS_URL"], health_check_interval=30)
    HeraldWorker(["bench-floor"], connection=connection).work(
        burst=True, with_scheduler=True, logging_level="INFO")
