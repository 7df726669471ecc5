"""deploy/systemd/: every unit passes `systemd-analyze verify` with nothing to say, and each
service's hardening keeps systemd's own exposure estimate at "OK" or better.

The units name /opt/herald/bin/herald, which verify requires to be executable: each check
runs against a root folder made for it (systemd's own units copied in, and a stand-in
for the command), never the host's /opt or /etc."""

from __future__ import annotations

import re
import shutil
import subprocess
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
    return root


def _verify(root: Path) -> subprocess.CompletedProcess:
    names = sorted(p.name for p in (root / "etc/systemd/system").iterdir())
    return subprocess.run([ANALYZE, "verify", f"--root={root}", *names],
                          capture_output=True, text=True, timeout=60)


def test_the_units_are_the_four_processes_and_their_target():
    assert sorted(p.name for p in UNITS.iterdir()) == [
        "herald-api.service", "herald-bounces.service", "herald-db-upgrade.service",
        "herald-worker.service", "herald.target"]


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
