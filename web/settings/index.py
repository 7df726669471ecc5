"""The settings page itself: the list of a workspace's settings pages."""

from __future__ import annotations

from flask import render_template

from web.permissions import workspace_view
from web.settings.blueprint import blueprint


@blueprint.get("/")
@workspace_view("member")
def index():
    return render_template("settings/index.html", page="Settings")
