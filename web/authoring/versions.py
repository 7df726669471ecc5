"""The versions table's actions: Restore (into the single draft), Lock and Unlock, and
Compare any two versions side by side, the draft included."""

from __future__ import annotations

from flask import abort, g, redirect, render_template, request, url_for

from engine.authoring import compare as comparing
from engine.authoring import drafts, finding
from engine.catalog.versions import VersionError, get_version
from engine.database.models import Template, TemplateVersion
from engine.database.vocabulary import VersionStatus
from engine.people import audit
from web.authoring import loading
from web.authoring.blueprint import blueprint
from web.authoring.editor import notice
from web.authoring.forms import ConfirmForm
from web.permissions import workspace_view

STATES = {VersionStatus.DRAFT: "Draft", VersionStatus.LIVE: "Live",
          VersionStatus.PREVIOUS: "Previous"}


def _back(template: Template):
    return redirect(url_for("authoring.editor", workspace_id=g.workspace.id,
                            template_id=template.id), 303)


def _version(template: Template, number: int) -> TemplateVersion:
    try:
        return get_version(template, number)
    except VersionError:
        abort(404)


@blueprint.post("/templates/<template_id>/versions/<int:number>/restore")
@workspace_view("member")
def restore(template_id, number):
    template = loading.template(template_id)
    source = _version(template, number)
    if source.status == VersionStatus.DRAFT:
        abort(400)
    draft = drafts.editable(template).draft
    if draft is not None and draft.content != source.content and \
            not ConfirmForm().confirmed:
        return render_template("authoring/restore.html", section="templates",
                               template=template, source=source, draft=draft)
    restored = drafts.restore(template, number, loading.who())
    audit.record(g.workspace, loading.current_user_row(), "template.restored", template.name,
                 {"templateId": str(template.id), "version": number,
                  "draft": restored.number})
    notice(f"Version {number} restored: the draft (version {restored.number}) has its text")
    return _back(template)


@blueprint.post("/templates/<template_id>/versions/<int:number>/<any(lock, unlock):action>")
@workspace_view("member")
def lock(template_id, number, action):
    template = loading.template(template_id)
    if _version(template, number).status == VersionStatus.DRAFT:
        abort(400)  # a draft is kept anyway; only published versions are pruned
    drafts.set_locked(template, number, action == "lock")
    audit.record(g.workspace, loading.current_user_row(), f"template.version_{action}ed",
                 template.name, {"templateId": str(template.id), "version": number})
    done = "locked: kept whatever the retention" if action == "lock" else "unlocked"
    notice(f"Version {number} {done}")
    return _back(template)


def _pick(versions: list[TemplateVersion], value: str | None,
          fallback: TemplateVersion) -> TemplateVersion:
    by_number = {str(v.number): v for v in versions}
    return by_number.get(value or "", fallback)


@blueprint.get("/templates/<template_id>/compare")
@workspace_view("member")
def compare(template_id):
    template = loading.template(template_id)
    versions = finding.versions(template)
    if not versions:
        return _back(template)
    newest = versions[0]
    live = next((v for v in versions if v.status == VersionStatus.LIVE), newest)
    left = _pick(versions, request.args.get("a"), live)
    right = _pick(versions, request.args.get("b"), newest if newest is not left else live)
    # Always older on the left, newer on the right: "added" then means what the newer has.
    if left.number > right.number:
        left, right = right, left
    fields = comparing.compare(template.channel, left.content, right.content)
    return render_template("authoring/compare.html", section="templates", template=template,
                           versions=versions, left=left, right=right, fields=fields,
                           states=STATES)
