"""``Schedule``: a checked list sent at a date and time in a time zone, up to MAX_AHEAD
ahead. A schedule is the list's row (``scheduled``, ``scheduled_for`` in UTC), not a job: it
survives worker and Redis restarts, and the lists' pass (engine/lists/sweeping.py, every
few seconds in a worker) starts each list whose time came. Starting is the same
conditional update as ``Send N notifications`` (``scheduled`` to ``sending``), so with
several workers a list starts exactly once. The allowance is taken then, not when it is
scheduled: a list whose allowance no longer suffices fails with the reason and sends
nothing. ``Cancel schedule`` before it starts puts the list back to its check page."""

from __future__ import annotations

import datetime as dt
import logging
import re
from typing import Any

from engine.database.models import utcnow
from engine.database.models.lists import RecipientList
from engine.lists import sending
from engine.lists import zones as zone_names

log = logging.getLogger("herald.lists")
MAX_AHEAD = dt.timedelta(days=30)
DEFAULT_ZONE = zone_names.DEFAULT_ZONE
_WHEN = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})[T\s]+(\d{1,2}):(\d{2})\s*$")


class ScheduleRefused(ValueError):
    """Why the schedule cannot be set, for the person setting it: (field, message)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def zones() -> tuple[str, ...]:
    """Every IANA time zone name (the select's options)."""
    return zone_names.names()


def parse(text: str, zone_name: str, now: dt.datetime | None = None) -> dt.datetime:
    """The moment ``text`` (``YYYY-MM-DD HH:MM``) names in ``zone_name``, in naive UTC;
    ScheduleRefused unless it is in the future and at most MAX_AHEAD ahead."""
    place = zone_names.zone(zone_name)
    if place is None:
        raise ScheduleRefused("zone", "Choose a time zone from the list.")
    found = _WHEN.match(text or "")
    if found is None:
        raise ScheduleRefused("when", "Enter a date and time as YYYY-MM-DD HH:MM, for "
                                      "example 2026-12-24 09:30.")
    try:
        local = dt.datetime(*(int(part) for part in found.groups()), tzinfo=place)
    except ValueError:
        raise ScheduleRefused("when", "That date or time does not exist.") from None
    when = local.astimezone(dt.UTC).replace(tzinfo=None)
    now = now or utcnow()
    if when <= now:
        raise ScheduleRefused("when", "That time has passed: choose a time ahead.")
    if when > now + MAX_AHEAD:
        raise ScheduleRefused("when", f"A list can be scheduled at most "
                                      f"{MAX_AHEAD.days} days ahead.")
    return when


def schedule(kept: RecipientList, when: dt.datetime, zone_name: str, user_id: Any) -> bool:
    """The checked list set to start at ``when`` (naive UTC). False when it was not checked
    (started, scheduled or cancelled meanwhile)."""
    return bool(RecipientList.update(status=sending.SCHEDULED, scheduled_for=when,
                                     time_zone=zone_name,
                                     sent_by=str(user_id) if user_id else None)
                .where(RecipientList.id == kept.id,
                       RecipientList.status == sending.CHECKED).execute())


def unschedule(kept: RecipientList) -> bool:
    """``Cancel schedule``: back to checked, nothing sent. False when it had started."""
    return bool(RecipientList.update(status=sending.CHECKED, scheduled_for=None,
                                     time_zone=None, sent_by=None)
                .where(RecipientList.id == kept.id,
                       RecipientList.status == sending.SCHEDULED).execute())


def start_due(now: dt.datetime | None = None) -> int:
    """Start every scheduled list whose time came: how many this call started."""
    now = now or utcnow()
    started = 0
    due = (RecipientList.select(RecipientList.id)
           .where(RecipientList.status == sending.SCHEDULED,
                  RecipientList.scheduled_for <= now)
           .order_by(RecipientList.scheduled_for).limit(100))
    for row in list(due):
        kept = RecipientList.get_or_none(RecipientList.id == row.id)
        if kept is None:
            continue
        try:
            zone_names.arrange(kept)  # with a time zone column: each row's own moment
            kept = RecipientList.get_or_none(RecipientList.id == row.id) or kept
            if sending.start(kept, None, scheduled=True):
                started += 1
                log.info("scheduled list %s started", kept.id)
        except sending.SendRefused as err:
            RecipientList.update(status=sending.FAILED, problem=str(err),
                                 finished_at=utcnow()).where(
                RecipientList.id == kept.id,
                RecipientList.status == sending.SCHEDULED).execute()
            log.warning("scheduled list %s failed to start: %s", kept.id, err)
    return started


def shown(kept: RecipientList) -> str:
    """``Scheduled for ...``: the time in the zone it was given in."""
    place = zone_names.zone(kept.time_zone or DEFAULT_ZONE) or dt.UTC
    local = kept.scheduled_for.replace(tzinfo=dt.UTC).astimezone(place)
    return (f"Scheduled for {local.day} {local:%b %Y, %H:%M} "
            f"({kept.time_zone or DEFAULT_ZONE}).")
