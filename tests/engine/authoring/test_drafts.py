"""engine/authoring: the single draft, publish checks, restore, lock, compare, samples."""

from __future__ import annotations

import pytest

from engine.authoring import compare, drafts, publishing, samples
from engine.authoring.drafts import Basis, DraftConflict, DraftError
from engine.authoring.publishing import PublishRefused
from engine.catalog import versions
from engine.database.models import Template, TemplateVersion
from engine.provisioning.document import version_content, version_extras
from tests import factories


@pytest.fixture
def ws(settings):
    return factories.workspace()


@pytest.fixture
def template(ws) -> Template:
    return factories.template(ws, publish_it=False)


def _form(**fields) -> dict:
    base = {"subject": "Hi {{name}}", "body": "<p>Hi {{name}}</p>", "htmlHead": "",
            "fromAddress": "hello@example.com", "fromName": "", "emailType": "Transactional"}
    return {**base, **fields}


def test_the_form_becomes_content_as_apply_stores_it():
    content = drafts.content_from_form("email", _form(trackOpens="on", body="a\r\nb"))
    content.pop("topic", None)  # a Marketing version's topic: not this test's concern
    assert content == {"subject": "Hi {{name}}", "body": "a\nb", "htmlHead": None,
                       "fromAddress": "hello@example.com", "fromName": None,
                       "emailType": "Transactional", "trackOpens": True, "trackClicks": False,
                       "inlineCss": False}
    # What `herald apply` would store for the same version: export -> apply is a no-op.
    exported = {k: v for k, v in content.items()}
    stored = {**version_content("email", exported), **version_extras("email", exported, None)}
    stored.pop("topic", None)
    assert stored == content
    assert drafts.content_from_form("webhook", {"body": "{}"})["contentType"] == \
        "application/json"
    assert drafts.content_from_form("sms", {"body": "x", "fromNumber": " +14155550100 "}) == {
        "body": "x", "fromNumber": "+14155550100"}


def test_the_form_refuses_what_a_draft_cannot_hold():
    with pytest.raises(DraftError) as refused:
        drafts.content_from_form("email", _form(emailType="Bulk"))
    assert refused.value.field == "emailType"
    with pytest.raises(DraftError) as refused:
        drafts.content_from_form("sms", {"body": "x" * (drafts.MAX_FIELD_CHARS + 1)})
    assert refused.value.field == "body"


def test_the_first_save_starts_the_draft_and_each_save_moves_its_revision(template):
    TemplateVersion.delete().where(TemplateVersion.template == template).execute()
    first = drafts.save_draft(template, drafts.content_from_form("email", _form()),
                              Basis(None, 0), "ada@example.com")
    assert (first.number, first.status, first.revision, first.edited_by) == (
        1, "draft", 1, "ada@example.com")
    second = drafts.save_draft(template, drafts.content_from_form("email", _form(body="2")),
                               Basis.of(first), "ada@example.com")
    assert (second.number, second.revision) == (1, 2)
    assert TemplateVersion.get_by_id(first.id).content["body"] == "2"
    # Saving what the draft already holds succeeds whatever basis (a retry, a double click).
    again = drafts.save_draft(template, second.content, Basis(1, 1), "bob@example.com")
    assert again.revision == 2


def test_a_save_from_an_older_revision_is_refused_with_the_other_text(template):
    draft = versions.current_draft(template)
    seen = Basis.of(draft)
    drafts.save_draft(template, {**draft.content, "body": "tab one"}, seen, "ada@example.com")
    with pytest.raises(DraftConflict) as conflict:
        drafts.save_draft(template, {**draft.content, "body": "tab two"}, seen,
                          "bob@example.com")
    assert conflict.value.current.content["body"] == "tab one"
    assert conflict.value.current.edited_by == "ada@example.com"
    assert TemplateVersion.get_by_id(draft.id).content["body"] == "tab one"
    # The author chose to overwrite: saved against the revision they were shown.
    saved = drafts.save_draft(template, {**draft.content, "body": "tab two"},
                              Basis.of(conflict.value.current), "bob@example.com")
    assert (saved.content["body"], saved.revision) == ("tab two", draft.revision + 2)


