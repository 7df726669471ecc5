"""The Partials pages (docs/web.md, "Partials"): the list, New partial, the partial's page
with the template editor's code editor and autosave, Publish after a confirmation that
lists the templates it changes (`Used by`), the versions table and Compare, Rename and
Delete (refused, naming the callers, while anything calls it). Thin views over
engine/authoring/partial_editing.py and engine/catalog/partials.py."""

from __future__ import annotations

from flask import abort, flash, g, redirect, render_template, request, session, url_for

from engine.authoring import compare as comparing
from engine.authoring import partial_editing as editing
from engine.authoring.drafts import Basis
from engine.catalog import partials as catalog
from engine.database.models.partials import Partial
from engine.database.vocabulary import VersionStatus
from engine.people import audit
from web.authoring import loading
from web.authoring.blueprint import blueprint
from web.permissions import workspace_view

NOTICE = "herald_partial_notice"
STATES = {VersionStatus.DRAFT: "Draft", VersionStatus.LIVE: "Live",
          VersionStatus.PREVIOUS: "Previous"}


def _partial(partial_id) -> Partial:
    return editing.in_workspace(g.workspace, partial_id) or abort(404)


def _back(partial: Partial):
    return redirect(url_for("authoring.partial", workspace_id=g.workspace.id,
                            partial_id=partial.id), 303)


@blueprint.get("/partials")
@workspace_view("member")
def partials_page():
    return render_template("authoring/partials.html", section="partials",
                           rows=editing.listing(g.workspace))


@blueprint.get("/partials/new")
@workspace_view("member")
def new_partial():
    return render_template("authoring/partial_new.html", section="partials", problem=None,
                           name="")


@blueprint.post("/partials")
@workspace_view("member")
def create_partial():
    name = (loading.posted().get("name") or "").strip()
    try:
        partial = catalog.create(g.workspace.id, name)
    except catalog.PartialError as err:
        return render_template("authoring/partial_new.html", section="partials",
                               problem=str(err), name=name), 400
    audit.record(g.workspace, loading.current_user_row(), "partial.created", name,
                 {"partialId": str(partial.id)})
    return _back(partial)


def _page(partial: Partial, *, body: str | None = None, basis: Basis | None = None,
          problem: str | None = None, conflict: editing.PartialConflict | None = None,
          status: int = 200, in_use: catalog.PartialInUse | None = None,
          rename_problem: str | None = None, new_name: str | None = None):
    found = editing.editable(partial)
    return render_template(
        "authoring/partial.html", section="partials", partial=partial, editable=found,
        body=found.body if body is None else body,
        basis=str(found.basis if basis is None else basis), problem=problem,
        conflict=conflict, versions=editing.versions(partial), states=STATES,
        status_text=session.pop(NOTICE, None), in_use=in_use,
        rename_problem=rename_problem,
        new_name=partial.name if new_name is None else new_name), status


@blueprint.get("/partials/<partial_id>")
@workspace_view("member")
def partial(partial_id):
    return _page(_partial(partial_id))


def _posted() -> tuple[str, Basis]:
    form = loading.posted()
    return editing.body_from(form.get("body")), Basis.parse(form.get("basis"))


def _fragment(partial: Partial, **context):
    return loading.fragment("authoring/_partial_autosave.html", partial=partial,
                            editable=None, **context)


@blueprint.post("/partials/<partial_id>/draft")
@workspace_view("member")
def save_partial(partial_id):
    loading.limit("draft")
    partial = _partial(partial_id)
    try:
        body, basis = _posted()
        draft = editing.save_draft(partial, body, basis, loading.who())
    except ValueError as err:
        if loading.htmx():
            return _fragment(partial, save_error=str(err))
        return _page(partial, problem=str(err), status=400)
    except editing.PartialConflict as conflict:
        if loading.htmx():
            return _fragment(partial, conflict=conflict)
        return _page(partial, body=body, basis=basis, conflict=conflict, status=409)
    if loading.htmx():
        return _fragment(partial, saved=draft, basis=str(Basis(draft.number, draft.revision)))
    session[NOTICE] = "Saved"
    return _back(partial)


