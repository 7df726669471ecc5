"""`herald apply` of a partial file, as an operator runs it (issue #28, point 6)."""

from __future__ import annotations

from tests.cli.test_cli import herald, write  # noqa: F401 -- the fixture
from tests.engine.provisioning.test_partial_apply import full, partial


def test_a_partial_file_changes_only_what_it_names_and_prints_the_new_template(
        herald, tmp_path):  # noqa: F811
    herald("apply", write(tmp_path, full()))
    before = herald("export")
    out = herald("apply", write(tmp_path, partial(), "partial.yaml"))
    (created,) = out["templates"]
    assert set(created) == {"id", "name", "workspaceId", "channel"}
    after = herald("export")
    account = after["accounts"][0]
    assert {k: account[k] for k in ("plan", "monthlyLimit", "webhookDelivery", "senders")} == \
        {k: before["accounts"][0][k] for k in ("plan", "monthlyLimit", "webhookDelivery",
                                                "senders")}
    project = account["workspaces"][0]["projects"][0]
    assert created["id"] in {t["id"] for t in project["templates"]}
    project["templates"] = [t for t in project["templates"] if t["id"] != created["id"]]
    assert after == before
