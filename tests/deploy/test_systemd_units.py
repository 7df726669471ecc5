"""deploy/systemd/: every unit passes `systemd-analyze verify` with nothing to say, and each
service's hardening keeps systemd's own exposure estimate at "OK" or better.

The units name /opt/herald/bin/herald, which verify requires to be executable: each check
runs against a root folder made for it (systemd's own units copied in, and a stand-in
for the command), never the host's /opt or /etc."""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.manifests import ROOT

UNITS = ROOT / "deploy" / "systemd"
SYSTEM_UNITS = Path("/usr/lib/systemd/system")
ANALYZE = shutil.which("systemd-analyze")

pytestmark = pytest.mark.skipif(
    ANALYZE is None or not SYSTEM_UNITS.is_dir(),
    reason="SKIPPED LOUDLY: systemd-analyze is not installed (apt-get install systemd; "
           "deploy/check/install-tools does it), so deploy/systemd/ is NOT verified here")


def _root(tmp_path: Path, units: Path = UNITS) -> Path:
    root = tmp_path / "root"
    shutil.copytree(SYSTEM_UNITS, root / "usr/lib/systemd/system", symlinks=True)
    shutil.copytree(units, root / "etc/systemd/system")
    command = root / "opt/herald/bin/herald"
    command.parent.mkdir(parents=True)
    command.write_text("#!/bin/sh\n")
    command.chmod(0o755)
    for tool in ("/usr/bin/env", "/bin/sh"):  # ExecStart's first words
        (root / tool[1:]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(tool, root / tool[1:])
    return root


def _verify(root: Path) -> subprocess.CompletedProcess:
    names = sorted(p.name for p in (root / "etc/systemd/system").iterdir())
    return subprocess.run([ANALYZE, "verify", f"--root={root}", *names],
                          capture_output=True, text=True, timeout=60)


def test_the_units_are_the_four_processes_and_their_target():
    assert sorted(p.name for p in UNITS.iterdir()) == [
        "herald-api.service", "herald-backup.service", "herald-backup.timer",
        "herald-bounces.service", "herald-db-upgrade.service", "herald-worker.service",
        "herald.target"]


def test_every_unit_verifies_with_nothing_to_say(tmp_path):
    proc = _verify(_root(tmp_path))
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, "")


def test_verify_speaks_up_about_a_mistake(tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(UNITS, broken)
    api = broken / "herald-api.service"
    api.write_text(api.read_text().replace("ProtectSystem=strict", "ProtectSystem=stricter"))
    proc = _verify(_root(tmp_path, broken))
    assert "ProtectSystem" not in proc.stdout and "stricter" in proc.stderr


@pytest.mark.parametrize("unit", sorted(p.name for p in UNITS.glob("*.service")))
def test_the_hardening_keeps_the_exposure_ok(tmp_path, unit):
    text = UNITS.joinpath(unit).read_text()
    for option in ("NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes",
                   "PrivateTmp=yes", "DynamicUser=yes", "SystemCallFilter=@system-service"):
        assert option in text, option
    proc = subprocess.run([ANALYZE, "security", "--offline=yes", f"--root={_root(tmp_path)}",
                           unit], capture_output=True, text=True, timeout=60)
    level = re.search(r"Overall exposure level for \S+: ([\d.]+) (\w+)", proc.stdout)
    assert level, proc.stdout + proc.stderr
    assert float(level.group(1)) <= 2.0, proc.stdout


HERALD = Path(sys.executable).with_name("herald")


def _exec_start(unit: str) -> list[str]:
    [line] = [ln for ln in UNITS.joinpath(unit).read_text().splitlines()
              if ln.startswith("ExecStart=")]
    return shlex.split(line.removeprefix("ExecStart="))


HERALD_UNITS = sorted(p.name for p in UNITS.glob("*.service") if "/opt/herald/bin/herald"
                      in p.read_text())


def test_every_unit_but_the_backup_runs_herald():
    assert HERALD_UNITS == ["herald-api.service", "herald-bounces.service",
                            "herald-db-upgrade.service", "herald-worker.service"]


def test_the_backup_dumps_in_custom_format_to_its_own_folder_nightly():
    service = UNITS.joinpath("herald-backup.service").read_text()
    assert "umask 077" in service and "pg_dump --format=custom" in service
    assert "StateDirectory=herald-backups" in service and "StateDirectoryMode=0700" in service
    assert "OnCalendar=" in UNITS.joinpath("herald-backup.timer").read_text()


@pytest.mark.parametrize("unit", HERALD_UNITS)
@pytest.mark.parametrize("env_file", [
    {"HERALD_ENV": "development"},
    {"HERALD_ENV": "development", "HERALD_EMAIL_PROVIDER": "inbox://"},
    {"HERALD_EMAIL_PROVIDER": "inbox://"},
])
def test_every_unit_starts_in_production_whatever_its_env_file_says(tmp_path, unit, env_file):
    """The units once ran development (no HERALD_ENV), which serves /dev/inbox, every
    tenant's mail, on the port the TLS proxy fronts. Each ExecStart is run as systemd runs
    it (the env file's variables in its environment, then the command line), with Herald
    installed here: production's checks refuse a missing key, and with a key the dev inbox,
    neither of which development would."""
    argv = _exec_start(unit)
    assert argv[:2] == ["/usr/bin/env", "HERALD_ENV=production"], argv
    argv = [str(HERALD) if word == "/opt/herald/bin/herald" else word for word in argv]
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
                   "HERALD_DATABASE_URL": f"sqlite:///{tmp_path}/herald.sqlite3", **env_file}
    if "HERALD_EMAIL_PROVIDER" in env_file:
        environment["HERALD_SECRET_KEY"] = secrets.token_urlsafe(48)
    proc = subprocess.run(argv, env=environment, cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    if "HERALD_EMAIL_PROVIDER" in env_file:
        assert "HERALD_EMAIL_PROVIDER: inbox:// is for development and test only" in proc.stderr
    else:
        assert "HERALD_SECRET_KEY: is required in production" in proc.stderr
