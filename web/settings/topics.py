"""Topics (Owner or Admin): the kinds of Marketing email the workspace sends, each a
checkbox on the preferences page its recipients reach from an unsubscribe link, and the
answer to an SMS recipient's HELP (docs/delivery.md, "Topics", "SMS keywords"). Views over
engine/catalog/topics.py and sms_help.py."""

from __future__ import annotations

from flask import abort, flash, g, redirect, render_template, url_for
from flask_login import current_user

from engine.catalog import sms_help
from engine.catalog import topics as topic_list
from engine.people import audit
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.forms import HelpTextForm, TopicForm, mark
from web.settings.pages import settings_page


def _page(form: TopicForm | None = None, help_form: HelpTextForm | None = None,
          status: int = 200):
    if help_form is None:
        help_form = HelpTextForm(formdata=None)
        help_form.help_text.data = g.workspace.sms_help_text or ""
    return render_template("settings/topics.html", page="Topics",
                           form=form or TopicForm(formdata=None), help_form=help_form,
                           topics=topic_list.every(g.workspace.id),
                           help_limit=sms_help.MAX_HELP_TEXT), status


def _back():
    return redirect(url_for("settings.topics", workspace_id=g.workspace.id))


@blueprint.get("/topics")
@settings_page("topics")
def topics():
    return _page()


@blueprint.post("/topics")
@workspace_view("admin")
def add_topic():
    form = TopicForm()
    try:
        topic = topic_list.add(g.workspace.id, form.name.data or "", form.description.data or "")
    except topic_list.TopicError as err:
        mark(form.description if err.field == "description" else form.name, err.message)
        return _page(form, status=400)
    audit.record(g.workspace, current_user.user, "topic.added", topic.name)
    flash(f"Added the topic {topic.name}: a Marketing email can name it now.", "info")
    return _back()


@blueprint.get("/topics/<uuid:topic_id>/remove")
@workspace_view("admin")
def confirm_remove_topic(topic_id):
    topic = topic_list.find(g.workspace.id, topic_id)
    if topic is None:
        abort(404)
    return render_template("settings/topic_remove.html", page="Topics", topic=topic)


@blueprint.post("/topics/<uuid:topic_id>/remove")
@workspace_view("admin")
def remove_topic(topic_id):
    topic = topic_list.find(g.workspace.id, topic_id)
    if topic is None:
        abort(404)
    topic_list.remove(g.workspace.id, topic.id)
    audit.record(g.workspace, current_user.user, "topic.removed", topic.name)
    flash(f"Removed the topic {topic.name}.", "info")
    return _back()


@blueprint.post("/topics/help")
@workspace_view("admin")
def save_help_text():
    form = HelpTextForm()
    try:
        kept = sms_help.set_help_text(g.workspace.id, form.help_text.data)
    except sms_help.HelpTextError as err:
        mark(form.help_text, str(err))
        return _page(help_form=form, status=400)
    audit.record(g.workspace, current_user.user, "sms_help_text.changed", "")
    flash("Saved: HELP is answered with this text." if kept else
          "No help text: HELP is recorded and not answered.", "info")
    return _back()
