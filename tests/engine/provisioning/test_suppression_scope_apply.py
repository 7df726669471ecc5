"""`herald apply` and `herald export` carry a suppression's scope: an address alone stops all
mail, {address, scope: marketing} Marketing email only; an older file still applies."""

from __future__ import annotations

import copy

import pytest

from engine.catalog import suppressions
from engine.database.models import Suppression, Workspace
from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document


def document(entries: list) -> dict:
    return {"accounts": [{"name": "Acme", "workspaces": [
        {"name": "Production", "suppressions": entries}]}]}


def test_scopes_apply_export_and_round_trip(db):
    apply_document(document(["gone@acme.example",
                             {"address": "News@Acme.example", "scope": "marketing"},
                             {"address": "both@acme.example"}]))
    assert {r.address: r.scope for r in Suppression.select()} == {
        "gone@acme.example": "all", "news@acme.example": "marketing",
        "both@acme.example": "all"}
    exported = export_document()
    (workspace,) = exported["accounts"][0]["workspaces"]
    assert workspace["suppressions"] == ["both@acme.example", "gone@acme.example",
                                         {"address": "news@acme.example", "scope": "marketing"}]
    assert apply_document(copy.deepcopy(exported)).as_json()["changed"] is False
    from tests.conftest import _empty_tables

    _empty_tables(db)
    apply_document(copy.deepcopy(exported))
    assert export_document() == exported


def test_a_file_never_narrows_a_suppression_of_all_mail(db):
    apply_document(document(["ada@acme.example"]))
    ws = Workspace.get()
    assert suppressions.add(ws.id, ["ada@acme.example"], "unsubscribe") == 0
    apply_document(document([{"address": "ada@acme.example", "scope": "marketing"}]))
    assert Suppression.get().scope == "all"


@pytest.mark.parametrize("entry", [{"address": "a@acme.example", "scope": "sms"},
                                   {"scope": "all"}, {"address": "not an address"}])
def test_a_bad_entry_is_refused_with_its_path(db, entry):
    with pytest.raises(ApplyError) as err:
        apply_document(document(["ok@acme.example", entry]))
    assert "suppressions[1]" in "\n".join(err.value.problems)
    assert Suppression.select().count() == 0
