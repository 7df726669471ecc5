"""The import contract (setup.cfg [importlinter], docs/architecture.md) holds, and breaks when a
layer is crossed: `make lint` runs the same `lint-imports`."""

from __future__ import annotations

import configparser
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("api", "channels", "cli", "config", "engine", "plugins", "web")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _contracts() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config


def test_plugins_are_forbidden_every_engine_module_but_the_plugin_api():
    forbidden = set(_contracts()["importlinter:contract:plugin-api"]["forbidden_modules"].split())
    children = {f"engine.{m.name}" for m in pkgutil.iter_modules(engine.__path__)}
    assert children - forbidden == {"engine.plugin_api"}
    assert forbidden <= children


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the packages and setup.cfg, to break without touching the real ones."""
    root = tmp_path_factory.mktemp("layers")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, root / package,
                        ignore=shutil.ignore_patterns("__pycache__", "templates", "static"))
    shutil.copy(ROOT / "setup.cfg", root / "setup.cfg")
    return root


def test_the_contract_holds_here(tree: Path):
    result = _lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("engine/database/fields.py", "import api.problems", "then engine, then config BROKEN"),
    ("config/settings.py", "import engine.errors", "then engine, then config BROKEN"),
    ("web/security.py", "import api.problems", "then engine, then config BROKEN"),
    ("engine/catalog/keys.py", "import engine.sending.limits", "the leaves BROKEN"),
    ("channels/sms/__init__.py", "import engine.database.models",
     "only engine.plugin_api of Herald's BROKEN"),
    ("plugins/twilio/__init__.py", "import channels.sms", "then engine, then config BROKEN"),
    ("plugins/postmark/__init__.py", "import plugins.inbox", "each provider stands alone BROKEN"),
    ("engine/delivery/jobs.py", "import engine.worker.handoff", "the leaves BROKEN"),
    ("engine/queue/lanes.py", "import engine.database.models",
     "imports nothing of engine.database BROKEN"),
    ("engine/database/models/__init__.py", "import engine.queue.queueing",
     "reaches Redis only through its cache generations BROKEN"),
], ids=["engine-imports-api", "config-imports-engine", "web-imports-api",
        "catalog-imports-sending",
        "channel-imports-database", "provider-imports-channel", "provider-imports-provider",
        "job-imports-worker-process", "queue-imports-database", "models-import-queue"])
def test_an_import_across_a_layer_breaks_the_contract(tree: Path, module: str, line: str,
                                                      contract: str):
    path = tree / module
    original = path.read_text()
    path.write_text(original + f"\n{line}  # the break under test\n")
    try:
        result = _lint(tree)
    finally:
        path.write_text(original)
    assert result.returncode != 0
    assert contract in " ".join(result.stdout.split()), result.stdout


def _circles(graph) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_circle_anywhere_even_through_a_function_level_import():
    """grimp counts an import inside a function too: a circle closed that way is one. The
    benches count as much as the product: a circle there is as hard to follow."""
    import grimp

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        graph = grimp.build_graph(*PACKAGES, "bench")
        found = _circles(graph)
    finally:  # a later test (a JSON body nested too deeply) counts on the default
        sys.setrecursionlimit(limit)
    assert found == []


def test_the_circle_check_sees_a_circle():
    import grimp

    graph = grimp.ImportGraph()
    for module in ("a", "a.b", "a.c", "a.d"):
        graph.add_module(module)
    graph.add_import(importer="a.b", imported="a.c")
    graph.add_import(importer="a.c", imported="a.b")
    graph.add_import(importer="a.c", imported="a.d")
    assert _circles(graph) == [["a.b", "a.c"]]


def test_no_source_module_is_over_400_lines():
    """One responsibility a module: past 400 lines a module holds more than one."""
    long = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            lines = len(path.read_text().splitlines())
            if lines > 400:
                long[path.relative_to(ROOT).as_posix()] = lines
    assert long == {}
