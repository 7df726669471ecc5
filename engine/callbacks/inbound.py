"""A message someone sent in (an SMS reply), called back to the workspace's callback URL
as ``inbound.received`` (docs/callbacks.md): signed, retried and ordered like the
workspace's other callbacks, since it rides the same queue and job."""

from __future__ import annotations

import datetime as dt
import json
import logging
import uuid
from typing import Any

from engine.callbacks import queue
from engine.callbacks.targets import target
from engine.catalog.keys import iso
from engine.database.models import utcnow
from engine.database.models.callbacks import Callback

log = logging.getLogger("herald.callbacks")
INBOUND_TYPE = "inbound.received"


def body(sender: str, recipient: str, text: str, received_at: dt.datetime) -> str:
    """The callback's body, written once: ``{"type", "from", "to", "text", "receivedAt"}``."""
    return json.dumps({"type": INBOUND_TYPE, "from": sender, "to": recipient, "text": text,
                       "receivedAt": iso(received_at)}, ensure_ascii=False,
                      separators=(",", ":"))


def received(workspace_id: Any, sender: str, recipient: str, text: str,
             received_at: dt.datetime) -> bool:
    """Call the message back when the workspace has a callback URL; a failure is logged and
    never refuses the message (it is recorded already)."""
    try:
        if target(workspace_id) is None:
            return False
        now = utcnow()
        Callback.create(workspace=workspace_id, notification_id=None,
                        delivery_id=str(uuid.uuid4()), event=INBOUND_TYPE, recipient=sender,
                        created_at=now, updated_at=now,
                        body=body(sender, recipient, text, received_at))
        queue.enqueue(workspace_id)
        return True
    except Exception:
        log.exception("the inbound message's callback could not be recorded")
        return False
