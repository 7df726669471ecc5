"""An account's senders as a whole: finding the account, listing, removing."""

from __future__ import annotations

import uuid
from typing import Any

from engine.database.models import Account, Sender
from engine.senders.allowances import templates_using
from engine.senders.domains import status_at
from engine.senders.errors import SenderError
from engine.senders.names import kept_value


def find_account(ident: str) -> Account:
    """By id, else by name (``--account ID|NAME``)."""
    try:
        found = Account.get_or_none(Account.id == uuid.UUID(ident))
    except ValueError:
        found = None
    found = found or Account.get_or_none(Account.name == ident)
    if found is None:
        raise SenderError(f"no account {ident}")
    return found


def list_senders(account: Account) -> list[dict[str, Any]]:
    """``[{"kind": "domain"|"address", "name", "status"}]``, domains first, by name."""
    rows = Sender.select().where(Sender.account == account).order_by(Sender.kind.desc(),
                                                                       Sender.value)
    return [{"kind": row.kind, "name": row.value, "status": status_at(row)} for row in rows]


def find_sender(account: Account, name: Any) -> Sender:
    text = name if isinstance(name, str) else ""
    kind = "address" if "@" in text else "domain"
    value = kept_value(kind, text)
    found = Sender.get_or_none(Sender.account == account, Sender.kind == kind,
                               Sender.value == value)
    if found is None:
        raise SenderError(f"{name} is not a sender of this account.")
    return found


def remove(sender: Sender, confirmed: bool = False) -> list[str]:
    """Delete ``sender``; while live templates send from it, only once ``confirmed`` (the
    SenderError names them). Returns the templates that now fail with sender.not_verified."""
    using = templates_using(sender)
    if using and not confirmed:
        raise SenderError(f"{sender.value} is the from address of live templates: "
                          f"{', '.join(using)}. Their sends will be refused "
                          f"(sender.not_verified) once it is removed: confirm to remove it.")
    sender.delete_instance()
    return using


def senders_of(account_id: Any) -> list[Sender]:
    """The account's senders: domains first, then single addresses, each by value."""
    return list(Sender.select().where(Sender.account == account_id)
                .order_by(Sender.kind.desc(), Sender.value))


def sender_in(account_id: Any, sender_id: Any) -> Sender | None:
    """A sender of the account; any other is as absent as an unknown one."""
    return Sender.get_or_none(Sender.id == sender_id, Sender.account == account_id)
