"""The workspace's home; Templates are web/authoring/'s pages, Reports web/reports/'s."""

from __future__ import annotations

from flask import Blueprint, g, redirect, url_for

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
    from web.authoring.tree import templates_page  # the authoring pages own this one

    return templates_page()

