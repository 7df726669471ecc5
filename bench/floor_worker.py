"""The floor for the delivery figures: an RQ SimpleWorker (our worker class) in burst mode."""

from __future__ import annotations

import os

from redis import Redis
from rq import SimpleWorker

if __name__ == "__main__":
    connection = Redis.from_url(os.environ["HERALD_REDIS_URL"])
    SimpleWorker(["bench-floor"], connection=connection).work(burst=True, logging_level="WARNING")
