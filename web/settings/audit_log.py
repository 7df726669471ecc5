"""The audit log, newest first (Owner or Admin)."""

from __future__ import annotations

from flask import g, render_template, request

from engine.people import audit
from web.permissions import workspace_view
from web.settings.blueprint import blueprint

PAGE_SIZE = 100


@blueprint.get("/audit-log")
@workspace_view("admin")
def audit_log():
    before = request.args.get("before", type=int)
    events = audit.recent(g.workspace, PAGE_SIZE + 1, before)
    return render_template("settings/audit_log.html", page="Audit log",
                           events=events[:PAGE_SIZE],
                           older=events[PAGE_SIZE - 1].id if len(events) > PAGE_SIZE else None)
