"""`herald apply` and `herald export` through the engine functions."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest

from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document
from engine.store.models import ApiKey, Template, TemplateVersion, Workspace

WS_ID = "2b1c6a8e-4d0f-4c53-9d7e-2f5b0c8a9e11"
TPL_ID = "7d3e1f20-1c2b-4a5d-8e9f-0a1b2c3d4e5f"


def sample() -> dict:
    return {
        "accounts": [{
            "name": "Acme",
            "plan": "pro",
            "monthlyLimit": 50000,
            "webhookDelivery": True,
            "senders": {"domains": ["acme.example"], "addresses": ["ops@other.example"]},
            "workspaces": [{
                "id": WS_ID,
                "name": "Production",
                "emailProvider": None,
                "suppressions": ["bounced@acme.example"],
                "apiKeys": [
                    {"name": "backend"},
                    {"name": "old", "status": "revoked"},
                    {"name": "temp", "expiresAt": "2020-01-01T00:00:00Z"},
                ],
                "projects": [{
                    "name": "Onboarding",
                    "defaults": {"to": [], "cc": [], "bcc": ["audit@acme.example"]},
                    "containers": [{
                        "name": "Emails",
                        "defaults": {},
                        "containers": [{"name": "Nested", "templates": []}],
                        "templates": [{
                            "id": TPL_ID,
                            "name": "Welcome",
                            "channel": "email",
                            "defaults": {"to": ["team@acme.example"]},
                            "versions": [
                                {"status": "published", "subject": "Welcome {{name}}",
                                 "body": "<p>Hi {{name}}</p>", "htmlHead": "<title>W</title>",
                                 "fromAddress": "hello@acme.example", "fromName": "Acme",
                                 "emailType": "Transactional", "trackOpens": False,
                                 "trackClicks": False},
                                {"status": "published", "subject": "Welcome again {{name}}",
                                 "body": "<p>Hello {{name}}</p>",
                                 "fromAddress": "hello@acme.example"},
                                {"status": "draft", "subject": "Draft", "body": "<p>wip</p>"},
                            ],
                        }],
                    }],
                    "templates": [{
                        "name": "Code", "channel": "sms",
                        "versions": [{"status": "published", "body": "Code {{code}}",
                                      "fromNumber": "+15005550006"}],
                    }],
                }],
            }],
        }]
    }


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


WELCOME = "accounts[0].workspaces[0].projects[0].containers[0].templates[0]"


def welcome(doc: dict) -> dict:
    return doc["accounts"][0]["workspaces"][0]["projects"][0]["containers"][0]["templates"][0]


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


def test_an_email_provider_list_applies_exports_and_reapplies_unchanged(db):
    providers = [{"plugin": "smtp", "url": "smtp://u:pw@mx1.example:587?tls=starttls"},
                 {"plugin": "inbox", "url": "inbox://"}]
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["emailProvider"] = providers
    apply_document(copy.deepcopy(doc))
    exported = export_document()
    (workspace,) = exported["accounts"][0]["workspaces"]
    # In order, the password a reference (docs/apply.md, "Credentials").
    assert workspace["emailProvider"] == [
        {"plugin": "smtp", "url": "smtp://u:${SMTP_PASSWORD}@mx1.example:587?tls=starttls"},
        providers[1]]
    assert apply_document(copy.deepcopy(doc)).as_json()["changed"] is False
    assert apply_document(exported, environ={"SMTP_PASSWORD": "pw"}).as_json()[
        "changed"] is False


@pytest.mark.parametrize(("providers", "path", "message"), [
    ([], "workspaces[0].emailProvider", "an empty list"),
    ([{"plugin": "smtp", "url": "smtp://mx1.example:25"},
      {"plugin": "smtp", "url": "smtp://mx2.example:25?tls=bogus"}],
     "workspaces[0].emailProvider[1]", "tls must be one of"),
    (["smtp://mx1.example:25"], "workspaces[0].emailProvider[0]", "expected an object"),
    ([{"plugin": "nosuch", "url": "nosuch://x"}], "workspaces[0].emailProvider[0]",
     "no provider plugin"),
])
def test_a_bad_entry_of_a_provider_list_is_refused_with_its_path(db, providers, path,
                                                                 message):
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["emailProvider"] = providers
    with pytest.raises(ApplyError) as err:
        apply_document(doc)
    assert any(p.startswith(f"accounts[0].{path}:") and message in p
               for p in err.value.problems), err.value.problems
    assert Workspace.select().count() == 0


def test_a_callback_url_applies_exports_and_reapplies_unchanged(db):
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["callbackUrl"] = "https://127.0.0.1:8443/cb"
    doc["accounts"][0]["workspaces"][0]["callbackTracking"] = False
    assert apply_document(copy.deepcopy(doc)).as_json()["changed"] is True
    row = Workspace.get_by_id(WS_ID)
    assert (row.callback_url, row.callback_tracking) == ("https://127.0.0.1:8443/cb", False)
    (workspace,) = export_document()["accounts"][0]["workspaces"]
    assert (workspace["callbackUrl"], workspace["callbackTracking"]) == (
        "https://127.0.0.1:8443/cb", False)
    assert apply_document(copy.deepcopy(doc)).as_json()["changed"] is False
    doc["accounts"][0]["workspaces"][0]["callbackUrl"] = None
    apply_document(copy.deepcopy(doc))
    assert Workspace.get_by_id(WS_ID).callback_url is None
    assert "callbackUrl" not in export_document()["accounts"][0]["workspaces"][0]


def test_a_callback_url_breaking_the_destination_rules_is_refused_with_its_rule(settings):
    from engine import runtime

    runtime.configure(settings.with_changes(webhook_allow_private=False))
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["callbackUrl"] = "http://hook.example.com/cb"
    with pytest.raises(ApplyError) as refused:
        apply_document(doc)
    message = str(refused.value)
    assert "workspaces[0].callbackUrl" in message and "rule: https:// only" in message
    assert Workspace.select().count() == 0
