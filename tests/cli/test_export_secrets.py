"""`herald export` prints no credential; `apply` takes it back from the environment, and
refuses the dev inbox in production (issue #28, point 7)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from engine.database.models import Workspace
from tests.cli.test_cli import herald, write  # noqa: F401 -- the fixture
from tests.engine.provisioning.sample_document import WS_ID, sample

SECRET = "hunter2-S3cret"
PROVIDERS = [
    {"plugin": "smtp", "url": f"smtp://bob:{SECRET}@mx1.example:587?tls=starttls"},
    {"plugin": "postmark", "url": "postmark://pm-Token-77@?stream=outbound"},
]


def with_providers(providers) -> dict:
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["emailProvider"] = providers
    return doc


def run(herald, *args: str, **env: str) -> subprocess.CompletedProcess:  # noqa: F811
    return subprocess.run([sys.executable, "-m", "cli", *args], env={**herald.env, **env},
                          capture_output=True, text=True, timeout=60)


def test_export_writes_references_and_apply_with_them_set_changes_nothing(
        herald, tmp_path):  # noqa: F811
    herald("apply", write(tmp_path, with_providers(PROVIDERS)))
    stored = Workspace.get_by_id(WS_ID).email_provider
    proc = run(herald, "export", "--format", "yaml")
    assert proc.returncode == 0, proc.stderr
    for text in (proc.stdout, proc.stderr):
        assert SECRET not in text and "pm-Token-77" not in text
    exported = yaml.safe_load(proc.stdout)
    urls = [p["url"] for p in exported["accounts"][0]["workspaces"][0]["emailProvider"]]
    assert urls == ["smtp://bob:${SMTP_PASSWORD}@mx1.example:587?tls=starttls",
                    "postmark://${POSTMARK_TOKEN}@?stream=outbound"]
    assert "SMTP_PASSWORD, POSTMARK_TOKEN" in proc.stderr

    path = tmp_path / "exported.yaml"
    path.write_text(proc.stdout)
    again = run(herald, "apply", str(path), SMTP_PASSWORD=SECRET, POSTMARK_TOKEN="pm-Token-77")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["changed"] is False
    assert Workspace.get_by_id(WS_ID).email_provider == stored


def test_a_reference_whose_variable_is_unset_is_refused_naming_it(herald, tmp_path):  # noqa: F811
    doc = with_providers({"plugin": "smtp", "url": "smtp://bob:${MAIL_PW}@mx1.example:25"})
    env = {k: v for k, v in herald.env.items() if k != "MAIL_PW"}
    proc = subprocess.run([sys.executable, "-m", "cli", "apply", write(tmp_path, doc)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert ("accounts[0].workspaces[0].emailProvider.url: ${MAIL_PW} is not set in the "
            "environment") in proc.stderr
    assert Workspace.select().count() == 0


def test_a_password_with_url_characters_is_encoded_and_never_echoed(herald, tmp_path):  # noqa: F811
    password = "p@ss:w/rd?&"
    doc = with_providers({"plugin": "smtp", "url": "smtp://bob:${MAIL_PW}@mx1.example:25"})
    proc = run(herald, "apply", write(tmp_path, doc), MAIL_PW=password)
    assert proc.returncode == 0, proc.stderr
    stored = json.loads(Workspace.get_by_id(WS_ID).email_provider)
    assert stored["url"] == "smtp://bob:p%40ss%3Aw%2Frd%3F%26@mx1.example:25"
    bad = with_providers({"plugin": "smtp", "url": "smtp://bob:${MAIL_PW}@mx1.example:25"
                                                  "?tls=bogus"})
    proc = run(herald, "apply", write(tmp_path, bad, "bad.yaml"), MAIL_PW=password)
    assert proc.returncode == 1 and "tls must be one of" in proc.stderr
    assert "p%40ss" not in proc.stderr and password not in proc.stderr


@pytest.mark.parametrize(("provider", "valid_in_test"), [
    ({"plugin": "inbox", "url": "inbox://"}, True),
    ({"plugin": " Inbox ", "url": "inbox://"}, False),  # no such plugin: refused anyway
    ({"plugin": "smtp", "url": " INBOX://"}, True),
    ([{"plugin": "smtp", "url": "smtp://mx1.example:25"}, {"plugin": "inbox", "url": "inbox://"}],
     True),
])
def test_production_apply_refuses_the_dev_inbox_as_the_setting_does(
        herald, tmp_path, provider, valid_in_test):  # noqa: F811
    doc = with_providers(provider)
    production = {"HERALD_ENV": "production",
                  "HERALD_EMAIL_PROVIDER": "smtp://mx.example:25",
                  "HERALD_SMS_PROVIDER": "twilio://AC1:tok@"}
    proc = run(herald, "apply", write(tmp_path, doc), **production)
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert "inbox:// is for development and test only" in proc.stderr
    assert Workspace.select().count() == 0
    # Test mode takes what its plugins take.
    assert (run(herald, "apply", write(tmp_path, doc)).returncode == 0) is valid_in_test


@pytest.mark.parametrize(("setting", "value", "command"), [
    ("HERALD_DATABASE_URL", "postgresql://herald:{pw}@127.0.0.1:{port}/herald", ("db", "upgrade")),
    ("HERALD_DATABASE_URL", "postgresql://herald:{pw}@127.0.0.1:{port}/herald",
     ("worker", "--burst")),
    ("HERALD_DATABASE_URL", "postgresql://herald:{pw}@127.0.0.1:1/herald?sslmode=bogus",
     ("export",)),
    ("HERALD_REDIS_URL", "redis://herald:{pw}@127.0.0.1:{port}/0", ("queue",)),
    ("HERALD_EMAIL_PROVIDER", "smtp://bob:{pw}@127.0.0.1:{port}?tls=bogus", ("export",)),
])
def test_no_start_up_error_echoes_a_password(herald, tmp_path, setting, value,  # noqa: F811
                                             command):
    from engine.queue.embedded_redis import free_port

    password = "Pw'with space@and:colon"
    env = {**herald.env, setting: value.format(pw=password, port=free_port())}
    proc = subprocess.run([sys.executable, "-m", "cli", *command], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode in (1, 2), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    for piece in ("Pw'", "with space", "and:colon"):
        assert piece not in proc.stderr, proc.stderr
