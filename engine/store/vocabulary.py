"""The words the records use: a notification's status, an attempt's outcome, a version's
status. StrEnums, so each compares equal to the text stored in the database and shown by
the API (``NotificationStatus.QUEUED == "queued"``)."""

from __future__ import annotations

from enum import StrEnum


class NotificationStatus(StrEnum):
    QUEUED = "queued"          # waiting for its (next) attempt
    SENDING = "sending"        # claimed by a job; its attempt has not recorded an outcome
    DELIVERED = "delivered"    # a recipient was reached (a fan-out: at least one)
    FAILED = "failed"          # for good: a permanent outcome, or every attempt used
    SUPPRESSED = "suppressed"  # every recipient was on the suppression list


class Outcome(StrEnum):
    """What one attempt (or one message of a fan-out) came to."""

    DELIVERED = "delivered"
    TRANSIENT = "transient"    # worth another attempt
    PERMANENT = "permanent"    # will fail the same way again
    SUPPRESSED = "suppressed"  # the recipient is gone for good (a hard bounce)


class VersionStatus(StrEnum):
    DRAFT = "draft"
    LIVE = "live"              # the one a send without versionNumber uses
    PREVIOUS = "previous"      # published before; kept within the plan's retention


UNFINISHED = (NotificationStatus.QUEUED, NotificationStatus.SENDING)
