"""No provider is named outside its plugin: the engine, the API, the web application and
the command line ask a provider through its contract (its receiver, its secret's carrier,
its label), never by name. Comments and docstrings may give an example; code and templates
may not. The one exception is the migration step that copied the former Postmark column."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The built-in providers that bring events, by the names their plugins register.
VENDORS = re.compile(r"postmark|twilio", re.IGNORECASE)
HOUSE = ("engine", "api", "web", "cli", "config")
ALLOWED = {Path("engine/database/migrations.py")}  # step 25 moves `workspace.postmark_secret`


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _named_in_code(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.alias):
            text = node.name
        else:
            continue
        if VENDORS.search(text):
            found.append(f"{path.relative_to(root)}:{getattr(node, 'lineno', '?')}: {text!r}")
    return found


def test_no_provider_is_named_in_code_outside_its_plugin():
    found = []
    for package in HOUSE:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.relative_to(ROOT) not in ALLOWED:
                found += _named_in_code(path)
    assert found == []


def test_no_template_names_a_provider():
    named = [f"{path.relative_to(ROOT)}:{number}"
             for path in sorted((ROOT / "web").rglob("*.html"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if VENDORS.search(line)]
    assert named == []


def test_the_check_finds_a_name_in_code(tmp_path):
    """The check can fail: a vendor's name in a string or an identifier is found, and the
    same name in a docstring or comment is not."""
    sample = tmp_path / "probe.py"
    sample.write_text('"""Postmark is an example here."""\n# twilio too\n'
                      'def f():\n    """Twilio."""\n    return "postmark"\n'
                      'postmark_secret = 1\n', encoding="utf-8")
    found = _named_in_code(sample, tmp_path)
    assert sorted(line.split(": ", 1)[1] for line in found) == ["'postmark'",
                                                                "'postmark_secret'"]
