"""Single senders: an address, a from name and a postal address, verified by a link mailed
to the address (valid 48 hours; asking again sends a new one and voids the old).

The link opens a page whose button confirms: a GET never confirms, since mail scanners
follow links. Only the hash of a link's token is stored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Any

from email_validator import EmailNotValidError, validate_email

from engine import runtime
from engine.database import generations
from engine.database.db import database
from engine.database.models import Account, Sender, Workspace, utcnow
from engine.formats.addresses import suppression_key
from engine.formats.header_text import CONTROLS
from engine.plugins.contracts import DeliveryError
from engine.senders import allowances, mail
from engine.senders.errors import SenderError

LINK_HOURS = 48
MAX_POSTAL = 500
CONFIRM_PATH = "/senders/confirm/"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_address(text: Any) -> str:
    """The address as kept: bare, lower-cased, its domain in ASCII form."""
    if not isinstance(text, str) or not text.strip():
        raise SenderError("Enter an email address.", "address")
    try:
        validate_email(text.strip(), check_deliverability=False, allow_smtputf8=True)
    except EmailNotValidError as err:
        raise SenderError(f"This is not a valid email address: {err}", "address") from None
    return suppression_key(text.strip())


def _checked_details(from_name: Any, postal_address: Any) -> tuple[str, str]:
    name = from_name.strip() if isinstance(from_name, str) else ""
    if not name or CONTROLS.search(name) or len(name) > 200:
        raise SenderError("Enter a from name of at most 200 characters, on one line.",
                          "from_name")
    postal = postal_address.strip() if isinstance(postal_address, str) else ""
    if not postal or len(postal) > MAX_POSTAL:
        raise SenderError(f"Enter the postal address your Marketing emails show in their "
                          f"footer (at most {MAX_POSTAL} characters).", "postal_address")
    if CONTROLS.search(postal.replace("\r\n", "\n").replace("\n", " ")):
        raise SenderError("The postal address holds characters that cannot be shown.",
                          "postal_address")
    return name, postal


def add_address(account: Account, address: Any, from_name: Any, postal_address: Any,
                workspace: Workspace | None = None,
                now: dt.datetime | None = None) -> Sender:
    """Add a pending single sender and mail its link; a pending one gets a new link."""
    value = parse_address(address)
    name, postal = _checked_details(from_name, postal_address)
    now = now or utcnow()
    with database.atomic():
        allowances.lock_account(account)
        sender = Sender.get_or_none(Sender.account == account, Sender.kind == "address",
                                    Sender.value == value)
        if sender is not None and sender.status == "verified":
            raise SenderError(f"{value} is already a verified sender.", "address")
        allowances.check_not_taken(account, "address", value)
        new = sender is None
        if new:
            allowances.check_allowance(account, "address")
            sender = Sender(account=account, kind="address", value=value, declared=False,
                            status="pending", verified=False, workspace=workspace,
                            created_at=now)
        sender.from_name, sender.postal_address = name, postal
        token = _new_link(sender, now)
        sender.save(force_insert=new)
    _mail_link(sender, token)
    return sender


def resend(sender: Sender, now: dt.datetime | None = None) -> Sender:
    """A new link for a pending single sender (the old one stops working)."""
    if sender.kind != "address" or sender.status != "pending":
        raise SenderError(f"{sender.value} is not waiting for confirmation.", "address")
    token = _new_link(sender, now or utcnow())
    sender.save()
    _mail_link(sender, token)
    return sender


def _new_link(sender: Sender, now: dt.datetime) -> str:
    token = secrets.token_urlsafe(32)
    sender.token_hash = _hash(token)
    sender.expires_at = now + dt.timedelta(hours=LINK_HOURS)
    return token


def link_url(token: str) -> str:
    return f"{runtime.settings().public_url}{CONFIRM_PATH}{token}"


def _mail_link(sender: Sender, token: str) -> None:
    text = (f"Someone asked to send email as {sender.from_name} <{sender.value}> through "
            f"Herald.\n\nTo confirm that this address is yours, open this link and press "
            f"Confirm (the link works for {LINK_HOURS} hours):\n\n{link_url(token)}\n\n"
            f"If you did not ask for this, ignore this email: nothing is sent as you.\n")
    try:
        mail.send([sender.value], f"Confirm {sender.value} as a sender", text)
    except DeliveryError as err:
        raise SenderError(f"{sender.value} is waiting for confirmation, but the email could "
                          f"not be sent ({err}): ask for it again.", "address") from None


def pending_link(token: Any, now: dt.datetime | None = None) -> Sender:
    """The single sender a link confirms; SenderError when it does not (any more)."""
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        raise SenderError("This confirmation link is not valid.")
    sender = Sender.get_or_none(Sender.token_hash == _hash(token), Sender.kind == "address")
    if sender is None or sender.status != "pending":
        raise SenderError("This confirmation link is not valid: it was used already, or a "
                          "newer one replaced it.")
    if sender.expires_at is None or sender.expires_at <= (now or utcnow()):
        raise SenderError("This confirmation link expired: ask for a new one from the "
                          "Senders page.")
    return sender


def confirm(token: Any, now: dt.datetime | None = None) -> Sender:
    """Verify the single sender of a link (the page's button, never the GET)."""
    now = now or utcnow()
    with database.atomic():
        sender = pending_link(token, now)
        allowances.check_not_taken(sender.account, "address", sender.value)
        updated = (Sender.update(status="verified", verified=True, verified_at=now,
                                 token_hash=None, expires_at=None)
                   .where(Sender.id == sender.id, Sender.token_hash == sender.token_hash)
                   .execute())
        if not updated:
            raise SenderError("This confirmation link was used already.")
        generations.changed_account(sender.account_id)
    return Sender.get_by_id(sender.id)
