"""The `herald` command as an operator runs it: a real process, JSON out, errors on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from engine.database.models import ApiKey, Template, TemplateVersion, Workspace
from engine.queue.embedded_redis import free_port
from tests.conftest import TEST_SECRET_KEY
from tests.engine.provisioning.sample_document import TPL_ID, WS_ID, sample


@pytest.fixture
def herald(settings, tmp_path):
    env = {
        **os.environ,
        "HERALD_ENV": "test",
        "HERALD_DATABASE_URL": settings.database_url,
        "HERALD_REDIS_URL": settings.redis_url,
        "HERALD_SECRET_KEY": TEST_SECRET_KEY,
    }

    def run(*args: str, input: str | None = None, ok: bool = True):
        proc = subprocess.run(
            [sys.executable, "-m", "cli", *args], env=env, cwd=tmp_path, input=input,
            capture_output=True, text=True, timeout=60,
        )
        if ok:
            assert proc.returncode == 0, proc.stderr
            return json.loads(proc.stdout)
        return proc

    run.env = env  # type: ignore[attr-defined]
    return run


def write(tmp_path: Path, doc: dict, name: str = "tenants.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_db_upgrade_is_idempotent(herald):
    first = herald("db", "upgrade")
    second = herald("db", "upgrade")
    assert second["schema"]["from"] == second["schema"]["to"] == first["schema"]["to"]


def test_apply_prints_created_keys_once_and_reapply_changes_nothing(herald, tmp_path):
    path = write(tmp_path, sample())
    first = herald("apply", path)
    assert {k["name"] for k in first["apiKeys"]} == {"backend", "old", "temp"}
    assert all(set(k) >= {"id", "workspaceId", "name", "key"} for k in first["apiKeys"])
    second = herald("apply", path)
    assert second["changed"] is False and second["apiKeys"] == []


def test_apply_reads_json_from_stdin(herald):
    out = herald("apply", "-", input=json.dumps(sample()))
    assert len(out["apiKeys"]) == 3


def test_bad_file_exits_non_zero_with_the_problem_on_stderr(herald, tmp_path):
    doc = sample()
    doc["accounts"][0]["plan"] = "gold"
    proc = herald("apply", write(tmp_path, doc), ok=False)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "accounts[0].plan" in proc.stderr
    assert "Traceback" not in proc.stderr
    missing = herald("apply", str(tmp_path / "nope.yaml"), ok=False)
    assert missing.returncode == 1 and "cannot read" in missing.stderr
    garbage = tmp_path / "bad.yaml"
    garbage.write_text("accounts: [unclosed")
    proc = herald("apply", str(garbage), ok=False)
    assert proc.returncode == 1 and "neither valid YAML nor JSON" in proc.stderr


def test_export_round_trips_through_apply(herald, tmp_path):
    herald("apply", write(tmp_path, sample()))
    exported = herald("export")
    again = herald("apply", write(tmp_path, exported, "exported.yaml"))
    assert again["changed"] is False
    assert herald("export") == exported
    only = herald("export", "--workspace", WS_ID)
    assert only == exported
    proc = herald("export", "--workspace", "2b1c6a8e-0000-4c53-9d7e-2f5b0c8a9e11", ok=False)
    assert proc.returncode == 1 and "no workspace" in proc.stderr


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_output_into_a_closed_pipe_ends_quietly(herald, tmp_path, output):
    path = tmp_path / "herald.yaml"
    path.write_text(yaml.safe_dump(sample()))
    herald("apply", str(path))
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `herald export | head` once head has exited
    proc = subprocess.run([sys.executable, "-m", "cli", "export", "--format", output],
                          env=herald.env,
                          cwd=tmp_path, stdout=write_end, stderr=subprocess.PIPE, text=True,
                          timeout=60)
    os.close(write_end)
    assert (proc.returncode, proc.stderr) == (141, "")


def test_keys_create_and_revoke(herald, tmp_path):
    herald("apply", write(tmp_path, sample()))
    created = herald("keys", "create", "--workspace", WS_ID, "--name", "ci",
                     "--expires-at", "2999-01-01T00:00:00Z")
    assert created["key"].startswith("hk_") and created["status"] == "active"
    assert created["expiresAt"] == "2999-01-01T00:00:00Z"
    dup = herald("keys", "create", "--workspace", WS_ID, "--name", "ci", ok=False)
    assert dup.returncode == 1 and "already has a key" in dup.stderr
    revoked = herald("keys", "revoke", created["id"])
    assert revoked["status"] == "revoked" and "key" not in revoked
    assert ApiKey.get_by_id(created["id"]).revoked_at is not None
    bad = herald("keys", "revoke", "not-a-key", ok=False)
    assert bad.returncode == 1 and "no API key" in bad.stderr


def test_secret_rotate_prints_the_new_secret_once(herald, tmp_path):
    herald("apply", write(tmp_path, sample()))
    before = Workspace.get_by_id(WS_ID).signing_secret
    out = herald("secret", "rotate", "--workspace", WS_ID)
    assert list(out) == ["secret"]
    assert out["secret"] != before
    assert Workspace.get_by_id(WS_ID).signing_secret == out["secret"]


def test_secret_rotate_inbound_prints_the_new_url_and_is_audit_logged(herald, tmp_path):
    from engine.database.models.people import AuditEvent
    from engine.inbound import workspace_secrets
    from engine.people.audit import OPERATOR

    herald("apply", write(tmp_path, sample()))
    url = ("inbound", "url", "--workspace", WS_ID, "--provider", "postmark")
    before = herald(*url)["url"]
    assert herald(*url)["url"] == before  # made once, then kept
    out = herald("secret", "rotate-inbound", "--workspace", WS_ID, "--provider", "postmark")
    new = workspace_secrets.secret(WS_ID, "postmark")
    assert list(out) == ["workspaceId", "provider", "url"] and out["workspaceId"] == WS_ID
    assert out["url"] != before and f"herald:{new}@" in out["url"]
    assert out["url"].endswith(f"/api/inbound/postmark/{WS_ID}")
    assert herald(*url)["url"] == out["url"]
    assert not workspace_secrets.authentic(WS_ID, "postmark",
                                           before.split(":")[2].split("@")[0])
    (event,) = AuditEvent.select().where(AuditEvent.action == "inbound_secret.rotated")
    assert event.actor_label == OPERATOR and new not in str(event.details)
    unknown = herald("secret", "rotate-inbound", "--workspace",
                     "00000000-0000-4000-8000-000000000000", "--provider", "postmark", ok=False)
    assert unknown.returncode == 1 and "no workspace" in unknown.stderr
    for command in (("secret", "rotate-inbound"), ("inbound", "url")):
        twilio = herald(*command, "--workspace", WS_ID, "--provider", "twilio", ok=False)
        assert twilio.returncode == 1 and "--provider: no provider named 'twilio'" in \
            twilio.stderr and "postmark" in twilio.stderr


def test_template_lifecycle_publish_restore_lock(herald, tmp_path):
    herald("apply", write(tmp_path, sample()))
    published = herald("templates", "publish", TPL_ID)
    assert published == {"templateId": TPL_ID, "versionNumber": 3, "status": "live",
                         "locked": False}
    statuses = {v.number: v.status for v in Template.get_by_id(TPL_ID).versions}
    assert statuses == {1: "previous", 2: "previous", 3: "live"}
    none_left = herald("templates", "publish", TPL_ID, ok=False)
    assert none_left.returncode == 1 and "no draft" in none_left.stderr
    restored = herald("templates", "restore", TPL_ID, "--version", "1")
    assert restored["versionNumber"] == 4 and restored["status"] == "draft"
    v1 = TemplateVersion.get(TemplateVersion.template == TPL_ID, TemplateVersion.number == 1)
    v4 = TemplateVersion.get(TemplateVersion.template == TPL_ID, TemplateVersion.number == 4)
    assert v4.content == v1.content
    locked = herald("templates", "lock", TPL_ID, "--version", "1")
    assert locked["locked"] is True
    missing = herald("templates", "lock", TPL_ID, "--version", "99", ok=False)
    assert missing.returncode == 1 and "no version 99" in missing.stderr


def test_configuration_error_names_the_setting(herald):
    env = {**os.environ, "HERALD_ENV": "production"}
    env.pop("HERALD_SECRET_KEY", None)
    proc = subprocess.run([sys.executable, "-m", "cli", "db", "upgrade"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "HERALD_SECRET_KEY" in proc.stderr


def test_serve_refuses_to_expose_a_development_setup_to_the_network(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env["HERALD_DATABASE_URL"] = f"sqlite:///{tmp_path / 'h.sqlite3'}"

    def serve(**extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "cli", "serve", "--host", "0.0.0.0",
                               "--port", "9"], env={**env, **extra}, capture_output=True,
                              text=True, timeout=60)

    proc = serve()
    assert proc.returncode == 1 and "HERALD_SECRET_KEY" in proc.stderr, proc.stderr
    proc = serve(HERALD_SECRET_KEY=TEST_SECRET_KEY)
    assert proc.returncode == 1 and "HERALD_EMAIL_PROVIDER, HERALD_SMS_PROVIDER is inbox" in \
        proc.stderr, proc.stderr


def test_serve_allows_loopback_production_and_a_real_staging_setup():
    from cli.serve import exposure
    from config.settings import load_settings

    dev = load_settings({})
    assert all(exposure(dev, host) is None for host in ("127.0.0.1", "::1", "[::1]", "localhost"))
    assert exposure(dev, "0.0.0.0") and exposure(dev, "10.0.0.5")
    staging = load_settings({"HERALD_SECRET_KEY": TEST_SECRET_KEY,
                             "HERALD_EMAIL_PROVIDER": "smtp://mail.internal:25?tls=none",
                             "HERALD_SMS_PROVIDER": "twilio://sid:token@"})
    assert exposure(staging, "0.0.0.0") is None
    production = load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": TEST_SECRET_KEY})
    assert exposure(production, "0.0.0.0") is None


def test_reapply_after_keys_revoke_keeps_the_key_revoked(herald, tmp_path):
    """An emergency `herald keys revoke` must survive the next apply of the same file."""
    path = write(tmp_path, sample())
    herald("apply", path)
    backend = ApiKey.get(ApiKey.name == "backend")
    herald("keys", "revoke", str(backend.id))
    again = herald("apply", path)
    assert again["changed"] is False
    assert ApiKey.get_by_id(backend.id).status_at() == "revoked"


def test_export_after_publishing_an_older_draft_reapplies_unchanged(herald, db, tmp_path):
    """`templates publish` can make v1 live over v2; the export must carry that through apply,
    into this database and into an empty one."""
    from tests.conftest import _empty_tables

    doc = sample()
    doc["accounts"][0]["workspaces"][0]["projects"][0]["containers"][0]["templates"][0][
        "versions"] = [{"status": "draft", "subject": "One", "body": "<p>1</p>"},
                       {"status": "published", "subject": "Two", "body": "<p>2</p>"}]
    herald("apply", write(tmp_path, doc))
    herald("templates", "publish", TPL_ID)
    exported = herald("export")
    again = herald("apply", write(tmp_path, exported, "exported.yaml"))
    assert again["changed"] is False
    live = {v.number: v.status for v in Template.get_by_id(TPL_ID).versions}
    assert live == {1: "live", 2: "previous"}
    _empty_tables(db)
    herald("apply", str(tmp_path / "exported.yaml"))
    assert {v.number: v.status for v in Template.get_by_id(TPL_ID).versions} == live
    assert herald("export") == exported


@pytest.mark.parametrize("url", [
    "postgresql://postgres@127.0.0.1:{port}/herald",  # nothing listens there
    "sqlite:////dev/null/herald/h.sqlite3",  # a folder that cannot be made
])
@pytest.mark.parametrize("command", [
    ("db", "upgrade"), ("export",), ("keys", "revoke", "2b1c6a8e-0000-4c53-9d7e-2f5b0c8a9e11"),
    ("worker", "--burst"),
])
def test_an_unreachable_database_is_one_line_not_a_traceback(herald, tmp_path, url, command):
    env = {**herald.env, "HERALD_DATABASE_URL": url.format(port=free_port())}
    proc = subprocess.run([sys.executable, "-m", "cli", *command], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("herald: cannot reach the database: "), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr


def test_worker_processes_must_be_at_least_one(herald, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "cli", "worker", "--processes", "0"],
                          env=herald.env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (1, "herald: --processes must be at least 1, not 0\n")


def test_herald_dev_with_an_unreachable_database_stops_with_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env["HERALD_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:{free_port()}/herald"
    proc = subprocess.run([sys.executable, "-m", "cli", "dev", "--port", str(free_port())],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("herald: cannot reach the database: "), proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_schema_not_yet_made_is_a_database_error_not_a_traceback(herald, tmp_path):
    env = {**herald.env, "HERALD_DATABASE_URL": f"sqlite:///{tmp_path / 'empty.sqlite3'}"}
    proc = subprocess.run([sys.executable, "-m", "cli", "export"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("herald: database error: "), proc.stderr
    assert "Traceback" not in proc.stderr


def test_secrets_sealed_with_another_key_are_a_configuration_error(herald, tmp_path):
    herald("apply", write(tmp_path, sample()))
    env = {**herald.env, "HERALD_SECRET_KEY": TEST_SECRET_KEY + "-not-the-same"}
    for command in (("export",), ("secret", "rotate", "--workspace", WS_ID)):
        proc = subprocess.run([sys.executable, "-m", "cli", *command], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
        assert proc.stderr.startswith("herald: configuration error: HERALD_SECRET_KEY: "), \
            proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("name", [
    "HERALD_RECONCILE_AFTER_SECONDS", "HERALD_KEY_CACHE_SECONDS", "HERALD_WEBHOOK_BACKOFF",
])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "-1"])
def test_a_number_that_is_not_finite_or_negative_is_a_configuration_error(herald, tmp_path,
                                                                         name, value):
    proc = subprocess.run([sys.executable, "-m", "cli", "worker", "--burst"],
                          env={**herald.env, name: value}, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"herald: configuration error: {name}: "), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr


def test_keys_create_refuses_a_name_apply_would_refuse(herald, tmp_path):
    herald("apply", write(tmp_path, sample()))
    before = ApiKey.select().count()
    for name in ("", "   ", "k" * 201):
        proc = herald("keys", "create", "--workspace", WS_ID, "--name", name, ok=False)
        assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
        assert proc.stderr == ("herald: --name: a non-empty name of at most 200 characters "
                               "is required\n")
    assert ApiKey.select().count() == before
    # The longest name allowed is created, and the export holding it applies again.
    assert herald("keys", "create", "--workspace", WS_ID, "--name", "k" * 200)["name"] == "k" * 200
    assert herald("apply", write(tmp_path, herald("export"), "exported.yaml"))["changed"] is False


@pytest.mark.parametrize(("name", "value", "problem"), [
    ("HERALD_SMS_PROVIDER", "smtp://host:25?tls=bogus", "tls must be one of"),
    ("HERALD_EMAIL_PROVIDER", "nosuch://x", "no provider plugin handles nosuch:// URLs"),
])
def test_a_bad_provider_url_stops_every_command_at_start_up(tmp_path, name, value, problem):
    """Even a command that never sends, and without Redis: settings are checked first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env.update({"HERALD_DATABASE_URL": f"sqlite:///{tmp_path / 'h.sqlite3'}", name: value})
    for command in (("db", "upgrade"), ("dev", "--port", str(free_port()))):
        proc = subprocess.run([sys.executable, "-m", "cli", *command], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
        assert proc.stderr.startswith(f"herald: configuration error: {name}: "), proc.stderr
        assert problem in proc.stderr
        assert not (tmp_path / "h.sqlite3").exists()  # stopped before anything started


@pytest.mark.parametrize(("provider", "problem"), [
    ({"plugin": "nosuch", "url": "x://y"}, "no provider plugin handles nosuch:// URLs"),
    ({"plugin": "smtp", "url": "smtp://host?tls=bogus"}, "smtp provider: tls must be one of"),
])
def test_apply_refuses_a_workspace_provider_no_plugin_can_send_with(herald, tmp_path, provider,
                                                                    problem):
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["emailProvider"] = provider
    proc = herald("apply", write(tmp_path, doc), ok=False)
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert f"accounts[0].workspaces[0].emailProvider: {problem}" in proc.stderr
    assert Workspace.select().count() == 0
    doc["accounts"][0]["workspaces"][0]["emailProvider"] = {
        "plugin": "smtp", "url": "smtp://mailer:pw@mail.acme.example:587?tls=starttls"}
    herald("apply", write(tmp_path, doc))
    assert json.loads(Workspace.get_by_id(WS_ID).email_provider)["plugin"] == "smtp"
