"""Templates as a read-only tree and Reports as counts, until their own pages arrive."""

from __future__ import annotations

from flask import Blueprint, g, redirect, render_template, url_for
from peewee import fn

from engine.store.models import Container, Notification, Project, Template
from engine.store.vocabulary import NotificationStatus
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


@blueprint.get("/reports")
@workspace_view("member")
def reports():
    rows = (Notification.select(Notification.status, fn.COUNT(Notification.id))
            .where(Notification.workspace == g.workspace,
                   Notification.is_test == False)  # noqa: E712 -- test sends are not counted
            .group_by(Notification.status).tuples())
    counts = dict.fromkeys([status.value for status in NotificationStatus], 0) | dict(rows)
    return render_template("workspace/reports.html", section="reports", counts=counts)
