"""One row of a list as the send path sees it: the request body an API client would send for
it, resolved against the list's pinned version with the same channel rules as a send.

The row's recipient goes in the options its channel's ``list_options`` names (email's and
SMS's ``overrideRecipients``): each message goes to that row alone, without the template's
default recipients.
"""

from __future__ import annotations

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


def body(workspace_id: str, template_id: str, version_number: int, channel: str,
         recipient: str, tags: dict[str, str]) -> dict[str, Any]:
    """The NotificationRequest an API client would send for one row."""
    declared = default_registry().channel(channel)
    field = declared.options_field or f"{channel}Options"
    return {"tenantId": workspace_id, "templateId": template_id,
            "versionNumber": version_number,
            "tags": [{"key": k, "value": v} for k, v in tags.items()],
            field: declared.list_options(recipient)}


def resolved(request: dict[str, Any], snap: TemplateSnapshot,
             version: TemplateVersion) -> Resolved:
    """The row resolved as a send resolves one: the field rules, the channel's rules, the
    sender, whether the channel is on (ApiError as the API raises it)."""
    validate_request(request)
    tags = {t["key"]: t["value"] for t in request["tags"]}
    return resolve_version(request, snap, version, tags, preview=False, admit=True)
