"""Templates as a read-only tree, until their own pages arrive (Reports: web/reports/)."""

from __future__ import annotations

from flask import Blueprint, g, redirect, render_template, url_for

from engine.store.models import Container, Project, Template
from web.core import errors
from web.permissions import workspace_view

blueprint = Blueprint("workspace", __name__, template_folder="templates",
                      url_prefix="/w/<uuid:workspace_id>")
errors.register(blueprint)


@blueprint.get("/")
@workspace_view("member")
def home():
    return redirect(url_for("workspace.templates", workspace_id=g.workspace.id))


@blueprint.get("/templates")
@workspace_view("member")
def templates():
    projects = list(Project.select().where(Project.workspace == g.workspace)
                    .order_by(Project.name))
    containers = list(Container.select().join(Project)
                      .where(Project.workspace == g.workspace).order_by(Container.name))
    items = list(Template.select().where(Template.workspace == g.workspace)
                 .order_by(Template.name))
    return render_template("workspace/templates.html", section="templates", projects=projects,
                           containers=containers, items=items)
