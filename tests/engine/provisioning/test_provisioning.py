"""`herald apply` and `herald export` through the engine functions."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest

from engine.database.models import ApiKey, Template, TemplateVersion, Workspace
from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document
from tests.engine.provisioning.sample_document import (
    TPL_ID,
    WELCOME,
    WS_ID,
    sample,
    welcome,
)


def test_apply_creates_everything_and_prints_keys_once(db):
    out = apply_document(sample()).as_json()
    assert out["changed"] is True
    assert sorted(k["name"] for k in out["apiKeys"]) == ["backend", "old", "temp"]
    for key in out["apiKeys"]:
        assert key["workspaceId"] == WS_ID
        assert key["key"].startswith("hk_")
    assert str(Workspace.get().id) == WS_ID
    statuses = {k.name: k.status_at() for k in ApiKey.select()}
    assert statuses == {"backend": "active", "old": "revoked", "temp": "expired"}
    versions = {v.number: v.status for v in Template.get_by_id(TPL_ID).versions}
    assert versions == {1: "previous", 2: "live", 3: "draft"}
    live = TemplateVersion.get(TemplateVersion.status == "live",
                               TemplateVersion.template == TPL_ID)
    assert live.compiled is not None


def test_reapplying_an_unchanged_file_changes_nothing(db):
    apply_document(sample())
    before = export_document()
    again = apply_document(sample()).as_json()
    assert again["changed"] is False
    assert again["apiKeys"] == []
    assert export_document() == before


def test_key_values_never_reach_the_database(db, database_url):
    out = apply_document(sample()).as_json()
    values = [k["key"] for k in out["apiKeys"]]
    dump = []
    for model in (ApiKey,):
        for row in model.select().tuples():
            dump.extend(str(c) for c in row)
    joined = "\n".join(dump)
    for value in values:
        assert value not in joined
    if database_url.startswith("sqlite:///"):
        path = database_url[len("sqlite:///"):]
        db.execute_sql("PRAGMA wal_checkpoint(FULL)")
        raw = _file_bytes(path)
        assert raw.startswith(b"SQLite format 3")  # the file itself was read
        for value in values:
            assert value.encode() not in raw


def _file_bytes(path: str) -> bytes:
    """The file's bytes as read by a child process. Closing any descriptor this process holds
    on a SQLite file drops every POSIX lock the process's connections hold on it (SQLite's
    "How To Corrupt" page, 2.2): another process (`herald bounces` in a later test) then
    takes the file for its own and resets the WAL under this process's open connections."""
    read = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"
    proc = subprocess.run([sys.executable, "-c", read, path], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_export_round_trips_through_apply(db):
    apply_document(sample())
    exported = export_document()
    # Into an empty database: the same document comes back out.
    from tests.conftest import _empty_tables

    _empty_tables(db)
    apply_document(copy.deepcopy(exported))
    assert export_document() == exported


def test_invalid_template_fails_the_whole_apply_and_writes_nothing(db):
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["projects"][0]["templates"][0]["versions"][0][
        "body"] = "Code {{code"
    with pytest.raises(ApplyError) as err:
        apply_document(doc)
    assert "templates[0].versions[0]" in str(err.value)
    assert Workspace.select().count() == 0


def test_every_problem_is_reported_with_its_path(db):
    doc = {"accounts": [{"name": "", "plan": "gold", "monthlyLimit": -1, "workspaces": [
        {"name": "W", "id": "not-a-uuid", "apiKeys": [{"name": "a"}, {"name": "a"}],
         "projects": [{"name": "P", "templates": [{"name": "T", "channel": "fax"}]}]}]}]}
    with pytest.raises(ApplyError) as err:
        apply_document(doc)
    text = "\n".join(err.value.problems)
    for fragment in ("accounts[0].name", "accounts[0].plan", "accounts[0].monthlyLimit",
                     "workspaces[0].id", "apiKeys[1].name", "templates[0].channel"):
        assert fragment in text


def test_published_version_content_is_immutable(db):
    apply_document(sample())
    doc = sample()
    versions = doc["accounts"][0]["workspaces"][0]["projects"][0]["containers"][0][
        "templates"][0]["versions"]
    versions[0]["subject"] = "Changed"
    with pytest.raises(ApplyError, match="cannot change"):
        apply_document(doc)


def test_publishing_a_draft_through_apply_makes_it_live(db):
    apply_document(sample())
    doc = sample()
    versions = doc["accounts"][0]["workspaces"][0]["projects"][0]["containers"][0][
        "templates"][0]["versions"]
    versions[2]["status"] = "published"
    out = apply_document(doc).as_json()
    assert out["updated"] == {"versions": 2}
    statuses = {v.number: v.status for v in Template.get_by_id(TPL_ID).versions}
    assert statuses == {1: "previous", 2: "previous", 3: "live"}


def test_sender_allowance_of_the_plan_is_enforced(db):
    doc = sample()
    doc["accounts"][0]["plan"] = "basic"
    doc["accounts"][0]["senders"]["domains"] = ["a.example", "b.example"]
    with pytest.raises(ApplyError, match="allows 1 verified domain"):
        apply_document(doc)
    assert Workspace.select().count() == 0


def test_existing_key_is_never_reissued_but_follows_revocation(db):
    apply_document(sample())
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["apiKeys"][0]["status"] = "revoked"
    out = apply_document(doc).as_json()
    assert out["apiKeys"] == []
    assert ApiKey.get(ApiKey.name == "backend").status_at() == "revoked"


@pytest.mark.parametrize("content_type", ["application/json\r\nX-Injected: 1", "json", "café/x",
                                          "text/plain; charset"])
def test_a_webhook_content_type_must_be_a_media_type(db, content_type):
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["projects"][0]["templates"] = [{
        "name": "Hook", "channel": "webhook",
        "versions": [{"status": "published", "body": "{}", "contentType": content_type}]}]
    with pytest.raises(ApplyError) as err:
        apply_document(doc)
    assert "templates[0].versions[0].contentType" in str(err.value)
    assert Workspace.select().count() == 0
    doc["accounts"][0]["workspaces"][0]["projects"][0]["templates"][0]["versions"][0][
        "contentType"] = "application/cloudevents+json; charset=utf-8"
    apply_document(doc)


OTHER_ID = "0f0e0d0c-0b0a-4908-8706-050403020100"


@pytest.mark.parametrize("where", ["account", "workspace", "template"])
def test_an_id_that_contradicts_an_existing_name_is_refused(db, where):
    """Ids are kept: a file naming an existing object with another id is refused, not merged."""
    apply_document(sample())
    doc = sample()
    node, path = {
        "account": (doc["accounts"][0], "accounts[0]"),
        "workspace": (doc["accounts"][0]["workspaces"][0], "accounts[0].workspaces[0]"),
        "template": (welcome(doc), WELCOME),
    }[where]
    existing = {"account": lambda: str(Workspace.get_by_id(WS_ID).account_id),
                "workspace": lambda: WS_ID, "template": lambda: TPL_ID}[where]()
    node["id"] = OTHER_ID
    welcome(doc)["defaults"] = {"to": ["changed@acme.example"]}
    with pytest.raises(ApplyError) as err:
        apply_document(doc)
    message = str(err.value)
    assert f"{path}.id:" in message and OTHER_ID in message and existing in message
    assert Template.get_by_id(TPL_ID).defaults["to"] == ["team@acme.example"]
