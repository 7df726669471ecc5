"""What the Settings page says of a workspace at a glance (as Notify's settings summary
does): how many keys, suppressions, senders and members it has, and how it sends email.
Counts only: each page has the details."""

from __future__ import annotations

from dataclasses import dataclass

from peewee import fn

from engine.database.models import ApiKey, Sender, Suppression, Workspace, utcnow
from engine.database.models.people import Invitation, Membership


@dataclass(frozen=True)
class SettingsSummary:
    active_keys: int
    suppressions: int
    verified_domains: int
    pending_domains: int
    verified_addresses: int
    members: int
    pending_invitations: int
    own_provider: bool
    webhooks_included: bool


def summarise(workspace: Workspace) -> SettingsSummary:
    now = utcnow()
    active = ApiKey.select().where(
        ApiKey.workspace == workspace, ApiKey.revoked_at.is_null(),
        ApiKey.expires_at.is_null() | (ApiKey.expires_at > now)).count()
    senders = list(Sender.select(Sender.kind, Sender.status).where(
        Sender.account == workspace.account_id))

    def senders_of(kind: str, status: str) -> int:
        return sum(1 for s in senders if s.kind == kind and s.status == status)

    return SettingsSummary(
        active_keys=active,
        # Addresses, not rows: one that left two topics has a row for each.
        suppressions=Suppression.select(fn.COUNT(fn.DISTINCT(Suppression.address))).where(
            Suppression.workspace == workspace).scalar() or 0,
        verified_domains=senders_of("domain", "verified"),
        pending_domains=senders_of("domain", "pending"),
        verified_addresses=senders_of("address", "verified"),
        members=Membership.select().where(Membership.workspace == workspace).count(),
        pending_invitations=Invitation.select().where(
            Invitation.workspace == workspace, Invitation.accepted_at.is_null(),
            Invitation.expires_at > now).count(),
        own_provider=bool(workspace.email_provider),
        webhooks_included=bool(workspace.account.webhook_delivery),
    )