@blueprint.post("/partials/<partial_id>/publish")
@workspace_view("member")
def confirm_publish(partial_id):
    """Publish, first step: save the text as typed and show what publishing changes."""
    partial = _partial(partial_id)
    try:
        body, basis = _posted()
        draft = editing.save_draft(partial, body, basis, loading.who())
    except ValueError as err:
        return _page(partial, problem=str(err), status=400)
    except editing.PartialConflict as conflict:
        return _page(partial, body=body, basis=basis, conflict=conflict, status=409)
    if draft.status != VersionStatus.DRAFT:
        return _page(partial, problem="Nothing to publish: this text is the live version.",
                     status=400)
    try:
        catalog.check_publish(partial, draft.body)
    except catalog.PartialError as err:
        return _page(partial, problem=f"Saved, not published: {err}", status=400)
    return render_template("authoring/partial_publish.html", section="partials",
                           partial=partial, draft=draft, used_by=editing.used_by(partial))


@blueprint.post("/partials/<partial_id>/publish/confirmed")
@workspace_view("member")
def publish_partial(partial_id):
    partial = _partial(partial_id)
    try:
        revision = int(loading.posted().get("revision") or "-1")
        version = editing.publish_draft(partial, revision, loading.who())
    except (ValueError, editing.PartialConflict):
        return _page(partial, problem="Not published: the draft changed since the "
                                      "confirmation; check it and publish again.", status=409)
    except catalog.PartialError as err:
        return _page(partial, problem=f"Not published: {err}", status=400)
    audit.record(g.workspace, loading.current_user_row(), "partial.published", partial.name,
                 {"partialId": str(partial.id), "version": version.number})
    session[NOTICE] = f"Published: version {version.number} is live"
    return _back(partial)


@blueprint.get("/partials/<partial_id>/compare")
@workspace_view("member")
def compare_partial(partial_id):
    partial = _partial(partial_id)
    versions = editing.versions(partial)
    if not versions:
        return _back(partial)
    by_number = {str(v.number): v for v in versions}
    newest = versions[0]
    live = next((v for v in versions if v.status == VersionStatus.LIVE), newest)
    left = by_number.get(request.args.get("a") or "", live)
    right = by_number.get(request.args.get("b") or "", newest if newest is not left else live)
    if left.number > right.number:
        left, right = right, left
    fields = comparing.compare_fields(("body",), {"body": left.body}, {"body": right.body})
    return render_template("authoring/compare.html", section="partials",
                           partial=partial, versions=versions, left=left, right=right,
                           fields=fields, states=STATES)


@blueprint.post("/partials/<partial_id>/rename")
@workspace_view("member")
def rename_partial(partial_id):
    """A new name while nothing calls the partial: renaming never rewrites a published
    template, so the callers move to a new partial first (docs/web.md, "Partials")."""
    partial = _partial(partial_id)
    old, name = partial.name, (loading.posted().get("name") or "").strip()
    try:
        editing.rename(partial, name)
    except catalog.PartialInUse as err:
        return _page(partial, in_use=err, new_name=name, status=409)
    except catalog.PartialError as err:
        return _page(partial, rename_problem=str(err), new_name=name, status=400)
    if name != old:
        audit.record(g.workspace, loading.current_user_row(), "partial.renamed", name,
                     {"partialId": str(partial.id), "from": old})
        session[NOTICE] = f"Renamed: templates call it as {{{{> {name}}}}}"
    return _back(partial)


@blueprint.post("/partials/<partial_id>/delete")
@workspace_view("member")
def delete_partial(partial_id):
    """Delete after a confirmation; refused while a template or a partial calls it."""
    partial = _partial(partial_id)
    try:
        if loading.posted().get("confirm") != "yes":
            templates, names = catalog.callers(partial)
            if templates or names:
                raise catalog.PartialInUse(partial.name, templates, names)
            return render_template("authoring/partial_delete.html", section="partials",
                                   partial=partial, versions=editing.versions(partial))
        editing.delete(partial)
    except catalog.PartialInUse as err:
        return _page(partial, in_use=err, status=409)
    audit.record(g.workspace, loading.current_user_row(), "partial.deleted", partial.name,
                 {"partialId": str(partial.id)})
    flash(f"Deleted the partial {partial.name}.", "info")
    return redirect(url_for("authoring.partials_page", workspace_id=g.workspace.id), 303)