def test_a_save_after_the_draft_was_published_is_refused(ws, template):
    draft = versions.current_draft(template)
    seen = Basis.of(draft)
    publishing.publish_draft(ws, template, draft.revision, "ada@example.com")
    with pytest.raises(DraftConflict) as conflict:
        drafts.save_draft(template, {**draft.content, "body": "late"}, seen, "bob@example.com")
    assert conflict.value.current is None and conflict.value.live.number == 1
    assert Basis.parse("garbage") == Basis(-1, -1) and Basis.parse("") == Basis(None, 0)


def test_publish_goes_through_the_lifecycle_and_names_who(ws, template):
    draft = versions.current_draft(template)
    live = publishing.publish_draft(ws, template, draft.revision, "ada@example.com")
    assert (live.status, live.published_by, live.compiled is not None) == (
        "live", "ada@example.com", True)
    second = drafts.save_draft(template, {**live.content, "body": "v2"}, Basis(None, 0), "x")
    publishing.publish_draft(ws, template, second.revision, "bob@example.com")
    assert [(v.number, v.status) for v in template.versions.order_by(TemplateVersion.number)] \
        == [(1, "previous"), (2, "live")]
    with pytest.raises(PublishRefused, match="no draft"):
        publishing.publish_draft(ws, template, 1, "ada@example.com")


def test_a_draft_that_does_not_parse_saves_but_does_not_publish(ws, template):
    draft = versions.current_draft(template)
    broken = {**draft.content, "body": "<p>\n  {{#if x}}open"}
    saved = drafts.save_draft(template, broken, Basis.of(draft), "ada@example.com")
    with pytest.raises(PublishRefused) as refused:
        publishing.publish_draft(ws, template, saved.revision, "ada@example.com")
    (problem,) = refused.value.problems
    assert (problem.field, problem.line) == ("body", 2)
    assert problem.message.startswith("Body: line 2, column ")
    assert versions.current_draft(template).status == "draft"


@pytest.mark.parametrize("address,expected", [
    (None, "enter the address"), ("not-an-address", "not a valid address"),
    ("ops@unverified.example", "is not a verified sender")])
def test_a_from_address_that_is_not_a_verified_sender_is_not_published(
        ws, template, address, expected):
    draft = versions.current_draft(template)
    saved = drafts.save_draft(template, {**draft.content, "fromAddress": address},
                              Basis.of(draft), "ada@example.com")
    with pytest.raises(PublishRefused) as refused:
        publishing.publish_draft(ws, template, saved.revision, "ada@example.com")
    assert [p.field for p in refused.value.problems] == ["fromAddress"]
    assert expected in refused.value.problems[0].message


def test_a_workspace_with_its_own_provider_publishes_any_address(settings):
    ws = factories.workspace(email_provider='{"plugin": "smtp", "url": "smtp://x:25"}')
    template = factories.template(ws, publish_it=False,
                                  content={"fromAddress": "ops@anywhere.example"})
    draft = versions.current_draft(template)
    assert publishing.publish_draft(ws, template, draft.revision, "a@b.c").status == "live"


def test_publish_refuses_a_draft_changed_since_it_was_saved(ws, template):
    draft = versions.current_draft(template)
    with pytest.raises(PublishRefused, match="changed"):
        publishing.publish_draft(ws, template, draft.revision + 1, "ada@example.com")


def test_webhook_and_sms_fields_are_checked_at_publish(ws):
    hook = factories.template(ws, "webhook", publish_it=False,
                              content={"contentType": "application/json\r\nX-Evil: 1"})
    sms = factories.template(ws, "sms", publish_it=False, content={"fromNumber": "12"})
    for template, field in ((hook, "contentType"), (sms, "fromNumber")):
        with pytest.raises(PublishRefused) as refused:
            publishing.publish_draft(ws, template, 0, "a@b.c")
        assert [p.field for p in refused.value.problems] == [field]


