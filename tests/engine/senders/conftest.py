from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import TEST_SECRET_KEY


@pytest.fixture
def senders_cli(sender_settings, zone, tmp_path):
    """`herald` as an operator runs it, asking ``zone`` for every DNS lookup."""
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": sender_settings.database_url,
           "HERALD_REDIS_URL": sender_settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HERALD_PUBLIC_URL": sender_settings.public_url,
           "HERALD_DNS_NAMESERVERS": f"127.0.0.1:{zone.port}",
           "HERALD_DKIM_ZONE": "dkim.herald.test", "HERALD_RETURN_PATH_DOMAIN": "rp.herald.test"}

    def run(*args: str, ok: bool = True, without: tuple[str, ...] = ()):
        used = {k: v for k, v in env.items() if k not in without}
        proc = subprocess.run([sys.executable, "-m", "cli", *args], env=used, cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        if not ok:
            return proc
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    return run
