"""What every authoring view needs: the workspace's own objects (another workspace's is a
404, as if it did not exist), who is acting, and whether htmx asked."""

from __future__ import annotations

import uuid
from typing import Any

from flask import abort, g, make_response, render_template, request
from flask_login import current_user

from engine.authoring import finding
from engine.catalog import snapshots
from engine.database.models import Container, Project, Template
from engine.formats import json_limits
from engine.plugins.manager import default_registry
from web import throttle
from web.core import errors

KINDS = {"projects": Project, "folders": Container, "templates": Template}


def parse_uuid(value: Any) -> uuid.UUID | None:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        return None


def project(project_id: Any) -> Project:
    key = parse_uuid(project_id)
    found = finding.project_in(g.workspace, key) if key else None
    return found or abort(404)


def folder(folder_id: Any) -> Container:
    key = parse_uuid(folder_id)
    found = finding.folder_in(g.workspace, key) if key else None
    return found or abort(404)


def template(template_id: Any) -> Template:
    key = parse_uuid(template_id)
    found = finding.template_in(g.workspace, key) if key else None
    return found or abort(404)


def authorable(template: Template) -> Template:
    """The template, when its channel's plugin is installed here (else a page that says so:
    it can still be renamed, moved or deleted, not edited)."""
    if template.channel not in default_registry().channels:
        abort(make_response(errors.page(409, f"This template's channel, {template.channel}, "
                                             "is not installed on this server: install its "
                                             "plugin to edit the template.")))
    return template


def template_as_sent(template_id: Any) -> Template:
    """The template from the send path's per-process snapshot (a few seconds old at most:
    what the preview, run at every pause in typing, needs of it does not change)."""
    key = parse_uuid(template_id)
    snap = snapshots.snapshot(str(g.workspace.id), str(key)) if key else None
    return snap.template if snap else abort(404)


def item(kind: str, item_id: Any) -> Project | Container | Template:
    loaders = {"projects": project, "folders": folder, "templates": template}
    if kind not in loaders:
        abort(404)
    return loaders[kind](item_id)


def kind_of(obj: Project | Container | Template) -> str:
    return {Project: "projects", Container: "folders", Template: "templates"}[type(obj)]


def location(value: str | None) -> tuple[Project, Container | None]:
    """A ``project:<id>`` or ``folder:<id>`` choice of a Location select."""
    kind, _, ident = (value or "").partition(":")
    if kind == "project":
        return project(ident), None
    if kind == "folder":
        found = folder(ident)
        return found.project, found
    abort(400)


def location_value(project_: Project, folder_: Container | None) -> str:
    return f"folder:{folder_.id}" if folder_ is not None else f"project:{project_.id}"


def posted() -> dict[str, str]:
    """The submitted fields: the editor's htmx requests send them as JSON (a 50 KB body
    percent-encoded costs ~20 ms to decode, multipart ~5 ms, JSON well under 1), a form
    without JavaScript as a form. Only text values count, whoever sent the request."""
    if request.is_json:
        data = bounded_json()
        items = data.items() if isinstance(data, dict) else ()
    else:
        items = request.form.items()
    return {key: value for key, value in items if isinstance(value, str)}


def bounded_json() -> Any:
    """The JSON body, held to the API's shape limits before it is parsed (the size limit,
    MAX_CONTENT_LENGTH, is the app's): a body too deep or with too many values is a 400
    that says why, never a RecursionError's 500 or a parse that takes a second."""
    raw = request.get_data(cache=True)
    try:
        return json_limits.loads_text(raw) if raw.strip() else None
    except (json_limits.StructureRefused, json_limits.NotText) as refused:
        abort(make_response(errors.page(400, f"The request was refused: {refused}.")))
    except ValueError:
        abort(make_response(errors.page(400, "The request was refused: its body is not "
                                             "valid JSON.")))


def limit(kind: str) -> None:
    """A person's share of a costly request (web/throttle.py): over it, a 429."""
    wait = throttle.per_person(kind, str(current_user.user.id))
    if wait:
        body, status = errors.page(429, f"Too many requests of this kind: wait {wait} "
                                        "seconds and try again.")
        abort(make_response(body, status, {"Retry-After": str(wait)}))


def fragment(name: str, **context: Any) -> str:
    """A part of a page for htmx to swap in: it has no layout, so the layout's context (the
    workspace switcher's query) is not needed."""
    g.my_workspaces = ()
    return render_template(name, **context)


def who() -> str:
    """How versions and the audit log name the person acting."""
    return current_user.email


def htmx() -> bool:
    return request.headers.get("HX-Request") == "true"


def current_user_row():
    """The signed-in user's row, for the audit log."""
    return current_user.user
