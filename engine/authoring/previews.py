"""The editor's live preview: the text being edited, rendered by the API's own pipeline
(engine/sending: render_parts, the channel's payload, and build_preview for email), with
the sample tags.

The text is not saved first: a transient version carries it. Its id is one per template's
draft, so the render cache (keyed by that id and the text's hash) reuses the loaded
program while the text is unchanged and loads afresh the moment it changes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from engine import runtime
from engine.catalog import snapshots
from engine.catalog.parts import all_parts
from engine.database.models import Template, TemplateVersion, Workspace
from engine.database.vocabulary import VersionStatus
from engine.errors import ApiError
from engine.plugins.channel_contract import Recipients
from engine.plugins.manager import default_registry
from engine.rendering import render_budget, variable_metadata
from engine.sending.payload import payload, render_parts
from engine.sending.preview import build_preview
from engine.sending.resolution import Resolved, resolve_version

from .publishing import Problem, label, sender_verified, syntax_problems

_DRAFTS = uuid.UUID("6d1f3c2a-8b4e-4f7a-9c1d-2e3f4a5b6c7d")  # namespace of draft cache keys


@dataclass
class EditorPreview:
    channel: str
    subject: str | None = None
    html: str | None = None  # the email's final HTML document (shown in the sandboxed frame)
    text: str | None = None  # the plain-text part (email), the rendered parts (others)
    errors: list[Problem] = field(default_factory=list)
    used: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    recipients: Recipients | None = None
    previewable: bool = False  # email-shaped: a subject, recipients, a plain-text part
    note: str | None = None    # the channel's line under the rendered text (an SMS's length)

    def frame(self) -> tuple[str, str]:
        """(media type, document) for the preview frame."""
        if self.html is not None:
            return "text/html", self.html
        if self.errors:
            return "text/plain", "\n".join(p.message for p in self.errors)
        return "text/plain", self.text or ""


def snapshot(workspace: Workspace, template: Template) -> snapshots.TemplateSnapshot:
    """What a send knows of the template (defaults, senders, the live version), from the
    send path's per-process cache."""
    snap = snapshots.snapshot(str(workspace.id), str(template.id))
    if snap is None:  # pragma: no cover - the caller loaded the template of this workspace
        raise LookupError(template.id)
    return snap


def resolved(workspace: Workspace, template: Template, content: dict[str, Any],
             tags: dict[str, str], body: dict[str, Any], *, number: int | None = None,
             admit: bool = False) -> Resolved:
    """A request as the send path resolves one, for ``content``: the live version itself
    when it is the live text (its stored program), else a transient version never saved."""
    snap = snapshot(workspace, template)
    live = snap.live
    if live is not None and live.content == content:
        version = live
    else:
        version = TemplateVersion(id=uuid.uuid5(_DRAFTS, str(template.id)), template=template,
                                  number=number or 0, status=VersionStatus.DRAFT,
                                  content=content, compiled=None)
    return resolve_version(body, snap, version, tags, preview=not admit, admit=admit)


def _tag_lists(preview: EditorPreview, metadata: dict[str, list[str]]) -> None:
    unused = set(metadata["unusedVariables"])
    preview.missing = list(metadata["missingVariables"])
    preview.unused = list(metadata["unusedVariables"])
    preview.used = [k for k in metadata["providedVariables"] if k not in unused] + preview.missing


def _errors(channel: str, content: dict[str, Any],
            rendering: list[dict[str, str]]) -> list[Problem]:
    """Rendering errors; a part that does not parse is reported with its line and column."""
    if not rendering:
        return []
    found = {p.field: p for p in syntax_problems(channel, content)}
    return [found.get(e["templatePart"]) or Problem(
        e["templatePart"], f"{label(e['templatePart'])}: {e['message']}") for e in rendering]


def _email(preview: EditorPreview, request: Resolved) -> None:
    result = build_preview(request)
    content = request.version.content
    preview.subject = result.rendered["subject"]
    if result.final is not None:
        preview.html, preview.text = result.final.html, result.final.text
    preview.errors = _errors(request.template.channel, content, result.rendering_errors)
    preview.recipients = result.recipients
    preview.warnings += [w["message"] for w in result.warnings]
    _tag_lists(preview, result.variables)
    address = content.get("fromAddress")
    if address and not sender_verified(request.workspace, request.template, address):
        preview.warnings.append(f"{address} is not a verified sender: publishing is refused "
                                "until it is (Settings, Senders).")


def _other(preview: EditorPreview, request: Resolved) -> None:
    """Every other channel: its template parts rendered, then its payload built as a send
    builds it (a webhook's JSON body is checked there)."""
    rendered, errors = render_parts(request)
    content = request.version.content
    parts = [part for part, _ in request.channel.template_parts(content)]
    shown = [(part, rendered.get(part)) for part in parts if rendered.get(part) is not None]
    preview.text = shown[0][1] if len(shown) == 1 else "\n\n".join(
        f"{label(part)}:\n{text}" for part, text in shown)
    preview.errors = _errors(request.template.channel, content, errors)
    _tag_lists(preview, variable_metadata([content.get(p) or "" for p in parts],
                                          request.tags))
    if errors:
        return
    try:
        payload(request, rendered)
    except ApiError as err:
        for part_path, messages in (err.errors or {}).items():
            part = part_path.rpartition(".")[2]
            preview.errors += [Problem(part, f"{label(part)}: {m}: a send would be refused.")
                               for m in messages]
    except (KeyError, TypeError, ValueError):
        pass  # a plugin channel whose payload needs request options the editor lacks


def _with_partial_drafts(workspace: Workspace, request: Resolved) -> list[str]:
    """Render with each partial's draft in place of its live text; the names of those the
    template calls (directly) that have one."""
    from engine.rendering import PartialSet, PartialSource, TemplateSyntaxError, partials_used

    from .partial_editing import preview_drafts

    drafts = preview_drafts(workspace)
    if not drafts:
        return []
    sources = dict(request.snap.partials.sources)
    sources.update({name: PartialSource(None, body) for name, body in drafts.items()})
    request.partials = PartialSet(sources)
    called: set[str] = set()
    for text in all_parts(request.template.channel, request.version.content).values():
        try:
            called |= partials_used(text)
        except TemplateSyntaxError:
            continue
    return sorted(called & set(drafts))


def preview(workspace: Workspace, template: Template, content: dict[str, Any],
            tags: dict[str, str]) -> EditorPreview:
    """Render ``content`` (the editor's text) with ``tags`` as a send would. Every parse,
    check and render of it shares one render budget (HERALD_RENDER_BUDGET_SECONDS), as an
    API preview's renders do: a hostile body costs that much, then reads as "took too
    long", whatever number of passes the editor's checks make over it."""
    channel = default_registry().channel(template.channel)
    options = channel.preview_options()  # as the channel declares them
    body = {channel.options_field: options} if options and channel.options_field else {}
    result = EditorPreview(template.channel, previewable=channel.previewable)
    with render_budget(runtime.settings().render_budget_seconds):
        request = resolved(workspace, template, content, tags, body)
        drafted = _with_partial_drafts(workspace, request)
        if drafted:
            result.warnings.append("Shown with the draft of partial " + ", ".join(drafted) +
                                   ": a send uses the published version until it is "
                                   "published.")
        if request.channel.previewable:
            _email(result, request)
        else:
            _other(result, request)
    if result.text is not None and not result.errors:
        result.note = channel.preview_note(result.text)
    return result
