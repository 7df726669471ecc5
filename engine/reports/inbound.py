"""The messages people sent in (SMS replies: engine/inbound/sms_replies.py), as the Reports
page shows them under its `Inbound` filter: the workspace's, newest first, in the chosen
days, from the number the `Recipient` filter names."""

from __future__ import annotations

from engine.database.models.recipients import InboundMessage
from engine.reports.filters import ReportFilters

SHOWN = 200


def messages(f: ReportFilters, limit: int = SHOWN) -> tuple[list[InboundMessage], int]:
    """The newest ``limit`` messages under the filters, and how many there are."""
    rows = InboundMessage.select().where(InboundMessage.workspace == f.workspace_id,
                                         InboundMessage.received_at >= f.start_at,
                                         InboundMessage.received_at < f.end_before)
    if f.recipient is not None:
        rows = rows.where(InboundMessage.sender == f.recipient)
    total = rows.count()
    return list(rows.order_by(InboundMessage.received_at.desc(),
                              InboundMessage.id).limit(limit)), total
