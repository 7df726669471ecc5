"""`partials:` per workspace in `herald apply` and `herald export`."""

from __future__ import annotations

import copy

import pytest

from engine.catalog import partials
from engine.database.models import Workspace
from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document


def document(footer_versions: list[dict], body: str = "{{#> layout}}Hi {{name}}{{/layout}}"
             ) -> dict:
    return {"accounts": [{
        "name": "Acme", "senders": {"domains": ["acme.example"]},
        "workspaces": [{
            "name": "Production",
            "partials": [
                {"name": "footer", "versions": footer_versions},
                {"name": "layout", "versions": [
                    {"status": "published",
                     "body": "<html><body>{{> @partial-block}}{{> footer}}</body></html>"}]},
            ],
            "projects": [{"name": "P", "templates": [{
                "name": "Welcome", "channel": "email",
                "versions": [{"status": "published", "subject": "Hi", "body": body,
                              "fromAddress": "hi@acme.example"}]}]}],
        }],
    }]}


def test_apply_writes_partials_and_export_round_trips(settings):
    doc = document([{"status": "published", "body": "<p>Acme, {{city}}</p>"},
                    {"status": "draft", "body": "<p>Acme Ltd, {{city}}</p>"}])
    out = apply_document(doc).as_json()
    assert out["created"]["partials"] == 2
    ws = Workspace.get(Workspace.name == "Production")
    live = partials.live_bodies(ws.id)
    assert live["footer"].body == "<p>Acme, {{city}}</p>"
    assert live["footer"].compiled
    exported = export_document()
    (workspace,) = exported["accounts"][0]["workspaces"]
    assert workspace["partials"][0] == {"name": "footer", "versions": [
        {"status": "published", "body": "<p>Acme, {{city}}</p>"},
        {"status": "draft", "body": "<p>Acme Ltd, {{city}}</p>"}]}
    again = apply_document(copy.deepcopy(exported)).as_json()
    assert not again["changed"], again
    assert export_document() == exported


def test_a_self_including_partial_fails_the_apply_naming_it(settings):
    doc = document([{"status": "published", "body": "x {{> footer}}"}])
    with pytest.raises(ApplyError, match="partial 'footer' includes itself"):
        apply_document(doc)
    assert not Workspace.select().exists()


def test_a_template_calling_a_missing_partial_fails_the_apply(settings):
    doc = document([{"status": "published", "body": "f"}], body="{{> signature}}")
    with pytest.raises(ApplyError, match="partial 'signature' does not exist"):
        apply_document(doc)


@pytest.mark.parametrize(("partial", "message"), [
    ({"name": "a b", "versions": []}, "letters, digits"),
    ({"name": "ok", "versions": [{"status": "published", "body": "{{#if}}"}]},
     "invalid template"),
    ({"name": "ok", "versions": [{"status": "live", "body": ""}]}, "published or draft"),
    ({"name": "ok", "extra": 1}, "unknown key"),
])
def test_bad_partials_are_reported_with_their_path(settings, partial, message):
    doc = document([{"status": "published", "body": "f"}])
    doc["accounts"][0]["workspaces"][0]["partials"].append(partial)
    with pytest.raises(ApplyError, match=r"workspaces\[0\]\.partials\[2\]") as caught:
        apply_document(doc)
    assert message in str(caught.value)
