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
