"""The web application's own mail (reset links, invitations), sent by the worker from the
queue, not in the request.

Sending in the request told an onlooker which addresses have an account: a reset answered
in 510 ms for an account (the mail went out) and 5 ms for none. Now the request only
enqueues, the same job whether or not the address has an account, and the job looks the
address up. The jobs go on the priority queue that every `herald worker` serves
(engine/queue/queueing.py); they are plain RQ jobs, run by RQ as any other.
"""

from __future__ import annotations

import logging

from rq import Queue

from engine import runtime
from engine.database.models.people import Invitation
from engine.people import mail, resets, users
from engine.plugins.contracts import DeliveryError
from engine.queue.queueing import QUEUE_NAME

log = logging.getLogger("herald.people")
JOB_PREFIX = "engine.people.outbox."
JOB_TIMEOUT = 120
FAILURE_TTL = 3600


def _enqueue(function: str, *args: object) -> None:
    Queue(QUEUE_NAME, connection=runtime.redis()).enqueue(
        JOB_PREFIX + function, *args, job_timeout=JOB_TIMEOUT, result_ttl=0,
        failure_ttl=FAILURE_TTL)


def queue_reset_link(email: str) -> None:
    """Mail a reset link to ``email`` if it has an account (the job decides)."""
    _enqueue("send_reset_link", email)


def queue_invitation(invitation_id: str, url: str, inviter_name: str) -> None:
    """Mail an invitation's link. The link is in the job until the worker takes it (RQ
    keeps no result: ``result_ttl=0``); an invitation cancelled meanwhile is not mailed."""
    _enqueue("send_invitation", invitation_id, url, inviter_name)


def send_reset_link(email: str) -> bool:
    """The job: a one-hour reset link, when the address has an account."""
    user = users.find(email)
    if user is None:
        return False
    issued = resets.issue(user, runtime.settings().public_url)
    text = (f"Hello {user.name},\n\nSomeone (we hope you) asked to set a new password for "
            f"your Herald account. Open this link within an hour to do so:\n\n{issued.url}\n\n"
            "Setting it signs you out everywhere else.\n\n"
            "If it was not you, ignore this message: your password stays as it is.\n")
    return _send(user.email, "Set a new Herald password", text)


def send_invitation(invitation_id: str, url: str, inviter_name: str) -> bool:
    """The job: the invitation's mail, unless it was cancelled or used meanwhile."""
    from engine.people import roles

    invitation = Invitation.get_or_none(Invitation.id == invitation_id)
    if invitation is None or invitation.accepted_at is not None:
        return False
    name = invitation.workspace.name
    text = (f"Hello,\n\n{inviter_name} invited you to the workspace “{name}” on Herald as "
            f"{roles.LABELS[invitation.role]}.\n\nOpen this link within 7 days to accept "
            f"(if you already have a Herald account, you sign in first):\n\n{url}\n")
    return _send(invitation.email, f"Join {name} on Herald", text)


def _send(to: str, subject: str, text: str) -> bool:
    try:
        mail.send(to, subject, text)
    except (DeliveryError, LookupError, ValueError) as err:
        # Not raised: RQ would keep the job, link and all, among its failed jobs.
        log.warning("the web application's mail could not be sent: %s", err)
        return False
    return True
