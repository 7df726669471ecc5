"""A workspace's email provider list and callback URL through `herald apply` and
`herald export`: round trips, and each bad entry refused with its path."""

from __future__ import annotations

import copy

import pytest

from engine.database.models import Workspace
from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document
from tests.engine.provisioning.sample_document import WS_ID, sample


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
