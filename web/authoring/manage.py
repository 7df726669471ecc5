"""Name, place, default recipients and deletion of a project, folder or template.

Deleting a folder that holds anything, or a template with a published version, asks first
and says what goes with it: sends by a deleted template's id fail with template_not_found.
"""

from __future__ import annotations

from flask import g, redirect, render_template, url_for

from engine.authoring import hierarchy
from engine.authoring.hierarchy import HierarchyError
from engine.database.models import Container, Project, Template
from engine.people import audit
from engine.plugins.channel_contract import BaseChannel, Channel
from engine.plugins.manager import default_registry
from web.authoring import loading
from web.authoring.blueprint import blueprint
from web.authoring.forms import ConfirmForm, DefaultsForm, MoveForm, RenameForm
from web.permissions import workspace_view

KIND = "<any(projects, folders, templates):kind>"
SINGULAR = {"projects": "project", "folders": "folder", "templates": "template"}
LIST_LABELS = (("to", "To"), ("cc", "Cc"), ("bcc", "Bcc"))


def _channel(item) -> Channel | None:
    """A template's channel (None for a project or folder, or a channel not installed)."""
    return default_registry().channels.get(item.channel) if isinstance(item, Template) \
        else None


def _lists(item) -> tuple[tuple[str, str], ...]:
    """The default lists this item takes: a template's channel declares its own (an SMS
    template has numbers in To only, a webhook template none: its destination comes with
    each send); a project or folder keeps every list, for the templates under it."""
    if not isinstance(item, Template):
        return LIST_LABELS
    channel = _channel(item)
    return channel.default_recipient_lists if channel is not None else ()


def _recipients_note(item) -> str:
    """Said where a template keeps no default lists, as its channel declares it."""
    channel = _channel(item)
    return channel.recipients_note if channel is not None else BaseChannel.recipients_note


def _page(kind: str, item, problem: HierarchyError | None = None, values: dict | None = None,
          status: int = 200):
    current = loading.location_value(item.project, item.container if isinstance(
        item, Template) else item.parent) if not isinstance(item, Project) else ""
    return render_template(
        "authoring/manage.html", section="templates", kind=kind, singular=SINGULAR[kind],
        item=item, problem=problem, values=values or {}, lists=_lists(item),
        channel=_channel(item), recipients_note=_recipients_note(item),
        locations=hierarchy.locations(
            g.workspace, item if isinstance(item, Container) else None), current=current,
        inherited=[] if isinstance(item, Project) else hierarchy.inherited(item)), status


def _back(item) -> str:
    """The page that shows ``item``."""
    ws = g.workspace.id
    if isinstance(item, Project):
        return url_for("authoring.project_page", workspace_id=ws, project_id=item.id)
    if isinstance(item, Container):
        return url_for("authoring.folder_page", workspace_id=ws, folder_id=item.id)
    return url_for("authoring.editor", workspace_id=ws, template_id=item.id)


def _parent_page(item) -> str:
    ws = g.workspace.id
    if isinstance(item, Project):
        return url_for("workspace.templates", workspace_id=ws)
    parent = item.container if isinstance(item, Template) else item.parent
    return _back(parent or item.project)


@blueprint.get(f"/{KIND}/<item_id>/manage")
@workspace_view("member")
def manage(kind, item_id):
    return _page(kind, loading.item(kind, item_id))[0]


def _done(item, action: str, details: dict | None = None):
    audit.record(g.workspace, loading.current_user_row(), f"{SINGULAR[loading.kind_of(item)]}."
                 f"{action}", item.name, {"id": str(item.id), **(details or {})})
    return redirect(_back(item), 303)


@blueprint.post(f"/{KIND}/<item_id>/rename")
@workspace_view("member")
def rename(kind, item_id):
    item = loading.item(kind, item_id)
    before = item.name
    form = RenameForm()
    try:
        hierarchy.rename(item, form.name.data)
    except HierarchyError as err:
        return _page(kind, item, err, form.posted(), 400)
    return _done(item, "renamed", {"from": before})


@blueprint.post(f"/{KIND}/<item_id>/move")
@workspace_view("member")
def move(kind, item_id):
    item = loading.item(kind, item_id)
    if isinstance(item, Project):
        return _page(kind, item, HierarchyError("A project stays in its workspace.",
                                                "location"), status=400)
    form = MoveForm()
    project, folder = loading.location(form.location.data)
    try:
        if isinstance(item, Container):
            hierarchy.move_folder(item, project, folder)
        else:
            hierarchy.move_template(item, project, folder)
    except HierarchyError as err:
        return _page(kind, item, err, form.posted(), 400)
    return _done(item, "moved", {"to": form.location.data})


@blueprint.post(f"/{KIND}/<item_id>/defaults")
@workspace_view("member")
def defaults(kind, item_id):
    item = loading.item(kind, item_id)
    channel = _channel(item)
    numbers = channel is not None and channel.recipient_kind == "phone"
    lists = {}
    form = DefaultsForm()
    try:
        for key, _label in _lists(item):
            lists[key] = hierarchy.parse_recipients(form[key].data, numbers=numbers,
                                                    field=key)
    except HierarchyError as err:
        return _page(kind, item, err, form.posted(), 400)
    hierarchy.set_defaults(item, lists)
    return _done(item, "recipients_changed")


@blueprint.post(f"/{KIND}/<item_id>/delete")
@workspace_view("member")
def delete(kind, item_id):
    item = loading.item(kind, item_id)
    if isinstance(item, Template):
        contents, ask = None, hierarchy.has_published(item)
    else:
        contents = hierarchy.contents(item)
        ask = not contents.empty
    if ask and not ConfirmForm().confirmed:
        return render_template("authoring/delete.html", section="templates", kind=kind,
                               singular=SINGULAR[kind], item=item, contents=contents)
    back = _parent_page(item)
    audit.record(g.workspace, loading.current_user_row(), f"{SINGULAR[kind]}.deleted",
                 item.name, {"id": str(item.id)})
    hierarchy.delete(item)
    return redirect(back, 303)
