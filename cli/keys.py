"""`herald keys create|revoke`, `herald secret rotate` and `herald secret rotate-inbound`:
API keys, signing secrets and the secrets that authenticate a provider's events."""

from __future__ import annotations

import argparse

from cli.common import CommandError, connect, emit, parse_uuid, workspace
from config.settings import Settings


def cmd_keys_create(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.keys import KeyLifecycleError, create_key, describe, parse_time
    from engine.provisioning import NAME_RULE, valid_name

    if not valid_name(args.name):  # apply's rule: what export prints of the key applies again
        raise CommandError(f"--name: {NAME_RULE}")
    connect(settings)
    try:
        expires = parse_time(args.expires_at) if args.expires_at else None
    except ValueError:
        raise CommandError(f"--expires-at: not an RFC 3339 time: {args.expires_at}") from None
    try:
        key, value = create_key(workspace(args.workspace), args.name, expires)
    except KeyLifecycleError as err:
        raise CommandError(str(err)) from None
    emit(describe(key, value))


def cmd_keys_revoke(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.keys import describe, revoke_key
    from engine.database.models import ApiKey

    connect(settings)
    key = ApiKey.get_or_none(ApiKey.id == parse_uuid(args.id, "API key"))
    if key is None:
        raise CommandError(f"no API key {args.id}")
    emit(describe(revoke_key(key)))


def cmd_secret_rotate(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.keys import rotate_signing_secret

    connect(settings)
    # The web application's Webhooks page rotates through the same function.
    emit({"secret": rotate_signing_secret(workspace(args.workspace))})


def cmd_secret_rotate_inbound(args: argparse.Namespace, settings: Settings) -> None:
    from engine.inbound import workspace_secrets

    connect(settings)
    found = workspace(args.workspace)
    try:
        workspace_secrets.receiver(args.provider)
    except LookupError as err:
        raise CommandError(f"--provider: {err}") from None
    # Settings > Webhooks rotates through the same function; both write the audit log.
    emit({"workspaceId": str(found.id), "provider": args.provider,
          "url": workspace_secrets.rotate(found, args.provider)})


def add_commands(sub: argparse._SubParsersAction) -> None:
    keys = sub.add_parser("keys", help="API keys").add_subparsers(dest="keys", required=True)
    p = keys.add_parser("create")
    p.add_argument("--workspace", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--expires-at")
    p.set_defaults(func=cmd_keys_create)
    p = keys.add_parser("revoke")
    p.add_argument("id")
    p.set_defaults(func=cmd_keys_revoke)

    secret = sub.add_parser("secret", help="webhook signing secret").add_subparsers(
        dest="secret", required=True)
    p = secret.add_parser("rotate")
    p.add_argument("--workspace", required=True)
    p.set_defaults(func=cmd_secret_rotate)
    p = secret.add_parser("rotate-inbound", help="a new secret for a provider's events to "
                          "the workspace: prints the new URL; the previous one is refused "
                          "from now on")
    p.add_argument("--workspace", required=True)
    p.add_argument("--provider", required=True, help="the provider's name, as in its URL")
    p.set_defaults(func=cmd_secret_rotate_inbound)
