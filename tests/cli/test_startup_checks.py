"""`herald serve` and `herald worker` refuse to start, in one line naming the setting, when
the database or Redis cannot be used; and say at start which channels are off."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from engine.queue.embedded_redis import free_port
from tests.conftest import TEST_SECRET_KEY

PASSWORD = "pw-never-shown-3141"


def _run(settings, tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
               "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
               **env}
    environ = {k: v for k, v in environ.items() if v != "<unset>"}
    return subprocess.run([sys.executable, "-m", "cli", *args], env=environ, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("command", [("serve", "--host", "127.0.0.1", "--port", "1"),
                                     ("worker", "--burst")])
@pytest.mark.parametrize(("env", "status", "start"), [
    ({"HERALD_REDIS_URL": "<unset>"}, 2,
     "herald: configuration error: HERALD_REDIS_URL: is not set"),
    # Unreachable is exit 1, which `RestartPreventExitStatus=2` still restarts.
    ({"HERALD_REDIS_URL": f"redis://:{PASSWORD}@127.0.0.1:{free_port()}/0"}, 1,
     "herald: cannot reach Redis: "),
    ({"HERALD_DATABASE_URL": f"postgresql://u:{PASSWORD}@127.0.0.1:{free_port()}/x"}, 1,
     "herald: cannot reach the database: "),
])
def test_an_unusable_dependency_is_one_line_naming_its_setting(settings, tmp_path, command,
                                                               env, status, start):
    proc = _run(settings, tmp_path, *command, **env)
    assert proc.returncode == status, proc.stderr
    assert proc.stderr.startswith(start) and proc.stderr.count("\n") == 1, proc.stderr
    assert ("HERALD_DATABASE_URL" in proc.stderr) or ("HERALD_REDIS_URL" in proc.stderr)
    assert PASSWORD not in proc.stderr + proc.stdout


def test_the_worker_says_at_start_which_channels_are_off(settings, tmp_path):
    proc = _run(settings, tmp_path, "worker", "--burst", HERALD_ENV="production",
                HERALD_EMAIL_PROVIDER="smtp://127.0.0.1:2525?tls=none",
                HERALD_SMS_PROVIDER="<unset>", HERALD_PUBLIC_URL="https://herald.example")
    assert proc.returncode == 0, proc.stderr
    (summary,) = [line for line in proc.stderr.splitlines() if "herald.startup" in line]
    assert "channels off: sms (HERALD_SMS_PROVIDER unset)" in summary


def test_a_redis_that_refuses_the_password_is_a_configuration_error(settings, tmp_path):
    """Refused (exit 2: a restart would only repeat it), not unreachable (exit 1)."""
    from redis import Redis

    from engine.queue.embedded_redis import start_redis

    server = start_redis()
    try:
        Redis.from_url(server.url).config_set("requirepass", "the-right-one")
        wrong = server.url.replace("redis://", f"redis://:{PASSWORD}@")
        proc = _run(settings, tmp_path, "worker", "--burst", HERALD_REDIS_URL=wrong)
    finally:
        server.stop()
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("herald: configuration error: HERALD_REDIS_URL: Redis "
                                  "refuses this process: "), proc.stderr
    assert PASSWORD not in proc.stderr + proc.stdout
