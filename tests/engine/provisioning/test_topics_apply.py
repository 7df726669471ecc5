"""`herald apply` and `herald export` carry a workspace's topics, its SMS help text, a
Marketing version's topic and topic suppressions; an older file and an older version
without a topic still apply unchanged."""

from __future__ import annotations

import copy

import pytest

from engine.database.models import Suppression, TemplateVersion, Workspace
from engine.database.models.recipients import Topic
from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document
from tests.conftest import _empty_tables


def document(**workspace) -> dict:
    version = {"status": "published", "subject": "News", "body": "<p>Hi</p>",
               "fromAddress": "hello@acme.example", "emailType": "Marketing",
               "topic": "news"}
    return {"accounts": [{"name": "Acme", "senders": {"domains": ["acme.example"]},
                          "workspaces": [{
        "name": "Production",
        "topics": [{"name": "news", "description": "The monthly newsletter"},
                   {"name": "product"}],
        "smsHelpText": "Acme alerts. Reply STOP to stop.",
        "suppressions": [{"address": "ada@acme.example", "scope": "topic:news"},
                         {"address": "ada@acme.example", "scope": "topic:product"}],
        "projects": [{"name": "P", "templates": [{"name": "Letter", "channel": "email",
                                                  "versions": [version]}]}],
        **workspace}]}]}


def test_topics_apply_export_and_round_trip(db):
    out = apply_document(document()).as_json()
    assert out["created"]["topics"] == 2
    assert {(t.name, t.description) for t in Topic.select()} == {
        ("news", "The monthly newsletter"), ("product", "")}
    assert Workspace.get().sms_help_text == "Acme alerts. Reply STOP to stop."
    assert TemplateVersion.get().content["topic"] == "news"
    assert sorted(r.scope for r in Suppression.select()) == ["topic:news", "topic:product"]
    exported = export_document()
    (workspace,) = exported["accounts"][0]["workspaces"]
    assert workspace["topics"] == [{"name": "news", "description": "The monthly newsletter"},
                                   {"name": "product"}]
    assert workspace["smsHelpText"] == "Acme alerts. Reply STOP to stop."
    version = workspace["projects"][0]["templates"][0]["versions"][0]
    assert version["topic"] == "news"
    assert apply_document(copy.deepcopy(exported)).as_json()["changed"] is False
    _empty_tables(db)
    apply_document(copy.deepcopy(exported))
    assert export_document() == exported


def test_a_version_written_before_topics_reapplies_unchanged(db):
    doc = document(topics=[], suppressions=[])
    del doc["accounts"][0]["workspaces"][0]["projects"][0]["templates"][0]["versions"][0]["topic"]
    apply_document(copy.deepcopy(doc))
    row = TemplateVersion.get()
    TemplateVersion.update(content={k: v for k, v in row.content.items() if k != "topic"}) \
        .execute()  # as a version stored before the field existed
    exported = export_document()
    version = exported["accounts"][0]["workspaces"][0]["projects"][0]["templates"][0][
        "versions"][0]
    assert "topic" not in version and "topics" not in exported["accounts"][0]["workspaces"][0]
    assert apply_document(copy.deepcopy(doc)).as_json()["changed"] is False


@pytest.mark.parametrize(("change", "where"), [
    ({"topics": [{"name": "news letter"}]}, "topics[0].name"),
    ({"topics": [{"name": "news"}, {"name": "news"}]}, "topics[1].name"),
    ({"smsHelpText": "x" * 321}, "smsHelpText"),
    ({"suppressions": [{"address": "a@acme.example", "scope": "topic:"}]},
     "suppressions[0].scope"),
])
def test_a_bad_topic_is_refused_with_its_path(db, change, where):
    with pytest.raises(ApplyError) as err:
        apply_document(document(**change))
    assert where in str(err.value)
    assert Workspace.select().count() == 0


def test_a_version_naming_an_unknown_topic_writes_nothing(db):
    with pytest.raises(ApplyError) as err:
        apply_document(document(topics=[{"name": "product"}]))
    assert "topic 'news' is not one of the workspace's topics" in str(err.value)
    assert Workspace.select().count() == 0 and Topic.select().count() == 0
