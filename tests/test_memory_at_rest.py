"""What a process imports at rest: the libraries of a feature few requests use (passkeys,
single sign-on, password hashing and scoring, spreadsheets, CSS inlining, HTML to text,
DNS, DKIM, phone numbers, the webhook transport, the at-rest cipher) are imported at first
use, so an idle API worker or worker process does not carry their memory
(docs/performance.md, "Memory at rest"). Each check runs in a fresh interpreter: this test
process has imported everything already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Top-level packages no process needs before a request or job uses them.
LAZY = ("webauthn", "cbor2", "pyasn1", "OpenSSL", "authlib", "joserfc", "requests",
        "zxcvbn", "segno", "css_inline", "openpyxl", "xlrd", "odf", "python_calamine",
        "lxml", "dns", "dkim", "phonenumbers", "argon2", "urllib3", "certifi")
# Modules of a package something at start imports the top of: redis imports `cryptography`
# (its version only); its bindings (about 9 MiB with their own OpenSSL) wait for the first
# sealed value (engine/database/secrets.py) or DKIM key pair.
LAZY_MODULES = ("cryptography.fernet", "cryptography.hazmat.bindings._rust")

# What `herald worker` imports before its first job (cli/processes.py, engine/worker/worker.py).
WORKER_START = """
import cli.main, cli.processes
import engine.observability.startup
import engine.worker.worker
from engine.plugins.manager import default_registry
default_registry()
"""


def _loaded_after(code: str, tmp_path: Path) -> set[str]:
    env = {**os.environ, "HERALD_DATABASE_URL": f"sqlite:///{tmp_path / 'rest.db'}",
           "HERALD_REDIS_URL": "redis://127.0.0.1:6379/15", "HERALD_ENV": "development"}
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("process, code", [("API app", "import wsgi"),
                                           ("worker", WORKER_START)])
def test_rarely_used_libraries_wait_for_their_first_use(process, code, tmp_path):
    modules = _loaded_after(code, tmp_path)
    loaded = {name.split(".")[0] for name in modules}
    assert "flask" in loaded or "rq" in loaded  # the process did start
    assert sorted(loaded.intersection(LAZY)) == [], f"{process} imports them at start"
    assert sorted(modules.intersection(LAZY_MODULES)) == [], f"{process} imports them at start"

