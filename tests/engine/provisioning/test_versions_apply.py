"""Template versions and keys through `herald apply`: one live version, revocations
kept, a channel fixed once versions exist."""

from __future__ import annotations

import copy

import pytest

from engine.database.models import ApiKey, Template, Workspace
from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document
from tests.engine.provisioning.sample_document import TPL_ID, WELCOME, WS_ID, sample, welcome


def statuses(template_id: str = TPL_ID) -> dict[int, str]:
    return {v.number: v.status for v in Template.get_by_id(template_id).versions}


def test_reapplying_leaves_a_revoked_key_revoked(db):
    """A key revoked outside the file (herald keys revoke) must stay revoked: the file that
    names no status says nothing about revocation, and re-applying it changes nothing."""
    from engine.catalog.keys import revoke_key

    apply_document(sample())
    key = revoke_key(ApiKey.get(ApiKey.name == "backend"))
    again = apply_document(sample()).as_json()
    assert again["changed"] is False
    assert ApiKey.get_by_id(key.id).revoked_at == key.revoked_at


def test_a_file_cannot_undo_a_revocation(db):
    """`status: active` on a revoked key contradicts the database: refused, with its path."""
    apply_document(sample())
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["apiKeys"][1]["status"] = "active"
    with pytest.raises(ApplyError) as err:
        apply_document(doc)
    assert "accounts[0].workspaces[0].apiKeys[1].status" in str(err.value)
    assert "never undone" in str(err.value)
    assert ApiKey.get(ApiKey.name == "old").status_at() == "revoked"


def test_a_file_with_fewer_versions_leaves_exactly_one_live(db):
    """Versions the file does not list are kept, but the file's live one is the only live."""
    from engine.catalog import snapshots

    apply_document(sample())
    doc = sample()
    del welcome(doc)["versions"][1:]
    out = apply_document(doc).as_json()
    assert out["updated"] == {"versions": 2}
    assert statuses() == {1: "live", 2: "previous", 3: "draft"}
    assert apply_document(doc).as_json()["changed"] is False
    assert snapshots.snapshot(WS_ID, TPL_ID).live.number == 1


def test_a_file_without_published_versions_keeps_the_live_one(db):
    """A file that lists no published version says nothing about which one is live."""
    apply_document(sample())
    doc = sample()
    welcome(doc)["versions"] = []
    assert apply_document(doc).as_json()["changed"] is False
    assert statuses() == {1: "previous", 2: "live", 3: "draft"}


def two_versions() -> dict:
    doc = sample()
    welcome(doc)["versions"] = [
        {"status": "draft", "subject": "One", "body": "<p>1</p>"},
        {"status": "published", "subject": "Two", "body": "<p>2</p>"},
    ]
    return doc


def test_export_says_which_version_is_live_and_apply_keeps_it(db):
    """Publishing v1 after v2 makes the live one not the last published: the export must say
    so, re-applying it must change nothing, and a fresh database must get the same live one."""
    from engine.catalog.versions import get_version, publish
    from tests.conftest import _empty_tables

    apply_document(two_versions())
    publish(get_version(Template.get_by_id(TPL_ID), 1))
    assert statuses() == {1: "live", 2: "previous"}
    exported = export_document()
    versions = welcome(exported)["versions"]
    assert [v.get("live") for v in versions] == [True, None]
    assert apply_document(copy.deepcopy(exported)).as_json()["changed"] is False
    assert statuses() == {1: "live", 2: "previous"}
    _empty_tables(db)
    apply_document(copy.deepcopy(exported))
    assert statuses() == {1: "live", 2: "previous"}
    assert export_document() == exported


def test_the_last_published_version_carries_no_live_marker(db):
    apply_document(sample())
    assert all("live" not in v for v in welcome(export_document())["versions"])


def test_live_marks_one_published_version(db):
    """`live: true` is allowed once per template, on a published version, and only as true."""
    doc = sample()
    versions = welcome(doc)["versions"]
    versions[0]["live"] = True
    versions[1]["live"] = True
    versions[2]["live"] = True
    doc["accounts"][0]["workspaces"][0]["projects"][0]["templates"][0]["versions"][0][
        "live"] = False
    with pytest.raises(ApplyError) as err:
        apply_document(doc)
    text = "\n".join(err.value.problems)
    assert f"{WELCOME}.versions[1].live: a template has one live version" in text
    assert f"{WELCOME}.versions[2].live: only a published version can be live" in text
    assert "projects[0].templates[0].versions[0].live: must be true" in text
    assert Workspace.select().count() == 0
    doc = sample()
    welcome(doc)["versions"][0]["live"] = True
    apply_document(doc)
    assert statuses() == {1: "live", 2: "previous", 3: "draft"}


def test_a_channel_cannot_change_once_a_template_has_versions(db):
    apply_document(sample())
    doc = sample()
    code = doc["accounts"][0]["workspaces"][0]["projects"][0]["templates"][0]
    code["channel"] = "email"
    del code["versions"]  # the versions it has are sms ones all the same
    with pytest.raises(ApplyError) as err:
        apply_document(doc)
    assert ("accounts[0].workspaces[0].projects[0].templates[0].channel: channel cannot change "
            "(sms to email): create a new template") in str(err.value)
    assert Template.get(Template.name == "Code").channel == "sms"


def test_a_template_without_versions_may_change_channel(db):
    doc = sample()
    code = doc["accounts"][0]["workspaces"][0]["projects"][0]["templates"][0]
    code["versions"] = []
    apply_document(doc)
    code["channel"] = "webhook"
    apply_document(doc)
    assert Template.get(Template.name == "Code").channel == "webhook"
