"""A send or preview request resolved: its fields, tenancy, template, version and channel rules
(D1 positions 5 to 10, docs/api.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine import runtime
from engine.catalog import snapshots
from engine.catalog.keycache import KeyInfo
from engine.errors import ApiError, FieldErrors
from engine.formats.addresses import bare_address, dedupe
from engine.sending.recipients import resolve
from engine.sending.validation import validate_request
from engine.store.models import Account, Template, TemplateVersion, Workspace

N = "notifications"


@dataclass
class Resolved:
    """A request that passed validation, tenancy, template and channel rules."""

    body: dict[str, Any]
    key: KeyInfo
    workspace: Workspace
    account: Account
    template: Template
    version: TemplateVersion
    tags: dict[str, str]
    snap: snapshots.TemplateSnapshot
    warnings: list[dict[str, str]] = field(default_factory=list)


def _tags(body: dict[str, Any]) -> dict[str, str]:
    return {t["key"]: t["value"] for t in body.get("tags") or []}


def _version(snap: snapshots.TemplateSnapshot, number: int | None) -> TemplateVersion:
    if number is None:
        live = snap.live
        if live is None:
            raise ApiError(400, f"{N}.no_live_version",
                           "The template has no published version.")
        return live
    version = snap.version(number)
    if version is None:
        raise ApiError(400, f"{N}.template_version_not_found",
                       f"The template has no version {number}.")
    if version.status == "draft":
        raise ApiError(400, f"{N}.template_version_is_draft",
                       f"Version {number} is a draft; pin a published version.")
    return version


def _check_webhook_destination(url: str, account: Account) -> None:
    """Spec 6.1 at send; delivery checks again at each attempt (DNS can change)."""
    from engine.webhooks.destinations import DestinationError, check_destination

    try:
        check_destination(url, allow_private=runtime.settings().webhook_allow_private)
    except DestinationError as err:
        raise ApiError(400, f"{N}.webhook_destination_invalid", str(err)) from None


def resolve_request(body: object, key: KeyInfo, *, preview: bool,
                    parse_error: ApiError | None = None) -> Resolved:
    """Validation, tenancy, template, version and channel rules (D1 positions 5 to 10)."""
    if parse_error is not None:
        raise parse_error
    request = validate_request(body)
    if request["tenantId"].lower() != key.workspace_id.lower():
        raise ApiError(403, "api_keys.tenant_mismatch",
                       "The API key belongs to another workspace than tenantId.")
    snap = snapshots.snapshot(key.workspace_id, request["templateId"])
    if snap is None:
        # The same answer for a template of another workspace: nothing leaks across tenants.
        raise ApiError(404, f"{N}.template_not_found", "No such template.")
    template, workspace, account = snap.template, snap.workspace, snap.account
    version = _version(snap, request.get("versionNumber"))
    if preview and template.channel != "email":
        raise ApiError(400, f"{N}.unsupported_notification_type",
                       "Preview renders email templates only.")
    if template.channel == "webhook":
        url = (request.get("webhookOptions") or {}).get("urlOverride")
        if not url:
            raise ApiError(400, f"{N}.webhook_destination_required",
                           "A webhook template needs webhookOptions.urlOverride.")
        if not account.webhook_delivery:
            raise ApiError(403, f"{N}.webhook_delivery_not_available",
                           "The account's plan does not include webhook delivery.")
        _check_webhook_destination(url, account)
    resolved = Resolved(request, key, workspace, account, template, version, _tags(request),
                        snap)
    if template.channel == "email":
        _check_email_recipients(resolved)
        _check_sender(resolved, preview)
    elif template.channel == "sms":
        _check_sms_recipients(resolved)
    return resolved


def _check_sender(resolved: Resolved, preview: bool) -> None:
    """The from address must be verified unless the workspace brings its own provider (D9);
    a preview reports it as a warning instead."""
    sender = (resolved.body.get("emailOptions") or {}).get("fromAddress") or \
        resolved.version.content.get("fromAddress")
    if resolved.workspace.email_provider is None and not (
            sender and resolved.snap.sender_verified(bare_address(sender).lower())):
        if not preview:
            raise ApiError(422, "sender.not_verified",
                           f"{sender or 'The from address'} is not a verified sender.")
        resolved.warnings.append({"field": "sender.fromAddress",
                                  "message": "not a verified sender: a send would fail"})


def _check_email_recipients(resolved: Resolved) -> None:
    """No recipient left after resolution is ``to_empty``. The 1,000 of spec 8.1 counts the
    request's own lists (engine/sending/validation.py): the template's defaults, which the
    caller cannot see, come on top and never make a request within the limit fail."""
    recipients = resolve(resolved.snap.defaults, resolved.body.get("emailOptions"))
    if not recipients.to and not recipients.cc and not recipients.bcc:
        errors = FieldErrors()
        errors.add("emailOptions.to", f"{N}.email.to_empty", "no recipient after resolution")
        errors.raise_if_any()


def sms_numbers(resolved: Resolved) -> list[str]:
    """The numbers an SMS goes to: the override or the defaults, then the request's own."""
    options = resolved.body.get("smsOptions") or {}
    override = [n for n in options.get("overrideRecipients") or [] if n.strip()]
    base = override or list(resolved.snap.defaults.get("to") or [])
    return dedupe([*base, *(options.get("to") or [])])


def _check_sms_recipients(resolved: Resolved) -> None:
    if not sms_numbers(resolved):
        errors = FieldErrors()
        errors.add("smsOptions.to", f"{N}.sms.to_empty", "no recipient after resolution")
        errors.raise_if_any()
