"""Template text -> stored program: strict parse, whitespace control, compact JSON form.

The stored program is data (nested lists naming nodes, helpers and paths), never Python
source: loading it builds closures from a fixed set of operations (runtime.py), so
neither template text nor a stored row can make the process run code of its choosing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from .errors import TemplateSyntaxError
from .metadata import remember
from .nodes import Block, Comment, Content, Mustache, Partial, PartialBlock
from .scanner import DEFAULT_DEADLINE_SECONDS, parse
from .version import VERSION_KEY
from .whitespace import control


def check_template(text: str) -> None:
    """Strict scan of one template part; raises TemplateSyntaxError naming line and column."""
    parse(text)


def compile_template(text: str, deadline_seconds: float = DEFAULT_DEADLINE_SECONDS) -> list:
    """Compile one part into its program (JSON-compatible nested lists); its references are
    kept from the same parse (metadata.remember), before whitespace control rewrites it."""
    ast = parse(text, deadline_seconds)
    remember(text, ast)
    return _program(control(ast))


def compile_parts(parts: Mapping[str, str],
                  deadline_seconds: float = DEFAULT_DEADLINE_SECONDS) -> str:
    """Check and compile each named part on its own; the JSON to store with the version.

    Each part gets its own time bound. A syntax error carries the part's name in `.part`.
    """
    programs: dict[str, list] = {}
    for name, text in parts.items():
        try:
            programs[name] = compile_template(text or "", deadline_seconds)
        except TemplateSyntaxError as exc:
            exc.part = name
            raise
    return json.dumps({"key": VERSION_KEY, "parts": programs}, ensure_ascii=False,
                      separators=(",", ":"))


def _program(body: list) -> list:
    out: list = []
    texts: list[str] = []  # adjacent text, joined once (repeated += would be quadratic)
    for node in body:
        cls = node.__class__
        if cls is Content:
            if node.value:
                texts.append(node.value)
            continue
        if cls is Comment:
            continue
        if texts:
            out.append("".join(texts))
            texts = []
        if cls is Mustache:
            out.append(["out", node.expr, node.escaped])
        elif cls is Block:
            inverse = None if node.inverse is None else _program(node.inverse)
            out.append(["block", node.helper, node.params, _program(node.program), inverse])
        elif cls is Partial:
            out.append(["partial", node.name, node.context, node.hash, node.indent, None])
        elif cls is PartialBlock:
            out.append(["partial", node.name, node.context, node.hash, "",
                        _program(node.program)])
        else:  # pragma: no cover - the parser makes no other node
            raise TypeError(cls)
    if texts:
        out.append("".join(texts))
    return out
