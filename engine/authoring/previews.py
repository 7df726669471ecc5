"""The editor's live preview: the text being edited, rendered by the API's own pipeline
(engine/sending.py: render_parts, and build_preview for email), with the sample tags.

The text is not saved first: a transient version carries it. Its id is one per template's
draft, so the render cache (keyed by that id and the text's hash) reuses the loaded
program while the text is unchanged and loads afresh the moment it changes.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from engine import catalog, sending
from engine.models import Template, TemplateVersion, Workspace
from engine.rendering import variable_metadata

from .publishing import Problem, sender_verified, syntax_problems

_DRAFTS = uuid.UUID("6d1f3c2a-8b4e-4f7a-9c1d-2e3f4a5b6c7d")  # namespace of draft cache keys


@dataclass
class EditorPreview:
    channel: str
    subject: str | None = None
    html: str | None = None  # the email's final HTML document (shown in the sandboxed frame)
    text: str | None = None  # the plain-text part (email) or the rendered body (SMS, webhook)
    errors: list[Problem] = field(default_factory=list)
    used: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    recipients: dict[str, list[str]] | None = None

    def frame(self) -> tuple[str, str]:
        """(media type, document) for the preview frame."""
        if self.html is not None:
            return "text/html", self.html
        if self.errors:
            return "text/plain", "\n".join(p.message for p in self.errors)
        return "text/plain", self.text or ""


def snapshot(workspace: Workspace, template: Template) -> catalog.TemplateSnapshot:
    """What a send knows of the template (defaults, senders, the live version), from the
    send path's per-process cache."""
    snap = catalog.snapshot(str(workspace.id), str(template.id))
    if snap is None:  # pragma: no cover - the caller loaded the template of this workspace
        raise LookupError(template.id)
    return snap


def resolved(workspace: Workspace, template: Template, content: dict[str, Any],
             tags: dict[str, str], body: dict[str, Any],
             number: int | None = None) -> sending.Resolved:
    """A request as the send path resolves one, for ``content``: the live version itself
    when it is the live text (its stored program), else a transient version never saved."""
    snap = snapshot(workspace, template)
    live = snap.live
    if live is not None and live.content == content:
        version = live
    else:
        version = TemplateVersion(id=uuid.uuid5(_DRAFTS, str(template.id)), template=template,
                                  number=number or 0, status="draft", content=content,
                                  compiled=None)
    return sending.Resolved(body, None, workspace, snap.account, template,  # type: ignore[arg-type]
                            version, tags, snap)


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
    return [found.get(e["templatePart"]) or Problem(e["templatePart"], e["message"])
            for e in rendering]


def _email(preview: EditorPreview, resolved: sending.Resolved) -> None:
    response = sending.build_preview(resolved)
    result = response["email"]
    content = resolved.version.content
    preview.subject = result["renderedContent"]["subject"]
    final = result["finalBodies"]
    if final is not None:
        preview.html, preview.text = final["htmlBody"], final["textBody"]
    preview.errors = _errors("email", content, result["renderingErrors"])
    preview.recipients = result["recipients"]
    preview.warnings += [w["message"] for w in response["validationErrors"]]
    _tag_lists(preview, result["variableMetadata"])
    address = content.get("fromAddress")
    if address and not sender_verified(resolved.workspace, resolved.template, address):
        preview.warnings.append(f"{address} is not a verified sender: publishing is refused "
                                "until it is (Settings, Senders).")


def _other(preview: EditorPreview, resolved: sending.Resolved) -> None:
    rendered, errors = sending.render_parts(resolved)
    content = resolved.version.content
    preview.text = rendered.get("body")
    preview.errors = _errors(resolved.template.channel, content, errors)
    _tag_lists(preview, variable_metadata([content.get("body") or ""], resolved.tags))
    if resolved.template.channel == "webhook" and preview.text is not None:
        content_type = content.get("contentType") or "application/json"
        if sending._is_json(content_type):  # the send's own rule (D7)
            try:
                json.loads(preview.text)
            except (ValueError, RecursionError):
                preview.errors.append(Problem("body", "Body: the rendered body is not valid "
                                                      f"JSON, and {content_type} says it is: "
                                                      "a send would be refused."))


def preview(workspace: Workspace, template: Template, content: dict[str, Any],
            tags: dict[str, str]) -> EditorPreview:
    """Render ``content`` (the editor's text) with ``tags`` as a send would."""
    request = resolved(workspace, template, content, tags, {})
    result = EditorPreview(template.channel)
    if template.channel == "email":
        _email(result, request)
    else:
        _other(result, request)
    return result
