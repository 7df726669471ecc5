"""A partial `herald apply` changes only what it names (issue #28, point 6)."""

from __future__ import annotations

import copy

import pytest

from engine.database.models import (
    Account,
    ApiKey,
    Container,
    Project,
    Template,
    TemplateVersion,
    Workspace,
)
from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document
from tests.engine.provisioning.sample_document import TPL_ID, WS_ID, sample

PROVIDER = {"plugin": "smtp", "url": "smtp://mx1.example:587?tls=starttls"}


def full() -> dict:
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["emailProvider"] = PROVIDER
    return doc


def snapshot() -> dict:
    """Every column of every row apply writes (apart from the rows' own timestamps)."""
    rows = {}
    for model in (Account, Workspace, Project, Container, Template, TemplateVersion, ApiKey):
        fields = [f for f in model._meta.sorted_field_names
                  if f not in ("created_at", "updated_at")]
        rows[model.__name__] = sorted(
            (tuple(str(getattr(row, f"{name}_id", getattr(row, name))) for name in fields)
             for row in model.select()), key=str)
    return rows


def partial() -> dict:
    """Names the account, workspace and project only to add one template."""
    return {"accounts": [{"name": "Acme", "workspaces": [{"name": "Production", "projects": [{
        "name": "Onboarding", "templates": [{
            "name": "Reminder", "channel": "sms",
            "versions": [{"status": "published", "body": "Reminder {{x}}",
                          "fromNumber": "+15005550006"}]}]}]}]}]}


def test_a_partial_file_adds_its_template_and_changes_nothing_else(db):
    apply_document(full())
    before_rows, before_doc = snapshot(), export_document()

    out = apply_document(partial()).as_json()

    (created,) = out["templates"]
    assert created["name"] == "Reminder" and created["workspaceId"] == WS_ID
    assert Template.get_by_id(created["id"]).channel == "sms"
    assert out["created"] == {"templates": 1, "versions": 1}
    assert out["updated"] == {}
    account = Account.get(Account.name == "Acme")
    assert (account.plan, account.monthly_limit, account.webhook_delivery) == ("pro", 50000,
                                                                              True)
    after_rows = snapshot()
    for model, rows in before_rows.items():
        extra = 1 if model in ("Template", "TemplateVersion") else 0
        assert len(after_rows[model]) == len(rows) + extra, model
        assert set(rows) <= set(after_rows[model]), model
    after_doc = export_document()
    templates = after_doc["accounts"][0]["workspaces"][0]["projects"][0]["templates"]
    after_doc["accounts"][0]["workspaces"][0]["projects"][0]["templates"] = [
        t for t in templates if t["name"] != "Reminder"]
    assert after_doc == before_doc


def test_fields_a_file_names_still_change_and_null_still_clears(db):
    apply_document(full())
    doc = {"accounts": [{"name": "Acme", "monthlyLimit": None, "workspaces": [
        {"name": "Production", "emailProvider": None,
         "apiKeys": [{"name": "temp", "expiresAt": None}]}]}]}
    out = apply_document(doc).as_json()
    assert out["updated"] == {"accounts": 1, "workspaces": 1, "apiKeys": 1}
    account = Account.get(Account.name == "Acme")
    assert account.monthly_limit is None and account.plan == "pro"
    assert Workspace.get_by_id(WS_ID).email_provider is None
    assert ApiKey.get(ApiKey.name == "temp").expires_at is None


def test_a_key_named_without_its_expiry_keeps_it(db):
    apply_document(full())
    expiry = ApiKey.get(ApiKey.name == "temp").expires_at
    doc = {"accounts": [{"name": "Acme", "workspaces": [
        {"name": "Production", "apiKeys": [{"name": "temp"}]}]}]}
    assert apply_document(doc).as_json()["changed"] is False
    assert ApiKey.get(ApiKey.name == "temp").expires_at == expiry


def test_the_output_lists_only_templates_it_created(db):
    out = apply_document(full()).as_json()
    assert {t["name"] for t in out["templates"]} == {"Welcome", "Code"}
    assert TPL_ID in {t["id"] for t in out["templates"]}
    assert apply_document(full()).as_json()["templates"] == []


def test_a_version_with_several_faults_reports_them_all(db):
    doc = copy.deepcopy(full())
    version = doc["accounts"][0]["workspaces"][0]["projects"][0]["containers"][0][
        "templates"][0]["versions"][0]
    version.update({"subject": "Hi {{name", "body": "<p>{{#if x}}</p>",
                    "htmlHead": "{{/each}}", "emailType": "Spam", "trackOpens": "yes"})
    with pytest.raises(ApplyError) as err:
        apply_document(doc)
    prefix = "accounts[0].workspaces[0].projects[0].containers[0].templates[0].versions[0]"
    faults = {p.split(":")[0] for p in err.value.problems}
    for field in ("subject", "body", "htmlHead", "emailType", "trackOpens"):
        assert f"{prefix}.{field}" in faults, err.value.problems
    assert Workspace.select().count() == 0
