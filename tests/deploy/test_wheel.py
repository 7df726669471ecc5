"""The wheel `make wheel` builds is what the image and a VM install: it must hold every
template and every static file the pages name (a non-editable install once lacked
web/static/codemirror/, so the editor fell back to a textarea while the tests, on an
editable install, saw nothing wrong), under the distribution name of our own, built
without setuptools' "Package would be ignored" warnings."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.deploy.manifests import ROOT

pytestmark = pytest.mark.slow
DISTRIBUTION = "herald-notification-service"
# Quoted file names in the templates: url_for(..., filename='x.css') and the editor's list
# of scripts it passes to url_for one by one.
STATIC_NAME = re.compile(r"""['"]([\w./-]+\.(?:js|css|svg|png|ico|woff2))['"]""")
SKIP = shutil.ignore_patterns(".git", ".venv", "build", "dist", "var", "*.egg-info",
                              "__pycache__", "node_modules", "tests", "bench", "docs")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[zipfile.ZipFile, str]:
    """A wheel built from a copy of the tree (the build leaves nothing in the checkout)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=SKIP)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps", "--wheel-dir",
         str(work / "out"), str(source)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [built] = (work / "out").glob("*.whl")
    return zipfile.ZipFile(built), proc.stdout + proc.stderr


def _referenced_static() -> set[str]:
    names: set[str] = set()
    for template in ROOT.glob("web/**/templates/**/*.html"):
        names.update(STATIC_NAME.findall(template.read_text()))
    return names


def test_the_templates_name_static_files_the_scan_finds():
    names = _referenced_static()
    assert {"herald.css", "htmx.min.js", "codemirror/codemirror.js", "editor.js"} <= names
    missing = [n for n in names if not (ROOT / "web" / "static" / n).is_file()]
    assert missing == []


def test_every_static_file_the_pages_name_is_in_the_wheel(wheel):
    archive, _ = wheel
    inside = set(archive.namelist())
    assert sorted(n for n in _referenced_static() if f"web/static/{n}" not in inside) == []


def test_every_template_and_static_file_is_in_the_wheel(wheel):
    archive, _ = wheel
    inside = set(archive.namelist())
    data = [p.relative_to(ROOT).as_posix() for folder in ("web", "api")
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts]
    assert data and sorted(set(data) - inside) == []


def test_the_wheel_is_our_distribution_with_the_herald_command(wheel):
    archive, _ = wheel
    name = Path(archive.filename).name
    assert name.startswith(DISTRIBUTION.replace("-", "_") + "-")
    metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    assert f"Name: {DISTRIBUTION}\n" in archive.read(metadata).decode()
    points = next(n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt"))
    assert "herald = cli.main:main" in archive.read(points).decode()
    assert not [n for n in archive.namelist() if n.startswith(("tests/", "bench/"))]


def test_the_build_has_no_package_would_be_ignored_warning(wheel):
    _, log = wheel
    assert "would be ignored" not in log
