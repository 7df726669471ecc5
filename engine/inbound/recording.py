"""A provider's report, matched to its notification and recorded."""

from __future__ import annotations

import logging
from typing import Any

from engine.inbound.matching import by_provider_message_id
from engine.reports import events
from engine.reports.events import Reported

log = logging.getLogger("herald.inbound")


def record_provider_report(message_id: str, report: Reported, workspace_id: Any = None) -> bool:
    """Record ``report`` on the notification whose attempt recorded ``message_id``; False
    (nothing recorded) for an unknown message or one of another workspace."""
    notification = by_provider_message_id(message_id, workspace_id)
    if notification is None:
        log.info("%s report for unknown message %r: nothing recorded", report.source,
                 message_id[:100])
        return False
    return events.record(notification, report)
