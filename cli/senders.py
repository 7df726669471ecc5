"""`herald senders ...` and `herald dkim records` (docs/senders.md)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from cli.common import CommandError, connect, emit
from config.settings import Settings


def _refusals(action: Callable[[], Any]) -> Any:
    """Run an engine call; its SenderError is the command's one line on stderr."""
    from engine.senders.errors import SenderError

    try:
        return action()
    except SenderError as err:
        raise CommandError(str(err)) from None


def _account(args: argparse.Namespace):
    from engine.senders.accounts import find_account

    return _refusals(lambda: find_account(args.account))


def cmd_add_domain(args: argparse.Namespace, settings: Settings) -> None:
    from engine.senders.domains import add_domain, describe

    connect(settings)
    account = _account(args)
    emit(describe(_refusals(lambda: add_domain(account, args.domain))))


def cmd_check(args: argparse.Namespace, settings: Settings) -> None:
    from engine.senders.domains import check_domain, describe, find

    connect(settings)
    account = _account(args)
    sender = _refusals(lambda: find(account, args.domain))
    emit(describe(_refusals(lambda: check_domain(sender))))


def cmd_list(args: argparse.Namespace, settings: Settings) -> None:
    from engine.senders.accounts import list_senders

    connect(settings)
    emit(list_senders(_account(args)))


def _address_json(sender) -> dict[str, Any]:
    from engine.senders.domains import rfc3339

    return {"kind": "address", "name": sender.value, "status": sender.status,
            "fromName": sender.from_name, "postalAddress": sender.postal_address,
            "linkExpiresAt": rfc3339(sender.expires_at)}


def cmd_add_address(args: argparse.Namespace, settings: Settings) -> None:
    from engine.senders.addresses import add_address

    connect(settings)
    account = _account(args)
    emit(_address_json(_refusals(lambda: add_address(
        account, args.address, args.from_name, args.postal_address))))


def cmd_resend(args: argparse.Namespace, settings: Settings) -> None:
    from engine.senders.accounts import find_sender
    from engine.senders.addresses import resend

    connect(settings)
    account = _account(args)
    sender = _refusals(lambda: find_sender(account, args.address))
    emit(_address_json(_refusals(lambda: resend(sender))))


def cmd_remove(args: argparse.Namespace, settings: Settings) -> None:
    from engine.senders.accounts import find_sender, remove

    connect(settings)
    account = _account(args)
    sender = _refusals(lambda: find_sender(account, args.name))
    affected = _refusals(lambda: remove(sender, confirmed=args.yes))
    emit({"kind": sender.kind, "name": sender.value, "removed": True,
           "liveTemplates": affected})


def cmd_dkim_records(args: argparse.Namespace, settings: Settings) -> None:
    from engine.senders.dkim_keys import published_records

    connect(settings)
    emit(published_records())


def add_commands(sub: Any) -> None:
    """The `senders` and `dkim` command groups, on the `herald` parser's subparsers."""
    senders = sub.add_parser("senders", help="sender verification").add_subparsers(
        dest="senders", required=True)
    for name, func, text in (("add-domain", cmd_add_domain, "issue a domain's DNS records"),
                             ("check", cmd_check, "look a domain's records up now")):
        p = senders.add_parser(name, help=text)
        p.add_argument("domain")
        p.add_argument("--account", required=True, help="the account's id or name")
        p.set_defaults(func=func)
    p = senders.add_parser("list", help="the account's senders and their status")
    p.add_argument("--account", required=True)
    p.set_defaults(func=cmd_list)
    p = senders.add_parser("add-address", help="a single sender, confirmed by email")
    p.add_argument("address")
    p.add_argument("--account", required=True)
    p.add_argument("--from-name", required=True)
    p.add_argument("--postal-address", required=True)
    p.set_defaults(func=cmd_add_address)
    p = senders.add_parser("resend", help="a new confirmation link for a single sender")
    p.add_argument("address")
    p.add_argument("--account", required=True)
    p.set_defaults(func=cmd_resend)
    p = senders.add_parser("remove", help="remove a domain or single sender")
    p.add_argument("name")
    p.add_argument("--account", required=True)
    p.add_argument("--yes", action="store_true",
                   help="remove it even when live templates send from it")
    p.set_defaults(func=cmd_remove)

    dkim = sub.add_parser("dkim", help="DKIM keys").add_subparsers(dest="dkim", required=True)
    dkim.add_parser("records", help="the TXT records to publish in HERALD_DKIM_ZONE") \
        .set_defaults(func=cmd_dkim_records)
