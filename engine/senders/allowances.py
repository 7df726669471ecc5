"""What an account may add (spec 8.3) and what a removal would break.

Allowances per plan: Basic 1 domain / 2 single senders, Pro 3 / 5, Business 10 / 10. A
domain's request counts while it is pending, verified or failed (an expired one does not);
an address counts while pending or verified. A sender verified by one account is refused to
every other, with no word of which account holds it.
"""

from __future__ import annotations

from peewee import SqliteDatabase

from engine.database.db import database
from engine.database.models import (
    SENDER_ALLOWANCES,
    Account,
    Sender,
    Template,
    TemplateVersion,
    Workspace,
)
from engine.formats.addresses import ascii_form, bare_address
from engine.plugins.manager import default_registry
from engine.senders.errors import SenderError

COUNTED = {"domain": ("pending", "verified", "failed"), "address": ("pending", "verified")}
NOUNS = {"domain": ("domain", "domains"), "address": ("single sender", "single senders")}


def lock_account(account: Account) -> None:
    """Serialise additions to one account (PostgreSQL row lock; SQLite writes one at a time)
    so two requests at once cannot both take the last place of the allowance."""
    if not isinstance(database.obj, SqliteDatabase):
        Account.select(Account.id).where(Account.id == account.id).for_update().get()


def check_allowance(account: Account, kind: str) -> None:
    allowed = SENDER_ALLOWANCES[account.plan][0 if kind == "domain" else 1]
    used = Sender.select().where(Sender.account == account, Sender.kind == kind,
                                 Sender.status.in_(COUNTED[kind])).count()
    if used >= allowed:
        one, many = NOUNS[kind]
        raise SenderError(f"The {account.plan.capitalize()} plan allows {allowed} "
                          f"{one if allowed == 1 else many}, and this account has "
                          f"{used}: remove one, or move to a larger plan.", kind)


def check_not_taken(account: Account, kind: str, value: str) -> None:
    """Refused when another account has it verified; which account is never said."""
    taken = Sender.select().where(Sender.kind == kind, Sender.value == value,
                                  Sender.verified == True,  # noqa: E712
                                  Sender.account != account).exists()
    if taken:
        raise SenderError(f"{value} is already verified by another account, and cannot be "
                          f"added to this one.", kind)


def _uses(sender: Sender, from_address: str) -> bool:
    bare = bare_address(from_address).lower()
    local, _, domain = bare.rpartition("@")
    if sender.kind == "domain":
        return ascii_form(domain) == sender.value
    return f"{local}@{ascii_form(domain)}" == sender.value


def templates_using(sender: Sender) -> list[str]:
    """Live templates of the account (of a channel whose versions name a sender: email)
    whose from address this sender covers, as
    ``Template (workspace)``; a removal asks first when there are any."""
    fields = {c.name: c.sender_field for c in default_registry().ordered_channels()
              if c.sender_field}
    rows = (TemplateVersion.select(TemplateVersion.content, Template.channel, Template.name,
                                   Workspace.name)
            .join(Template).join(Workspace)
            .where(Workspace.account == sender.account_id, Template.channel.in_(list(fields)),
                   TemplateVersion.status == "live")
            .order_by(Workspace.name, Template.name).tuples())
    return [f"{template} ({workspace})" for content, channel, template, workspace in rows
            if (content or {}).get(fields[channel])
            and _uses(sender, content[fields[channel]])]
