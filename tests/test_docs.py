"""Every hook is documented under its exact signature (as datasette's test_docs does)."""

from __future__ import annotations

import inspect
import re
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


def test_every_member_of_the_event_contract_is_documented():
    """What a receiver declares (how its workspace's secret travels, its label...) and
    what a call lends it, each under "Provider events"."""
    from engine.plugins.event_contract import EventWebhook, InboundCall

    section = DOCS.split("## Provider events", 1)[1].split("\n## ", 1)[0]
    members = [name for kind in (EventWebhook, InboundCall) for name in
               [*vars(kind), *kind.__annotations__] if not name.startswith("_")]
    missing = sorted({name for name in members if f"`{name}" not in section})
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


# [text](target) and ![alt](target), outside code: the target up to a blank or ")".
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
# A page named in prose or a comment: docs/NAME.md (ARCHITECTURE.md and the like are not
# in the repository, and a reader cannot follow them).
_DOC_NAME = re.compile(r"\bdocs/([A-Za-z0-9_-]+\.md)\b")
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])


def _links(text: str) -> list[str]:
    text = _CODE.sub("", _FENCE.sub("", text))
    return _LINK.findall(text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves_to_a_file_in_the_repository(page):
    broken = []
    for target in _links(page.read_text()):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # another site, or a section of the page itself
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(ROOT) or not path.exists():
            broken.append(target)
    assert broken == []


def test_the_link_check_sees_links_and_skips_code():
    text = "[a](apply.md) ![i](images/x.png) `[b](nowhere.md)`\n```\n[c](gone.md)\n```\n"
    assert _links(text) == ["apply.md", "images/x.png"]


def test_every_docs_page_named_in_docs_code_or_comments_exists():
    sources = [*PAGES, *(p for top in ("api", "channels", "cli", "config", "engine",
                                       "plugins", "web") for p in (ROOT / top).rglob("*.py"))]
    missing = sorted({f"{source.relative_to(ROOT)}: docs/{name}" for source in sources
                      for name in _DOC_NAME.findall(source.read_text())
                      if not (ROOT / "docs" / name).exists()})
    assert missing == []


def test_no_page_cites_a_design_file_outside_the_repository():
    outside = re.compile(r"\.\./shared/|\b(?:ARCHITECTURE|WEB|STYLE)\.md\b|"
                         r"notification-service-api\.md")
    cited = sorted({f"{source.relative_to(ROOT)}" for source in
                    [*PAGES, *(p for top in ("api", "channels", "cli", "config", "engine",
                                             "plugins", "web") for p in
                               (ROOT / top).rglob("*.py"))]
                    if outside.search(source.read_text())})
    assert cited == []


def test_every_spec_section_the_code_cites_is_summed_up_in_the_api_page():
    """The spec is not in the repository: docs/api.md carries each section code cites."""
    cite = re.compile(r"\bspec (?:section |§)?(\d+(?:\.\d+)?)\b")
    table = (ROOT / "docs" / "api.md").read_text().split("## The spec's sections that code "
                                                         "cites", 1)[1].split("\n## ", 1)[0]
    rows = {m.group(1) for m in re.finditer(r"^\| (\d+(?:\.\d+)?) ", table, re.M)}
    rows |= {m.group(1) for m in re.finditer(r"^\| \d+ [^|]*?, (\d+\.\d+) ", table, re.M)}
    sources = [*PAGES, *(p for top in ("api", "channels", "cli", "config", "engine",
                                       "plugins", "web") for p in (ROOT / top).rglob("*.py"))]
    cited = {(source.relative_to(ROOT).as_posix(), number) for source in sources
             for number in cite.findall(source.read_text())}
    assert sorted((where, n) for where, n in cited if n not in rows) == []


def test_every_decision_the_code_cites_has_its_section_in_the_api_page():
    api = (ROOT / "docs" / "api.md").read_text()
    written = set(re.findall(r"^### (D\d+) ", api, re.M))
    sources = [*PAGES, *(p for top in ("api", "channels", "cli", "config", "engine",
                                       "plugins", "web") for p in (ROOT / top).rglob("*.py"))]
    cited = {(source.relative_to(ROOT).as_posix(), d) for source in sources
             for d in re.findall(r"\b(D\d{1,2})\b", source.read_text())}
    assert written and sorted(c for c in cited if c[1] not in written) == []


def _table(heading: str) -> list[str]:
    """The first cells of the table under ``heading`` in docs/architecture.md."""
    section = ARCHITECTURE.split(f"\n## {heading}", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [row.split("|")[1].strip() for row in rows[1:] if not set(row) <= set("|- ")]


def _packages() -> set[str]:
    """Every top-level package of Herald and every package directly under engine/."""
    tops = {"api", "web", "cli", "config", "channels", "plugins", "engine"}
    inner = {f"engine/{path.parent.name}" for path in (ROOT / "engine").glob("*/__init__.py")}
    return {*(top for top in tops if (ROOT / top / "__init__.py").exists()), *inner}


def test_the_folder_table_names_every_package_once_and_only_real_ones():
    cells = [re.findall(r"`([^`]+)/`", cell) for cell in _table("The folders")]
    named = [folder for cell in cells for folder in cell]
    assert sorted(set(named) - _packages()) == [], "named in the table, not in the tree"
    assert sorted(_packages() - set(named) - {"engine"}) == [], "missing from the table"
    assert sorted(f for f in set(named) if named.count(f) > 1) == [], "named twice"


def _models() -> set[str]:
    """Every model class with a table of its own, wherever in engine/ it is defined."""
    import importlib
    import pkgutil

    import peewee

    import engine

    for module in pkgutil.walk_packages(engine.__path__, "engine."):
        importlib.import_module(module.name)
    found, todo = set(), [peewee.Model]
    while todo:
        for model in todo.pop().__subclasses__():
            todo.append(model)
            if model.__module__.startswith("engine.") and model.__subclasses__() == []:
                found.add(model.__name__)
    return found


def test_the_data_model_table_names_every_model_and_only_real_ones():
    named = {name.strip("` ") for cell in _table("Data model") for name in cell.split(",")}
    models = _models()
    assert sorted(named - models) == [], "named in the table, not a model"
    assert sorted(models - named) == [], "models missing from the table"
