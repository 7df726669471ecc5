"""The hourly recheck, run by every worker beside the reconciler (one pass at a time).

Each pending or verified domain with records is looked up again once its last check is an
hour old; pending requests past their 7 days expire. Failed and expired domains wait for
`Check now` (or a new request): nothing about them changes by itself.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading

from engine import runtime
from engine.database.db import database
from engine.database.models import Sender, utcnow
from engine.senders.domains import check_domain
from engine.senders.errors import SenderError

log = logging.getLogger("herald.senders")
EVERY = dt.timedelta(hours=1)
LOCK_KEY = "herald:senders:recheck"
PASS_SECONDS = 60.0  # how often a worker looks for due domains
BATCH = 100


def recheck_due(now: dt.datetime | None = None, batch: int = BATCH) -> dict[str, int]:
    """One pass: expire what ran out, check what is due; counts of each."""
    now = now or utcnow()
    database.connect(reuse_if_open=True)
    expired = (Sender.update(status="expired", verified=False)
               .where(Sender.kind == "domain", Sender.status == "pending",
                      Sender.expires_at <= now).execute())
    due = (Sender.select()
           .where(Sender.kind == "domain", Sender.status.in_(("pending", "verified")),
                  Sender.dkim_keys.is_null(False),  # records issued, not only declared
                  Sender.checked_at.is_null() | (Sender.checked_at <= now - EVERY))
           .order_by(Sender.checked_at.asc(nulls="first")).limit(batch))
    checked = 0
    for sender in list(due):
        try:
            check_domain(sender, now)
        except SenderError as err:
            log.info("recheck of %s: %s", sender.value, err)
        except Exception:  # one domain's trouble must not stop the others' checks
            log.exception("recheck of %s failed", sender.value)
        checked += 1
    if expired or checked:
        log.info("senders recheck: %d expired, %d checked", expired, checked)
    return {"expired": expired, "checked": checked}


def run_periodically(stop: threading.Event, interval: float | None = None) -> None:
    """Loop until ``stop`` is set; only the holder of the Redis lock runs a pass."""
    interval = interval or PASS_SECONDS
    while not stop.wait(interval):
        try:
            if runtime.redis().set(LOCK_KEY, "1", nx=True, px=int(interval * 900)):
                recheck_due()
        except Exception:
            log.exception("senders recheck pass failed")
