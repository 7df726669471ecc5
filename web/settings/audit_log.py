"""The audit log, newest first (Owner or Admin): in words, filtered by what and by whom, and
exported as CSV under the same filters."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from flask import Response, g, render_template, request

from engine.formats.spreadsheet_cells import inert
from engine.formats.times import as_utc, in_words
from engine.people import audit
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.pages import settings_page

PAGE_SIZE = 100
EXPORT_LIMIT = 10_000
# The objects the log speaks of, as a person names them; an area not here reads as its code
# in words (so an action a later change adds still reads, if plainly).
AREAS = {"api_key": "API key", "email_provider": "Email provider", "folder": "Folder",
         "invitation": "Invitation", "list": "List", "member": "Member",
         "inbound_secret": "Inbound secret", "project": "Project", "sender": "Sender",
         "suppression": "Suppression", "template": "Template", "callback": "Callback",
         "webhook_secret": "Webhook signing secret"}


def _words(code: str) -> str:
    return code.replace("_", " ")


def area_label(area: str) -> str:
    return AREAS.get(area, _words(area).capitalize())


def action_words(action: str) -> str:
    """``api_key.revoked`` as "API key revoked", ``template.version_locked`` as "Template
    version locked"."""
    area, _, verb = action.partition(".")
    return f"{area_label(area)} {_words(verb)}".strip()


def _key_words(key: str) -> str:
    """``expiresAt`` as "expires at", ``templateId`` as "template id"."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r" \1", key).replace("_", " ").lower()


def _value_words(value: Any) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if value is None:
        return "none"
    if isinstance(value, list | tuple):
        return ", ".join(_value_words(v) for v in value) or "none"
    if isinstance(value, dict):
        return "; ".join(f"{_key_words(k)} {_value_words(v)}" for k, v in value.items())
    return in_words(value) if as_utc(value) is not None else str(value)


def detail_words(details: dict[str, Any]) -> list[tuple[str, str]]:
    return [(_key_words(k), _value_words(v)) for k, v in (details or {}).items()]


def _filters() -> dict[str, str]:
    return {"what": request.args.get("what", ""), "who": request.args.get("who", "")}


@blueprint.get("/audit-log")
@settings_page("audit_log")
def audit_log():
    before = request.args.get("before", type=int)
    chosen = _filters()
    events = audit.recent(g.workspace, PAGE_SIZE + 1, before, chosen["what"] or None,
                          chosen["who"] or None)
    areas, people = audit.choices(g.workspace)
    return render_template("settings/audit_log.html", page="Audit log",
                           events=events[:PAGE_SIZE], chosen=chosen,
                           areas=[(a, area_label(a)) for a in areas], people=people,
                           action_words=action_words, detail_words=detail_words,
                           older=events[PAGE_SIZE - 1].id if len(events) > PAGE_SIZE else None)


@blueprint.get("/audit-log.csv")
@workspace_view("admin")
def export_audit_log():
    chosen = _filters()
    events = audit.recent(g.workspace, EXPORT_LIMIT, None, chosen["what"] or None,
                          chosen["who"] or None)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["at", "who", "what", "action", "subject", "details"])
    for e in events:
        writer.writerow([inert(c) for c in (
            e.at.isoformat() + "Z", e.actor_label, action_words(e.action), e.action, e.subject,
            json.dumps(e.details or {}, sort_keys=True))])
    return Response(out.getvalue(), mimetype="text/csv", headers={
        "Content-Disposition": 'attachment; filename="audit-log.csv"'})
