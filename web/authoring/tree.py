"""The Templates page (the workspace's projects, folders and templates, each a link), the
project and folder pages, and creating each kind."""

from __future__ import annotations

from flask import g, redirect, render_template, request, url_for

from engine.authoring import finding, hierarchy
from engine.authoring.hierarchy import HierarchyError
from engine.database.models import Container, Project
from engine.people import audit
from engine.plugins.manager import default_registry
from web.authoring import loading
from web.authoring.blueprint import blueprint
from web.authoring.editor import notice
from web.authoring.forms import NewItemForm
from web.permissions import workspace_view

KIND_LABELS = {"project": "project", "folder": "folder", "template": "template"}


def _tree_context(projects: list[Project]) -> dict:
    found = finding.tree(projects)
    return {"projects": found.projects, "folders": found.folders, "items": found.templates,
            "live": found.live, "channel_labels": _channels()}


def templates_page():
    """The workspace's tree (served at workspace.templates, the main navigation's link)."""
    projects = finding.projects_of(g.workspace)
    query = (request.args.get("q") or "").strip()[:200]
    found = [(t, hierarchy.path_of(t)) for t in finding.named_like(g.workspace, query)] \
        if query else None
    return render_template("authoring/templates.html", section="templates", query=query,
                           found=found, **_tree_context(projects))


def _container_page(project: Project, folder: Container | None):
    item = folder or project
    context = _tree_context([project])
    return render_template(
        "authoring/container.html", section="templates", project=project, folder=folder,
        item=item, kind="folders" if folder else "projects",
        root=folder.id if folder else None, path=hierarchy.path_of(folder) if folder else [],
        inherited=hierarchy.inherited(folder) if folder else [],
        location=loading.location_value(project, folder), **context)


@blueprint.get("/projects/<project_id>")
@workspace_view("member")
def project_page(project_id):
    return _container_page(loading.project(project_id), None)


@blueprint.get("/folders/<folder_id>")
@workspace_view("member")
def folder_page(folder_id):
    folder = loading.folder(folder_id)
    return _container_page(folder.project, folder)


def _channels() -> dict[str, str]:
    """The Channel select, each channel by its label, in the order the channels declare
    (the built-in ones first, then those plugins bring)."""
    found = sorted(default_registry().channels.items(),
                   key=lambda item: (item[1].menu_position, item[0]))
    return {name: channel.label for name, channel in found}


def _new_form(kind: str, values: dict, problem: HierarchyError | None = None,
              status: int = 200):
    return render_template("authoring/new.html", section="templates", kind=kind,
                           values=values, problem=problem,
                           locations=hierarchy.locations(g.workspace),
                           channels=_channels()), status


@blueprint.get("/templates/new")
@workspace_view("member")
def new():
    kind = request.args.get("kind", "template")
    if kind not in KIND_LABELS:
        kind = "template"
    first = next(iter(_channels()), "")  # the channel listed first is the one chosen
    return _new_form(kind, {"location": request.args.get("location", ""), "channel": first})


def _created(kind: str, form: NewItemForm) -> tuple[str, object]:
    name = form.name.data
    if kind == "project":
        return "project", hierarchy.create_project(g.workspace, name)
    if not form.location.data:
        raise HierarchyError("Choose where it goes (a project first: folders and templates "
                             "live in one).", "location")
    project, folder = loading.location(form.location.data)
    if kind == "folder":
        return "folder", hierarchy.create_folder(project, folder, name)
    return "template", hierarchy.create_template(project, folder, name,
                                                 form.channel.data)


@blueprint.post("/templates/new")
@workspace_view("member")
def create():
    form = NewItemForm()
    kind = form.kind.data
    if kind not in KIND_LABELS:
        kind = "template"
    try:
        what, made = _created(kind, form)
    except HierarchyError as err:
        return _new_form(kind, form.posted(), err, 400)
    audit.record(g.workspace, loading.current_user_row(), f"{what}.created", made.name,
                 {f"{what}Id": str(made.id)})
    if what == "project":
        return redirect(url_for("authoring.project_page", workspace_id=g.workspace.id,
                                project_id=made.id), 303)
    if what == "folder":
        return redirect(url_for("authoring.folder_page", workspace_id=g.workspace.id,
                                folder_id=made.id), 303)
    notice(f"Created {made.name}: your first change starts its draft")
    return redirect(url_for("authoring.editor", workspace_id=g.workspace.id,
                            template_id=made.id), 303)
