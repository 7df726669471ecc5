"""``Cancel list``: the list's job stops at its next batch, and every notification of the
list that no provider has yet (still queued, a retry waiting included) ends ``cancelled``:
its delivery job finds nothing to claim, Reports counts it as Cancelled, and its unit of the
allowance is given back. A notification a worker has already claimed (``sending``) or that
reached an outcome went too late for the cancel; the list's page says how many."""

from __future__ import annotations

from engine.database.models import Notification, utcnow
from engine.database.models.lists import RecipientList
from engine.database.vocabulary import NotificationStatus
from engine.sending import allowance

# A list may be cancelled while it waits for its time, while it sends, and once every row
# was accepted while some of its notifications still wait in the queue.
CANCELLABLE = ("checked", "scheduled", "sending", "sent")


def cancel(kept: RecipientList) -> bool:
    """Stop the list. False when there was nothing to stop (sent, cancelled already)."""
    if not RecipientList.update(status="cancelled").where(
            RecipientList.id == kept.id, RecipientList.status.in_(CANCELLABLE)).execute():
        return False
    stop_queued(kept)
    return True


def stop_queued(kept: RecipientList) -> int:
    """Every queued notification of the cancelled list ends cancelled (its job, when it runs,
    claims nothing): how many. Run again by the job when it ends, for the rows its last
    batch accepted while the cancel ran."""
    stopped = (Notification.update(status=NotificationStatus.CANCELLED, next_attempt_at=None,
                                   last_error="its list was cancelled", updated_at=utcnow())
               .where(Notification.workspace == kept.workspace_id,
                      Notification.status == NotificationStatus.QUEUED,
                      Notification.correlation_id.startswith(f"list-{kept.id.hex}-"))
               .execute())
    if stopped:
        RecipientList.update(cancelled=RecipientList.cancelled + stopped).where(
            RecipientList.id == kept.id).execute()
        allowance.give_back(str(kept.workspace.account_id), stopped)
    return stopped
