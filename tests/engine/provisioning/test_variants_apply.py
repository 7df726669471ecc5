"""`variants:` and `inlineCss` on a version in `herald apply` and `herald export`."""

from __future__ import annotations

import copy

import pytest

from engine.database.models import TemplateVersion
from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document


def document(version: dict) -> dict:
    base = {"status": "published", "subject": "Welcome {{name}}", "body": "<p>Hi {{name}}</p>",
            "fromAddress": "hi@acme.example"}
    return {"accounts": [{"name": "Acme", "senders": {"domains": ["acme.example"]},
                          "workspaces": [{"name": "W", "projects": [{"name": "P", "templates": [
                              {"name": "Welcome", "channel": "email",
                               "versions": [{**base, **version}]}]}]}]}]}


@pytest.fixture
def doc() -> dict:
    return document({"inlineCss": False, "variants": [
        {"locale": "fr", "subject": "Bienvenue {{name}}", "body": "<p>Salut {{name}}</p>"},
        {"locale": "pt-BR", "subject": "Bem-vindo {{name}}"}]})


def test_apply_stores_variants_and_export_round_trips(settings, doc):
    apply_document(doc)
    content = TemplateVersion.get().content
    assert content["inlineCss"] is False
    assert [v["locale"] for v in content["variants"]] == ["fr", "pt-BR"]
    exported = export_document()
    (version,) = exported["accounts"][0]["workspaces"][0]["projects"][0]["templates"][0][
        "versions"]
    assert version["variants"] == doc["accounts"][0]["workspaces"][0]["projects"][0][
        "templates"][0]["versions"][0]["variants"]
    assert version["inlineCss"] is False
    assert not apply_document(copy.deepcopy(exported)).as_json()["changed"]


def test_a_new_email_version_inlines_css_and_an_old_file_applies_again(settings):
    apply_document(document({}))
    assert TemplateVersion.get().content["inlineCss"] is True
    # The same file, which never named inlineCss, changes nothing on the published version.
    assert not apply_document(document({})).as_json()["changed"]


@pytest.mark.parametrize(("variant", "where", "message"), [
    ({"locale": "not a tag", "body": "x"}, "locale", "BCP 47"),
    ({"locale": "fr", "fromAddress": "x@acme.example"}, "fromAddress", "not a template part"),
    ({"locale": "fr", "body": "{{#if}}"}, "fr/body", "invalid template"),
    ({"locale": "fr", "body": 3}, "body", "a string or null"),
])
def test_bad_variants_are_reported_with_their_path(settings, variant, where, message):
    with pytest.raises(ApplyError) as caught:
        apply_document(document({"variants": [variant]}))
    assert message in str(caught.value) and where in str(caught.value)


def test_two_variants_for_one_tag_are_refused(settings):
    with pytest.raises(ApplyError, match="a second variant for FR"):
        apply_document(document({"variants": [{"locale": "fr", "body": "a"},
                                              {"locale": "FR", "body": "b"}]}))
