"""Which tag keys a template refers to: provided, missing and unused (for preview)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .cache import CACHED_TEXT_CHARS, LRU
from .errors import TemplateSyntaxError
from .expression_scanner import PARTIAL_BLOCK
from .nodes import Block, Mustache, Partial, PartialBlock
from .scanner import parse

_CONTEXT_HELPERS = ("each", "with")


class _Refs:
    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # lower -> first spelling
        self.everything = False

    def add(self, name: str) -> None:
        self.names.setdefault(name.lower(), name)


def _expr(e: list, level: int, refs: _Refs) -> None:
    kind = e[0]
    if kind == "path":
        depth, segs = e[1], e[2]
        if level - depth == 0 and segs:
            refs.add(segs[0])
    elif kind == "data":
        if e[1] == "root" and e[2]:
            refs.add(e[2][0])
    elif kind == "call":
        args = e[2]
        if e[1] == "lookup" and len(args) == 2 and _is_root(args[0], level):
            if args[1][0] == "lit" and args[1][1] is not None:
                refs.add(str(args[1][1]))
            elif args[1][0] != "lit":
                refs.everything = True  # a computed key may read any tag
        for arg in args:
            _expr(arg, level, refs)


def _is_root(e: list, level: int) -> bool:
    if e[0] == "path":
        return not e[2] and level - e[1] == 0
    return e[0] == "data" and e[1] == "root" and not e[2]


def _body(body: list, level: int, refs: _Refs) -> None:
    for node in body:
        cls = node.__class__
        if cls is Mustache:
            _expr(node.expr, level, refs)
        elif cls is Partial or cls is PartialBlock:
            # The call's own arguments; what the partial reads is the partial's business.
            if node.context is not None:
                _expr(node.context, level, refs)
            for _, value in node.hash:
                _expr(value, level, refs)
            if cls is PartialBlock:
                _body(node.program, level, refs)
        elif cls is Block:
            for param in node.params:
                _expr(param, level, refs)
            changes = node.helper in _CONTEXT_HELPERS
            if changes and node.params and _is_root(node.params[0], level):
                refs.everything = True
            _body(node.program, level + 1 if changes else level, refs)
            if node.inverse is not None:
                _body(node.inverse, level, refs)


# Keyed by the text itself, so bounded by the characters it keeps alive too (cache.py).
_parsed = LRU(maxsize=512, max_weight=CACHED_TEXT_CHARS)


def _collect(ast: list) -> tuple[tuple[tuple[str, str], ...], bool]:
    refs = _Refs()
    _body(ast, 0, refs)
    return tuple(refs.names.items()), refs.everything


def remember(text: str, ast: list) -> None:
    """Keep the references of ``text`` and the partials it calls from the tree its compile
    just parsed: a draft's preview compiles the text and then asks for both, and each
    second parse of a 50 KB text was a tenth to a third of an editor keystroke's time."""
    if _parsed.get(text) is None:
        _parsed.put(text, _collect(ast), weight=len(text))
    if _calls.get(text) is None:
        _calls.put(text, frozenset(_partials_in(ast)), weight=len(text))


def _references(text: str) -> tuple[tuple[tuple[str, str], ...], bool]:
    """A template's own references, parsed once per text per process (preview's hot path)."""
    found = _parsed.get(text)
    if found is None:
        try:
            found = _collect(parse(text))
        except TemplateSyntaxError:
            found = (), False
        _parsed.put(text, found, weight=len(text))
    return found  # type: ignore[return-value]


# The references of a list of texts together (a version's parts and the partials they
# call: the same list at every preview of that version), keyed by the texts themselves.
_merged = LRU(maxsize=512, max_weight=CACHED_TEXT_CHARS)


def _all_references(texts: tuple[str, ...]) -> tuple[dict[str, str], bool]:
    """Every name ``texts`` reference (lower-cased -> first spelling), and whether one
    passes the whole context on; the answer is shared: never changed."""
    found = _merged.get(texts)
    if found is None:
        names: dict[str, str] = {}
        everything = False
        for text in texts:
            if text:
                refs, all_keys = _references(text)
                for low, name in refs:
                    names.setdefault(low, name)
                everything = everything or all_keys
        found = (names, everything)
        _merged.put(texts, found, weight=sum(len(t) for t in texts if t))
    return found  # type: ignore[return-value]


def variable_metadata(texts: Iterable[str], tags: Mapping[str, str]) -> dict[str, list[str]]:
    """Provided tag keys, referenced-but-missing names and provided-but-unused keys.

    Matching is case-insensitive; a part that does not parse contributes no references
    (its syntax error is reported separately).
    """
    names, everything = _all_references(tuple(texts))
    provided = [str(k) for k in tags]
    have = {k.lower() for k in provided}
    missing = [name for low, name in names.items() if low not in have]
    unused = [] if everything else [k for k in provided if k.lower() not in names]
    return {"providedVariables": provided, "missingVariables": missing,
            "unusedVariables": unused}


# The partials each text calls, parsed once per text per process: a preview asks for them
# at every request, and parsing the version's texts again was the largest part of a
# preview of a small template (docs/performance.md).
_calls = LRU(maxsize=512, max_weight=CACHED_TEXT_CHARS)


def partials_used(text: str) -> set[str]:
    """The partial names a template calls (`@partial-block` is not one); raises
    TemplateSyntaxError when it does not parse."""
    found = _calls.get(text)
    if found is None:
        found = frozenset(_partials_in(parse(text)))
        _calls.put(text, found, weight=len(text))
    return set(found)  # type: ignore[call-overload]


def _partials_in(ast: list) -> set[str]:
    names: set[str] = set()
    pending = [ast]
    while pending:
        for node in pending.pop():
            cls = node.__class__
            if (cls is Partial or cls is PartialBlock) and node.name != PARTIAL_BLOCK:
                names.add(node.name)
            if cls is Block or cls is PartialBlock:
                pending.append(node.program)
                if node.inverse is not None:
                    pending.append(node.inverse)
    return names