def test_restore_starts_a_draft_or_replaces_the_drafts_text(ws, template):
    one = versions.current_draft(template)
    publishing.publish_draft(ws, template, one.revision, "a@b.c")
    two = drafts.save_draft(template, {**one.content, "body": "v2"}, Basis(None, 0), "a@b.c")
    publishing.publish_draft(ws, template, two.revision, "a@b.c")
    restored = drafts.restore(template, 1, "bob@example.com")
    assert (restored.number, restored.status, restored.content) == (3, "draft", one.content)
    assert restored.edited_by == "bob@example.com"
    edited = drafts.save_draft(template, {**one.content, "body": "mine"}, Basis.of(restored),
                               "a@b.c")
    again = drafts.restore(template, 2, "a@b.c")
    assert (again.number, again.content["body"], again.revision) == (
        3, "v2", edited.revision + 1)
    with pytest.raises(versions.VersionError):
        drafts.restore(template, 3, "a@b.c")


def test_lock_and_unlock(ws, template):
    one = versions.current_draft(template)
    publishing.publish_draft(ws, template, one.revision, "a@b.c")
    assert drafts.set_locked(template, 1, True).locked
    assert TemplateVersion.get_by_id(one.id).locked
    assert not drafts.set_locked(template, 1, False).locked
    assert not TemplateVersion.get_by_id(one.id).locked


def test_compare_pairs_lines_side_by_side():
    left = {"subject": "Hi", "body": "a\nb\nc", "trackOpens": False}
    right = {"subject": "Hi", "body": "a\nB\nc\nd", "trackOpens": True}
    fields = {f.name: f for f in compare.compare("email", left, right)}
    assert fields["subject"].same and not fields["body"].same
    assert [(r.kind, r.left, r.right) for r in fields["body"].rows] == [
        ("equal", "a", "a"), ("replace", "b", "B"), ("equal", "c", "c"), ("insert", None, "d")]
    assert [(r.left, r.right) for r in fields["trackOpens"].rows] == [("off", "on")]
    assert fields["htmlHead"].same and fields["htmlHead"].rows == []


def test_sample_tags_follow_the_apis_tag_rules(template):
    assert samples.parse('{"name": "Ada", "n": 3, "vip": true, "none": null}') == {
        "name": "Ada", "n": "3", "vip": "true", "none": ""}
    assert samples.parse("  ") == {}
    for bad, message in (("[1]", "JSON object"), ("{", "not valid JSON"),
                         ('{"a": {"b": 1}}', "not a list or object"),
                         ('{"": "x"}', "needs a name"),
                         ('{"k": "' + "x" * 8193 + '"}', "8,192"),
                         ("[" * 100000, "JSON")):
        with pytest.raises(samples.SampleError, match=message):
            samples.parse(bad)
    samples.remember(template, {"name": "Ada"})
    samples.remember(template, {"name": "Bob"})
    assert samples.remembered(template) == {"name": "Bob"}


def test_a_preview_takes_the_partial_drafts_of_its_own_workspace_only(ws) -> None:
    from engine.authoring import partial_editing
    from engine.catalog import partials

    def save(partial, body):
        basis = partial_editing.editable(partial).basis
        return partial_editing.save_draft(partial, body, basis, by="a@example.com")

    footer = partials.create(ws.id, "footer")
    draft = save(footer, "Footer v1")
    partial_editing.publish_draft(footer, draft.revision, by="a@example.com")  # no draft
    save(partials.create(ws.id, "header"), "Header draft")
    other = factories.workspace()
    save(partials.create(other.id, "header"), "Theirs")
    assert partial_editing.preview_drafts(ws) == {"header": "Header draft"}
    save(footer, "Footer v2")
    assert partial_editing.preview_drafts(ws) == {"header": "Header draft",
                                                  "footer": "Footer v2"}
    assert partial_editing.preview_drafts(other) == {"header": "Theirs"}
