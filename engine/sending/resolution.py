"""A send or preview request resolved: its fields, tenancy, template, version and its
channel's rules (D1 positions 5 to 10, docs/api.md)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine import runtime
from engine.catalog import snapshots
from engine.catalog.keycache import KeyInfo
from engine.catalog.variants import part_text, pick
from engine.database.models import Account, Template, TemplateVersion, Workspace
from engine.database.vocabulary import VersionStatus
from engine.errors import ApiError, FieldErrors
from engine.plugins.channel_contract import Channel, SendRequest
from engine.plugins.manager import default_registry, provider_url
from engine.rendering import PartialSet
from engine.sending.recipients import resolve
from engine.sending.validation import validate_request


@dataclass
class Resolved:
    """A request that passed validation, tenancy, template and channel rules."""

    body: dict[str, Any]
    key: KeyInfo | None  # None: the web application's editor (engine/authoring/)
    workspace: Workspace
    account: Account
    template: Template
    version: TemplateVersion
    tags: dict[str, str]
    snap: snapshots.TemplateSnapshot
    channel: Channel
    request: SendRequest
    # The partials a render may call: the workspace's live ones (the snapshot's), or the
    # editor's preview with a partial's draft in place of its live text.
    partials: PartialSet | None = None

    @functools.cached_property
    def variant(self) -> dict[str, Any] | None:
        """The language variant the tag `locale` picks (None: the version's own text)."""
        return pick(self.version.content, self.tags)

    def part_text(self, part: str) -> tuple[str, str | None]:
        """(stored program's part name, text) of ``part`` in the variant that renders."""
        return part_text(self.version.content, self.variant, part)

    def partial_set(self) -> PartialSet:
        return self.snap.partials if self.partials is None else self.partials

    @property
    def warnings(self) -> list[dict[str, str]]:
        return self.request.warnings


def _tags(body: dict[str, Any]) -> dict[str, str]:
    return {t["key"]: t["value"] for t in body.get("tags") or []}


def _version(snap: snapshots.TemplateSnapshot, number: int | None) -> TemplateVersion:
    if number is None:
        live = snap.live
        if live is None:
            raise ApiError(400, "notifications.no_live_version",
                           "The template has no published version.")
        return live
    version = snap.version(number)
    if version is None:
        raise ApiError(400, "notifications.template_version_not_found",
                       f"The template has no version {number}.")
    if version.status == VersionStatus.DRAFT:
        raise ApiError(400, "notifications.template_version_is_draft",
                       f"Version {number} is a draft; pin a published version.")
    return version


def _check_destination(url: str) -> None:
    """Spec 6.1 at send; delivery checks again at each attempt (DNS can change)."""
    from engine.webhooks.destinations import DestinationError, check_destination

    settings = runtime.settings()
    try:
        check_destination(url, allow_private=settings.webhook_allow_private,
                          hint=not settings.production)
    except DestinationError as err:
        raise ApiError(400, "notifications.webhook_destination_invalid", str(err)) from None


def _check_channel_on(channel: Channel, snap: snapshots.TemplateSnapshot) -> None:
    """A channel whose provider setting is empty (production leaves an unset one empty) is
    off: a send is refused now rather than accepted to fail in the worker. Email is on for a
    workspace that brings its own provider."""
    setting = channel.provider_setting if channel.needs_provider else None
    if not setting or (channel.own_provider and snap.workspace.email_provider is not None):
        return
    if not provider_url(runtime.settings(), setting).strip():
        raise ApiError(403, "notifications.channel_not_available",
                       f"The {channel.name} channel is off on this service: {setting} is not "
                       "set.")


def rendering_failed(errors: list[dict[str, str]]) -> ApiError:
    """validation_failed naming each template part that did not render."""
    failed = FieldErrors()
    for item in errors:
        failed.add(f"template.{item['templatePart']}", "notifications.rendering_failed",
                   item["message"])
    return ApiError(400, "notifications.validation_failed", "The template failed to render.",
                    errors=failed.errors, error_codes=failed.codes)


class _Once:
    """A call's answer, worked out at the first call and kept: `functools.cache` over a
    partial copies attributes a partial lacks, an AttributeError each, at every request."""

    __slots__ = ("_answer", "_call")

    def __init__(self, call: Callable[[], Any]) -> None:
        self._call = call
        self._answer: Any = _Once

    def __call__(self) -> Any:
        if self._answer is _Once:
            self._answer = self._call()
        return self._answer


def _send_request(body: dict[str, Any], channel: Channel, snap: snapshots.TemplateSnapshot,
                  version: TemplateVersion, preview: bool) -> SendRequest:
    """What the template's channel sees of the request, and the engine's policy it calls."""
    options = (body.get(channel.options_field) if channel.options_field else None) or {}
    return SendRequest(
        options=options, content=version.content, defaults=snap.defaults, preview=preview,
        own_provider=snap.workspace.email_provider is not None,
        webhook_delivery=bool(snap.account.webhook_delivery),
        # Asked by the channel's admission, its payload and a preview's suppressions alike:
        # resolved once a request.
        recipients=_Once(functools.partial(resolve, snap.defaults, options)),
        sender_verified=snap.sender_verified, check_destination=_check_destination,
        rendering_failed=lambda part, message: rendering_failed(
            [{"templatePart": part, "message": message}]))


def resolve_request(body: object, key: KeyInfo, *, preview: bool,
                    parse_error: ApiError | None = None) -> Resolved:
    """Validation, tenancy, template, version and channel rules (D1 in docs/api.md,
    positions 5 to 10)."""
    if parse_error is not None:
        raise parse_error
    request = validate_request(body)
    if request["tenantId"].lower() != key.workspace_id.lower():
        raise ApiError(403, "api_keys.tenant_mismatch",
                       "The API key belongs to another workspace than tenantId.")
    snap = snapshots.snapshot(key.workspace_id, request["templateId"])
    if snap is None:
        # The same answer for a template of another workspace: nothing leaks across tenants.
        raise ApiError(404, "notifications.template_not_found", "No such template.")
    version = _version(snap, request.get("versionNumber"))
    channel = default_registry().channel(snap.template.channel)
    if preview and not channel.previewable:
        raise ApiError(400, "notifications.unsupported_notification_type",
                       "Preview renders email templates only.")
    send_request = _send_request(request, channel, snap, version, preview)
    channel.admit(send_request)
    if not preview:
        _check_channel_on(channel, snap)
    return Resolved(request, key, snap.workspace, snap.account, snap.template, version,
                    _tags(request), snap, channel, send_request)


def resolve_version(body: dict[str, Any], snap: snapshots.TemplateSnapshot,
                    version: TemplateVersion, tags: dict[str, str], *, preview: bool,
                    admit: bool) -> Resolved:
    """A request for a version the caller holds, such as the editor's unsaved text: the same
    channel, options and policy as resolve_request, with the channel's rules when ``admit``
    (a test send) and without (the editor's preview, which has no recipient to name)."""
    channel = default_registry().channel(snap.template.channel)
    send_request = _send_request(body, channel, snap, version, preview)
    if admit:
        channel.admit(send_request)
        if not preview:
            _check_channel_on(channel, snap)
    return Resolved(body, None, snap.workspace, snap.account, snap.template, version,
                    tags, snap, channel, send_request)
