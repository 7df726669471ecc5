"""Static files, the template context every page shares, and workspace switching."""

from __future__ import annotations

from flask import Blueprint, current_app, g, redirect, url_for
from flask_login import current_user, login_required

from engine.database.vocabulary import HASH_PREFIX
from engine.formats.times import in_words
from engine.people import roles
from web.core import errors
from web.permissions import can

blueprint = Blueprint("core", __name__, template_folder="templates",
                      static_folder="../static", static_url_path="/assets")
errors.register(blueprint)


@blueprint.app_context_processor
def layout_context() -> dict:
    """What the layout needs: the switcher's workspaces and the current one, and whether
    this process serves the dev inbox (development with inbox://: the header links it)."""
    dev_inbox = "dev_inbox.page" in current_app.view_functions
    if not current_user.is_authenticated:
        return {"can": can, "dev_inbox": dev_inbox}
    mine = g.get("my_workspaces")
    if mine is None:
        mine = g.my_workspaces = roles.workspaces_of(current_user.user)
    return {"my_workspaces": mine, "workspace": g.get("workspace"), "role": g.get("role"),
            "role_label": roles.LABELS.get(g.get("role", ""), ""), "can": can,
            "dev_inbox": dev_inbox}


@blueprint.get("/favicon.ico")
def favicon():
    """Browsers ask every site for /favicon.ico when a page names no icon (a JSON answer,
    the API's documentation): the pages' own icon, not a 404 in the console."""
    return redirect(url_for("core.static", filename="favicon.svg"), 301)


@blueprint.get("/workspaces")
@login_required
def workspaces():
    from flask import render_template

    return render_template("core/workspaces.html", items=roles.workspaces_of(current_user.user))


def home_for_user():
    """Where a signed-in person lands: their first workspace, else the workspace list."""
    mine = roles.workspaces_of(current_user.user)
    if len(mine) >= 1:
        return redirect(url_for("workspace.templates", workspace_id=mine[0][0].id))
    return redirect(url_for("core.workspaces"))


@blueprint.app_template_filter("datetime")
def format_datetime(value, seconds: bool = False, zone: bool = True) -> str:
    """A time in words ("27 Nov 2026, 09:05 UTC"), not ISO (engine/formats/times.py)."""
    return in_words(value, seconds=seconds, zone=zone)


# How a suppression's scope reads (docs/delivery.md, "Suppression scope").
SCOPE_LABELS = {"all": "All mail", "marketing": "Marketing only"}


@blueprint.app_template_filter("suppression_scope")
def format_suppression_scope(value) -> str:
    """A scope in words: what the suppression stops (``topic:news``: Marketing of topic
    news; several topics of one address, as a report merges them, each named)."""
    text = str(value)
    if text.startswith("topic:"):
        names = [part.removeprefix("topic:") for part in text.split()]
        return "Topic " + ", ".join(names) + " only"
    return SCOPE_LABELS.get(text, text)


@blueprint.app_template_filter("recipient")
def format_recipient(value) -> str:
    """A recipient as pages show it: one kept as a keyed hash (an erased address's
    suppression, a purged notification's) reads as such, never as its hex."""
    text = "" if value is None else str(value)
    return "erased address (kept as a keyed hash)" if text.startswith(HASH_PREFIX) else text
