"""The words the records use: a notification's status, an attempt's outcome, a version's
status, a suppression's scope. StrEnums, so each compares equal to the text stored in the
database and shown by the API (``NotificationStatus.QUEUED == "queued"``)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class NotificationStatus(StrEnum):
    QUEUED = "queued"          # waiting for its (next) attempt
    SENDING = "sending"        # claimed by a job; its attempt has not recorded an outcome
    DELIVERED = "delivered"    # a recipient was reached (a fan-out: at least one)
    FAILED = "failed"          # for good: a permanent outcome, or every attempt used
    SUPPRESSED = "suppressed"  # every recipient was on the suppression list
    CANCELLED = "cancelled"    # its list was cancelled before it reached a provider


class Outcome(StrEnum):
    """What one attempt (or one message of a fan-out) came to."""

    DELIVERED = "delivered"
    TRANSIENT = "transient"    # worth another attempt
    PERMANENT = "permanent"    # will fail the same way again
    SUPPRESSED = "suppressed"  # the recipient is gone for good (a hard bounce)


class SuppressionScope(StrEnum):
    """Which mail a suppression stops (docs/delivery.md, "Suppression scope"): a bounce, a
    complaint or a manual entry stops every message to the address; a Marketing one-click
    unsubscribe only Marketing email, so password resets still arrive."""

    ALL = "all"
    MARKETING = "marketing"


# A reason whose rows stop Marketing email only (every other reason: every message).
MARKETING_ONLY_REASONS = ("unsubscribe",)


def scope_for(reason: str) -> SuppressionScope:
    """The scope a suppression written for ``reason`` has (the migration's rule too)."""
    return SuppressionScope.MARKETING if reason in MARKETING_ONLY_REASONS else SuppressionScope.ALL


# A suppression of one topic of Marketing email: ``topic:news`` (docs/delivery.md).
TOPIC_PREFIX = "topic:"


def topic_scope(topic: str) -> str:
    """The scope of a suppression of Marketing email of ``topic``."""
    return TOPIC_PREFIX + topic


def stops(scope: str, marketing: bool, topic: str | None = None) -> bool:
    """Whether a suppression of ``scope`` stops a message of the Marketing stream or not,
    of ``topic`` (a Marketing email's). ``scope`` may be several topics' scopes joined by
    spaces (``merged``): an address unsubscribed from two topics."""
    if scope == SuppressionScope.ALL:
        return True
    if not marketing:
        return False
    if scope == SuppressionScope.MARKETING:
        return True
    return topic is not None and topic_scope(topic) in scope.split()


def merged(scopes: Iterable[str]) -> str:
    """One address's rows as one scope: ``all`` over ``marketing`` over its topics' scopes,
    joined by spaces (a topic name has none)."""
    found = set(scopes)
    if SuppressionScope.ALL in found:
        return SuppressionScope.ALL
    if SuppressionScope.MARKETING in found:
        return SuppressionScope.MARKETING
    return " ".join(sorted(found))


def merged_pairs(pairs: Iterable[Iterable[str]]) -> dict[str, str]:
    """``[address, scope]`` rows (several for an address unsubscribed from several topics)
    as each address's ``merged`` scope."""
    by_address: dict[str, list[str]] = {}
    for address, scope in pairs:
        by_address.setdefault(address, []).append(scope)
    return {address: merged(scopes) for address, scopes in by_address.items()}


class VersionStatus(StrEnum):
    DRAFT = "draft"
    LIVE = "live"              # the one a send without versionNumber uses
    PREVIOUS = "previous"      # published before; kept within the plan's retention


UNFINISHED = (NotificationStatus.QUEUED, NotificationStatus.SENDING)


# A purged notification (docs/operations.md, "Data retention"): its payload is only
# {"purgedAt": time}, and each recipient it kept is a keyed hash with this prefix.
PURGED_KEY = "purgedAt"
HASH_PREFIX = "h:"


def purged_at(payload: object) -> str | None:
    """When a notification's payload was purged; None while it holds its content."""
    return payload.get(PURGED_KEY) if isinstance(payload, dict) else None


def shown_recipient(value: str | None) -> str | None:
    """A recipient as reports show it: a keyed hash (purged or erased) reads ``purged``."""
    return "purged" if value and value.startswith(HASH_PREFIX) else value
