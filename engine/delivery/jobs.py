"""The delivery job: deliver one notification, record every attempt, decide what comes next.

``deliver_notification`` is both the RQ job function (engine/delivery/queue.py enqueues it
by its path, which is part of every job already in Redis, so it never moves) and what the
worker's delivery slots call directly for a job they took (engine/worker/handoff.py). Either
way it delivers: it never answers for a delivery made elsewhere.
"""

from __future__ import annotations

import contextlib
import logging

from engine import runtime
from engine.callbacks import delivered as callbacks
from engine.database import generations, notification_facts, notification_store
from engine.database.db import database, release_connection
from engine.database.models import Notification
from engine.database.vocabulary import NotificationStatus, Outcome
from engine.delivery import fair_share, outcome_events
from engine.delivery.message_lanes import send_all
from engine.delivery.outcomes import (
    CHECKPOINT_ROWS,
    INFRASTRUCTURE,
    Outcomes,
    described,
    message_row,
    status_rule,
)
from engine.delivery.planning import plan
from engine.delivery.providers import current_notification, sender_of
from engine.delivery.retry import MAX_EMAIL_ATTEMPTS, webhook_channel
from engine.observability import context, deliveries
from engine.plugins.channel_contract import Channel, Plan
from engine.plugins.contracts import DeliveryError, PermanentError
from engine.plugins.manager import default_registry

log = logging.getLogger("herald.delivery")

__all__ = ["CHECKPOINT_ROWS", "MAX_EMAIL_ATTEMPTS", "claim", "deliver_notification"]


def claim(notification_id: str) -> Notification | None:
    """Take the notification for this job, or None when another job has it or it is done."""
    settings = runtime.settings()
    return notification_store.claim(notification_id, settings.reconcile_after_seconds,
                                    settings.webhook_max_attempts, MAX_EMAIL_ATTEMPTS,
                                    webhook_channel=webhook_channel())


def deliver_notification(notification_id: str) -> str:
    """Deliver the notification (job id = notification id); safe to run twice for one id
    (the claim lets one through). Returns its status after this attempt, or "skipped" when
    there was nothing to claim."""
    runtime.ensure_own_connections()
    database.connect(reuse_if_open=True)
    notification = claim(notification_id)
    if notification is None:
        return "skipped"
    token = current_notification.set((str(notification.workspace_id), notification_id))
    try:
        with context.bound(notification.correlation_id, notification_id), \
                generations.read_once():
            channel = default_registry().channel(notification.channel)
            return _deliver_messages(channel, notification)
    except INFRASTRUCTURE:
        raise  # as a crash: the row, still `sending`, waits for the reconciler
    except Exception as err:
        if notification.status != NotificationStatus.SENDING:  # recorded: an event raised
            raise
        return _failed(notification, err)
    finally:
        current_notification.reset(token)


def _failed(notification: Notification, err: Exception) -> str:
    """An exception outside any one message (a payload no plan can read, a bug): a permanent
    failure of the notification, recorded now rather than tried again by the reconciler,
    which would send again whatever this attempt had sent."""
    log.error("delivering notification %s failed: %s", notification.id, type(err).__name__,
              exc_info=err)
    attempt = message_row(notification, None, Outcome.PERMANENT, 0,
                          PermanentError(described(err)))
    # A fan-out may have reached some, in an earlier attempt or in a checkpoint of this one.
    reached = notification_facts.reached_a_recipient(notification.id)
    status = NotificationStatus.DELIVERED if reached else NotificationStatus.FAILED
    notification_store.record_outcome(notification, [attempt], status,
                                      None if reached else attempt["error"], None)
    deliveries.observed(notification, [attempt], status, attempt["error"], None, None)
    callbacks.settled(notification)
    outcome_events.emit_outcome(notification, attempt)
    return status


def _failed_before(notification: Notification, outcomes: Outcomes,
                   planned: Plan) -> str | None:
    """Asked only when this part of a fan-out neither reached nor failed anyone: whether an
    earlier slice or attempt failed a recipient for good (one query, in that case only)."""
    if outcomes.delivered or outcomes.failed or planned.reached_before or not planned.suppressed:
        return None
    return notification_facts.permanent_error(notification.id)


def _deliver_messages(channel: Channel, notification: Notification) -> str:
    planned = plan(channel, notification)
    outcomes = Outcomes(notification, len(planned.messages))
    provider = None
    if planned.messages:
        try:
            provider = sender_of(channel, notification)
            outcomes.provider = getattr(provider, "herald_scheme", None)
        except DeliveryError as err:
            outcomes.failed = len(planned.messages)
            outcomes.attempts.append(message_row(notification, None, Outcome.PERMANENT, 0, err))
    share = fair_share.Slice(len(planned.messages))
    if provider is not None:
        release_connection()  # not held through the network's wait (a fan-out's takes one)
        with contextlib.closing(send_all(channel, provider, planned.messages,
                                         share.stop)) as sent:
            for outcome in sent:
                outcomes.add(*outcome)
                share.after(outcomes)
    if share.ended_early(outcomes):
        outcomes.log_unexpected()
        return fair_share.yield_worker(notification, outcomes)
    outcomes.log_unexpected()
    outcomes.save_bounces()
    planned.suppressed.extend(outcomes.bounced)
    verdict = status_rule(notification, outcomes, planned.suppressed, planned.reached_before,
                          _failed_before(notification, outcomes, planned))
    attempts = outcomes.attempts
    notification_store.record_outcome(notification, attempts[outcomes.saved:], verdict.status,
                                      verdict.error, verdict.wait)
    deliveries.observed(notification, attempts, verdict.status, verdict.error, verdict.wait,
                        outcomes.provider, suppressed=len(planned.suppressed))
    callbacks.settled(notification, suppressed=planned.suppressed, bounced=outcomes.bounced,
                      rejected=outcomes.rejected)
    if planned.suppressed:
        outcome_events.emit("notification_suppressed", notification,
                            recipients=planned.suppressed)
    outcome_events.emit_outcome(notification, attempts[-1] if attempts else {})
    return verdict.status
