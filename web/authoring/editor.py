"""The template editor: the page, autosave of the single draft, and Publish.

Autosave posts the whole form shortly after typing stops (htmx) and gets back the status
fragment; without JavaScript the same form is saved by its Save draft button. Publish saves
the text as typed, then publishes through engine/catalog/versions.py (as `herald templates
publish`). Messages about the draft go in the editor's one ``role=status`` element, never
in a second one, so "Saved" is what that status reads.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flask import g, redirect, render_template, request, session, url_for

from engine import runtime
from engine.authoring import (
    drafts,
    finding,
    hierarchy,
    languages,
    previews,
    publishing,
    samples,
)
from engine.authoring.drafts import Basis, DraftConflict, DraftError
from engine.authoring.publishing import Problem, PublishRefused
from engine.catalog import topics
from engine.catalog.versions import RETENTION
from engine.database.models import Template, TemplateVersion
from engine.people import audit
from engine.plugins.channel_contract import EditorField
from engine.plugins.manager import default_registry
from web.authoring import frames, loading, own_saves, snippets
from web.authoring.blueprint import blueprint
from web.permissions import workspace_view

NOTICE = "herald_editor_notice"
def editor_fields(template: Template) -> list[EditorField]:
    """The editor's fields, as the template's channel declares them (its editor_fields),
    each with its label (a field that names none: the editor's own name for it)."""
    channel = default_registry().channel(template.channel)
    return [field if field.label else replace(field, label=publishing.label(field.name))
            for field in channel.editor_fields]


def topic_names(template: Template, content: dict[str, Any]) -> list[str]:
    """The choices of a ``topic`` field (a Marketing email's select ``Topic``): the
    workspace's topics, and the version's own topic should it have been removed since."""
    fields = default_registry().channel(template.channel).editor_fields
    if not any(field.widget == "topic" for field in fields):
        return []
    found = topics.names(g.workspace.id)
    current = content.get("topic")
    return found if not current or current in found else [*found, current]


def notice(text: str) -> None:
    """A message for the editor's status once it reloads (instead of a flash)."""
    session[NOTICE] = text


def _senders() -> dict[str, Any]:
    """The From address field's hint: which addresses publishing will accept."""
    if g.workspace.email_provider is not None:
        return {"hint": "This workspace sends through its own provider: any address."}
    addresses, domains = finding.verified_senders(g.workspace.account_id)
    allowed = addresses + [f"any address at {domain}" for domain in domains]
    if not allowed:
        return {"hint": "This account has no verified sender yet (Settings, Senders): the "
                        "template cannot be published until it has one."}
    return {"hint": "Verified senders: " + ", ".join(allowed) + "."}


def integration(template: Template, tags: dict[str, str]) -> dict[str, str]:
    has_to = bool(previews.snapshot(g.workspace, template).defaults["to"])
    body = snippets.request_body(g.workspace, template, tags, has_to)
    base = runtime.settings().public_url
    return {"curl": snippets.curl(base, body), "python": snippets.python(base, body)}


def page(template: Template, *, content: dict[str, Any] | None = None,
         basis: Basis | None = None, problems: list[Problem] | None = None,
         conflict: DraftConflict | None = None, status_text: str | None = None,
         status: int = 200, sample: tuple[str, str] | None = None):
    """The editor; ``content`` and ``basis`` keep what was posted when it is shown again,
    ``sample`` a refused sample's text and why (Update preview without JavaScript)."""
    editable = drafts.editable(template)
    content = content if content is not None else editable.content
    basis = basis if basis is not None else editable.basis
    sample_tags = samples.remembered(template)
    token = frames.new_token()
    preview = previews.preview(g.workspace, template, content, sample_tags)
    frame_version = frames.stash(template, token, preview)
    plan = g.workspace.account.plan
    langs = languages.languages(template.channel, content)
    shown = request.args.get("language") or "default"
    return render_template(
        "authoring/editor.html", section="templates", template=template, content=content,
        basis=str(basis), editable=editable, problems={p.field: p for p in problems or []},
        problem_list=problems or [], conflict=conflict, token=token, preview=preview,
        frame_version=frame_version,
        sample_text=sample[0] if sample else samples.dumps(sample_tags),
        sample_error=sample[1] if sample else None,
        versions=finding.version_summaries(template), senders=_senders(),
        path=hierarchy.path_of(template),
        channel=default_registry().channel(template.channel),
        fields=editor_fields(template),
        topics=topic_names(template, content),
        retention=RETENTION.get(plan, RETENTION["basic"]), plan=plan,
        status_text=status_text or session.pop(NOTICE, None), languages=langs,
        shown_language=shown if shown in {lang.key for lang in langs} else "default",
        integration=integration(template, sample_tags)), status


@blueprint.get("/templates/<template_id>")
@workspace_view("member")
def editor(template_id):
    return page(loading.authorable(loading.template(template_id)))


def autosave_fragment(template: Template, *, saved: TemplateVersion | None = None,
                      error: str | None = None, conflict: DraftConflict | None = None,
                      basis: Basis | None = None, mine: dict[str, Any] | None = None):
    return loading.fragment("authoring/_autosave.html", template=template, saved=saved,
                           save_error=error, conflict=conflict, mine=mine,
                           basis=str(basis) if basis is not None else None)


def _posted(template: Template) -> tuple[dict[str, Any], Basis]:
    """The editor's text and the draft it was made from (``overwrite``: the newer draft the
    author chose to replace after a conflict)."""
    form = loading.posted()
    content = drafts.content_from_form(template.channel, form)
    chosen = form["overwrite"] if "overwrite" in form else form.get("basis")
    return content, Basis.parse(chosen)


def _save(template: Template, content: dict[str, Any], basis: Basis) -> TemplateVersion:
    """The editor's text saved as the draft; a revision its own page wrote since ``basis``
    is no one else's change (web/authoring/own_saves.py). Raises DraftError, DraftConflict."""
    page_token = loading.posted().get("page")
    draft = drafts.save_draft(template, content, own_saves.basis_for(template, basis, page_token),
                              loading.who())
    own_saves.wrote(template, draft, page_token)
    return draft


@blueprint.post("/templates/<template_id>/draft")
@workspace_view("member")
def save(template_id):
    loading.limit("draft")
    template = loading.authorable(loading.template(template_id))
    try:
        content, basis = _posted(template)
        draft = _save(template, content, basis)
    except DraftError as err:
        if loading.htmx():
            return autosave_fragment(template, error=str(err))
        problem = Problem(err.field or "body", str(err))
        return page(template, content=None, problems=[problem], status=400,
                    status_text=f"Not saved: {err}")
    except DraftConflict as conflict:
        if loading.htmx():
            # 200: htmx swaps only successful answers, and this one must be shown.
            return autosave_fragment(template, conflict=conflict, mine=content)
        return page(template, content=content, basis=basis, conflict=conflict, status=409,
                    status_text="Not saved: the draft changed elsewhere")
    if loading.htmx():
        return autosave_fragment(template, saved=draft, basis=Basis.of(draft))
    notice("Saved")
    return redirect(url_for("authoring.editor", workspace_id=g.workspace.id,
                            template_id=template.id), 303)


@blueprint.post("/templates/<template_id>/publish")
@workspace_view("member")
def publish(template_id):
    template = loading.authorable(loading.template(template_id))
    editable = drafts.editable(template)
    try:
        content, basis = _posted(template)
    except DraftError as err:
        return page(template, problems=[Problem(err.field or "body", str(err))], status=400,
                    status_text=f"Not published: {err}")
    if editable.draft is None and editable.live is not None and \
            content == editable.live.content:
        return page(template, problems=[Problem("draft", "Nothing to publish: this text is "
                                                         "the live version.")],
                    status=400, status_text="Not published: nothing changed")
    try:
        # The page's own autosave may land just before its Publish (a field's change is sent
        # as the button is pressed): that save is the page's, not a change made elsewhere.
        draft = _save(template, content, basis)
        version = publishing.publish_draft(g.workspace, template, draft.revision,
                                           loading.who())
    except DraftConflict as conflict:
        return page(template, content=content, basis=basis, conflict=conflict, status=409,
                    status_text="Not published: the draft changed elsewhere")
    except PublishRefused as refused:
        return page(template, content=content, basis=Basis.of(draft),
                    problems=refused.problems, status=400,
                    status_text="Saved, not published: see the problems above the editor")
    audit.record(g.workspace, loading.current_user_row(), "template.published",
                 template.name, {"templateId": str(template.id), "version": version.number})
    notice(f"Published: version {version.number} is live")
    return redirect(url_for("authoring.editor", workspace_id=g.workspace.id,
                            template_id=template.id), 303)


@blueprint.get("/templates/<template_id>/languages/new")
@workspace_view("member")
def new_language(template_id):
    template = loading.authorable(loading.template(template_id))
    return render_template("authoring/language_new.html", section="templates",
                           template=template, problem=None, value="")


@blueprint.post("/templates/<template_id>/languages")
@workspace_view("member")
def add_language(template_id):
    """A new language variant in the draft, started from the version's own text."""
    template = loading.authorable(loading.template(template_id))
    tag = (loading.posted().get("language") or "").strip()
    try:
        drafts.add_language(template, tag, loading.who())
    except DraftError as err:
        return render_template("authoring/language_new.html", section="templates",
                               template=template, problem=str(err), value=tag), 400
    except DraftConflict:
        return render_template("authoring/language_new.html", section="templates",
                               template=template, value=tag,
                               problem="The draft changed while adding the language: "
                                       "add it again."), 409
    notice(f"Language {tag} added: its text starts as the default's")
    return redirect(url_for("authoring.editor", workspace_id=g.workspace.id,
                            template_id=template.id, language=tag), 303)


@blueprint.post("/templates/<template_id>/languages/remove")
@workspace_view("member")
def confirm_remove_language(template_id):
    """Remove a language, first step: save the text as typed (nothing the author typed is
    lost by asking), then ask, since the variant's text leaves the draft."""
    template = loading.authorable(loading.template(template_id))
    tag = (loading.posted().get("remove_language") or "").strip()
    try:
        content, basis = _posted(template)
        draft = _save(template, content, basis)
    except DraftError as err:
        return page(template, problems=[Problem(err.field or "body", str(err))], status=400,
                    status_text=f"Not saved: {err}")
    except DraftConflict as conflict:
        return page(template, content=content, basis=basis, conflict=conflict, status=409,
                    status_text="Not saved: the draft changed elsewhere")
    if tag.lower() not in {
            lang.tag.lower() for lang in languages.languages(template.channel, draft.content)
            if lang.tag}:
        return page(template, problems=[Problem("draft", f"The draft has no language {tag}.")],
                    status=400, status_text="Nothing removed")
    return render_template("authoring/language_remove.html", section="templates",
                           template=template, draft=draft, tag=tag)


@blueprint.post("/templates/<template_id>/languages/remove/confirmed")
@workspace_view("member")
def remove_language(template_id):
    template = loading.authorable(loading.template(template_id))
    form = loading.posted()
    tag = (form.get("language") or "").strip()
    try:
        drafts.remove_language(template, tag, int(form.get("revision") or "-1"),
                               loading.who())
    except (ValueError, DraftConflict):  # DraftError is a ValueError
        return page(template, problems=[Problem("draft", f"Not removed: the draft changed "
                                                         f"since the confirmation; remove "
                                                         f"{tag} again if it should go.")],
                    status=409, status_text="Nothing removed")
    notice(f"Language {tag} removed from the draft: the live version sends it until you "
           "publish")
    return redirect(url_for("authoring.editor", workspace_id=g.workspace.id,
                            template_id=template.id), 303)
