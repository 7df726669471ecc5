"""axe-core in the browser tests: the npm package, pinned, installed with npm into the
git-ignored tests/.node/ the first time it is needed (its MPL-2.0 licence comes with it),
and run in the page through Playwright (an evaluation the page's CSP does not govern)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

AXE_VERSION = "4.14.1"
FOLDER = Path(__file__).resolve().parents[1] / ".node"
PACKAGE = FOLDER / "node_modules" / "axe-core"
# The rules axe runs: every WCAG 2.0, 2.1 and 2.2 A and AA rule, and its best practices.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
_source: list[str] = []


def _installed() -> bool:
    try:
        return json.loads((PACKAGE / "package.json").read_text())["version"] == AXE_VERSION
    except (OSError, ValueError, KeyError):
        return False


def axe_source() -> str:
    """axe.min.js of the pinned version, installing it once (a lock keeps two test
    processes from installing at once). No npm: skipped loudly, or failed under CI."""
    if _source:
        return _source[0]
    FOLDER.mkdir(exist_ok=True)
    with open(FOLDER / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _installed():
            npm = shutil.which("npm")
            if npm is None:
                message = f"npm is needed once to install axe-core {AXE_VERSION}"
                if os.environ.get("CI", "").lower() == "true":
                    pytest.fail(message)
                pytest.skip(message)
            (FOLDER / "package.json").write_text('{"private": true}\n')
            subprocess.run([npm, "install", "--prefix", str(FOLDER), "--no-audit", "--no-fund",
                            "--save-exact", f"axe-core@{AXE_VERSION}"],
                           check=True, capture_output=True, timeout=300)
    _source.append((PACKAGE / "axe.min.js").read_text())
    return _source[0]


def violations(page) -> list[str]:
    """What axe finds wrong with the page as it stands, one line each (rule, impact, where).
    The template preview's sandboxed frame is the author's document, not the application's:
    it is left out (iframes: false). It waits for the page's load: text a test waited for
    can be in the document before its stylesheet applies, and axe would measure the page
    unstyled (touch targets too small, say) on a loaded machine."""
    page.wait_for_load_state("load")
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    found = page.evaluate("""async (tags) => {
        const result = await axe.run(document, {iframes: false,
            runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]});
        return result.violations.map(v => v.id + " (" + v.impact + "): " + v.help + " at " +
            v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "));
    }""", TAGS)
    return list(found)
