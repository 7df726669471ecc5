"""The live preview: the editor's text (unsaved) with the sample tags, rendered as a send
would render it, as a fragment beside the editor; the document goes to the sandboxed frame
(frames.py). The sample is remembered for the template."""

from __future__ import annotations

from flask import g, redirect, url_for

from engine.authoring import drafts, previews, samples
from engine.authoring.drafts import DraftError
from engine.authoring.samples import SampleError
from web.authoring import frames, loading
from web.authoring.blueprint import blueprint
from web.authoring.editor import integration, page
from web.authoring.render_slots import render_slot
from web.permissions import workspace_view


@blueprint.post("/templates/<template_id>/preview")
@workspace_view("member")
def preview(template_id):
    loading.limit("preview")
    # The slot first: a preview refused for want of one costs no parse of its body.
    with render_slot():
        return _preview(template_id)


def _preview(template_id):
    template = loading.authorable(loading.template_as_sent(template_id))
    form = loading.posted()
    sample_error = None
    try:
        tags = samples.parse(form.get("sample"))
    except SampleError as err:
        tags, sample_error = {}, f"Sample tags: {err}"
    # The page says which sample it last had remembered: only a changed one is written
    # (and only then do the integrator snippets, made from it, change).
    changed = sample_error is None and form.get("sample") != form.get("remembered")
    if changed:
        samples.remember(template, tags)
    if not loading.htmx():  # the Update preview button, without JavaScript
        if sample_error is not None:  # the page again, the sample as typed and marked
            return page(template, sample=(form.get("sample") or "", sample_error), status=400)
        return redirect(url_for("authoring.editor", workspace_id=g.workspace.id,
                                template_id=template.id), 303)
    try:
        content = drafts.content_from_form(template.channel, form)
    except DraftError as err:
        return loading.fragment("authoring/_preview_error.html", message=str(err))
    result = previews.preview(g.workspace, template, content, tags)
    token = form.get("editor", "")
    version = frames.stash(template, token, result)
    return loading.fragment("authoring/_preview.html", template=template, preview=result,
                            token=token, frame_version=version, sample_error=sample_error,
                            remembered=form.get("sample") if changed else None,
                            oob_integration=integration(template, tags) if changed else None)
