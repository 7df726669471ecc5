"""The settings page itself: a summary of the workspace, each line linking its page."""

from __future__ import annotations

from flask import g, render_template

from engine.reports.settings_summary import summarise
from web.permissions import workspace_view
from web.settings.blueprint import blueprint


@blueprint.get("/")
@workspace_view("member")
def index():
    return render_template("settings/index.html", page="Settings",
                           summary=summarise(g.workspace))
