"""Mail that sender verification sends itself: a single sender's confirmation link, and the
warning that a verified domain's records are gone.

Sent at once through the service's email provider (HERALD_EMAIL_PROVIDER: the dev inbox
under `herald dev`) by the web application's own mail (engine/people/mail.py), not through
the notification pipeline: these are not a workspace's notifications, count against no
allowance and appear in no report.
"""

from __future__ import annotations

import logging

from engine.database.models import Sender, Workspace
from engine.database.models.people import Membership, User
from engine.people import mail as people_mail
from engine.plugins.contracts import DeliveryError

log = logging.getLogger("herald.senders")


def send(to: list[str], subject: str, text: str) -> None:
    """One plain-text message to each address (no one sees the others); raises
    DeliveryError when the provider refuses one."""
    for address in to:
        try:
            people_mail.send(address, subject, text)
        except (LookupError, ValueError) as err:  # HERALD_EMAIL_PROVIDER no plugin takes
            raise DeliveryError(str(err)) from None


def owners_and_admins(sender: Sender) -> list[str]:
    """The addresses of the Owners and Admins of the workspace that asked for ``sender``;
    of every workspace of the account when none did (`herald senders add-domain`, or a
    workspace since deleted)."""
    workspaces = ([sender.workspace_id] if sender.workspace_id else
                  [w.id for w in Workspace.select(Workspace.id)
                   .where(Workspace.account == sender.account_id)])
    rows = (User.select(User.email).join(Membership)
            .where(Membership.workspace.in_(workspaces),
                   Membership.role.in_(("owner", "admin")))
            .distinct().order_by(User.email))
    return [row.email for row in rows]


def warn_records_gone(sender: Sender, deadline_text: str) -> None:
    """The warning of the 72-hour rule; a provider's refusal is logged, never raised (the
    check that found the records gone has to finish)."""
    gone = [r for r in sender.records if r["purpose"] != "dmarc" and r["status"] == "failed"]
    lines = [f"- {r['type']} {r['host']} -> {r['value']}: {r['reason']}" for r in gone]
    text = (f"Herald could no longer find these DNS records of {sender.value}:\n\n"
            + "\n".join(lines)
            + f"\n\nPublish them again. If they are still missing on {deadline_text}, "
            f"{sender.value} stops being a verified sender and mail from it is refused.\n")
    try:
        send(owners_and_admins(sender), f"{sender.value}: DNS records for sending are "
             f"missing", text)
    except DeliveryError as err:
        log.warning("the warning about %s could not be sent: %s", sender.value, err)
