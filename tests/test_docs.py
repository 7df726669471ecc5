"""Every hook is documented under its exact signature (as datasette's test_docs does)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from engine.plugins import hookspecs

DOCS = (Path(__file__).resolve().parents[1] / "docs" / "plugins.md").read_text()
HOOKS = [name for name, obj in inspect.getmembers(hookspecs, inspect.isfunction)
         if hasattr(obj, "herald_spec")]


def test_there_are_hooks_to_document():
    assert {"register_channels", "register_providers"} <= set(HOOKS)


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented_with_its_signature(name):
    params = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
    assert f"### `{name}({params})`" in DOCS


def test_every_name_of_the_plugin_api_is_documented():
    from engine import plugin_api

    missing = [name for name in plugin_api.__all__ if f"`{name}`" not in DOCS]
    assert missing == []


def test_every_member_of_the_channel_contract_is_documented():
    from engine.plugins.channel_contract import Channel

    members = [name for name in vars(Channel) if not name.startswith("_")]
    members += list(Channel.__annotations__)
    missing = sorted({name for name in members if f"`{name}" not in DOCS})
    assert missing == []


ARCHITECTURE = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
ROOT = Path(__file__).resolve().parents[1]


def _drawn() -> dict[str, set[str]]:
    block = ARCHITECTURE.split("## The folders", 1)[1].split("```")[1]
    drawn = {}
    for line in block.strip().splitlines():
        folder, *modules = line.split()
        drawn[folder] = set(modules)
    return drawn


def _actual() -> dict[str, set[str]]:
    actual: dict[str, set[str]] = {}
    for top in ("api", "channels", "cli", "config", "engine", "plugins", "web"):
        for path in (ROOT / top).rglob("*.py"):
            if path.name == "__init__.py":
                continue
            folder = path.parent.relative_to(ROOT).as_posix() + "/"
            actual.setdefault(folder, set()).add(path.stem)
    return actual


def test_architecture_draws_every_module_as_it_is():
    assert _drawn() == _actual()
