"""One row of a list as the send path takes it: a typed request built from the checked row.

The upload's check (engine/lists/checking.py) runs the API's field rules on each row's
request once; a row it kept is accepted as it stands, resolved against the list's pinned
version with the same channel rules as a send, with no second validation. The row's
recipient goes in the options its channel's ``list_options`` names (email's and SMS's
``overrideRecipients``): each message goes to that row alone, without the template's
default recipients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.catalog.snapshots import TemplateSnapshot
from engine.database.models import TemplateVersion
from engine.plugins.manager import default_registry
from engine.sending.resolution import Resolved, resolve_version
from engine.sending.validation import validate_request


def recipient_column(channel: str) -> str | None:
    """The column that names each row's recipient (its channel's ``list_column``, matched
    by reading.column_key); None: the channel is not sent to a list."""
    try:
        return default_registry().channel(channel).list_column
    except LookupError:
        return None


@dataclass(frozen=True)
class RowRequest:
    """What one row asks: its template's version, its channel, its one recipient and its
    tags (the list's tag columns, in order)."""

    workspace_id: str
    template_id: str
    version_number: int
    channel: str
    recipient: str
    tags: dict[str, str]

    def body(self) -> dict[str, Any]:
        """The NotificationRequest an API client would send for the row: what the check
        validates, and what the row's Idempotency-Key digests."""
        declared = default_registry().channel(self.channel)
        field = declared.options_field or f"{self.channel}Options"
        return {"tenantId": self.workspace_id, "templateId": self.template_id,
                "versionNumber": self.version_number,
                "tags": [{"key": k, "value": v} for k, v in self.tags.items()],
                field: declared.list_options(self.recipient)}

    def check(self) -> None:
        """The API's field rules on the row (ApiError as the API raises it): run once, when
        the row is checked or typed, never again at its send."""
        validate_request(self.body())

    def resolved(self, snap: TemplateSnapshot, version: TemplateVersion,
                 body: dict[str, Any] | None = None) -> Resolved:
        """The row resolved as a send resolves one: the channel's rules, the sender,
        whether the channel is on (ApiError as the API raises it). ``body``: the row's
        ``body()`` when the caller made it already."""
        return resolve_version(self.body() if body is None else body, snap, version,
                               self.tags, preview=False, admit=True)
