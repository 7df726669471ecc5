"""Expressions of a stored program: each node checked and turned into an evaluator, a closure
over the context stack (engine/rendering/runtime.py runs the statements around them)."""

from __future__ import annotations

from collections.abc import Callable

from .helpers import DATA_NAMES, INLINE_FUNCTIONS, INLINE_HELPERS
from .values import Tags, get, string_property

MAX_LOAD_DEPTH = 64
Ev = Callable[[tuple, dict], object]


class InvalidProgram(ValueError):
    """A stored program is not one this engine produces."""


# -- expressions --------------------------------------------------------------------
# Loading checks each node and builds its closure in the same pass (the template of a cold
# start pays for it). `memo`, one per load, hands out again the closure built for a path,
# call or output statement already seen: closures hold no state, and a template repeats a
# few distinct ones many times. A node is always checked in full before its memo lookup.
def expression(e: object, level: int, memo: dict) -> tuple[Ev, int]:
    """The evaluator of one expression node and its weight: the number of expression
    nodes, the work units each evaluation is charged."""
    # A draft's program, fresh from the compiler, holds one list for every repeat of a tag
    # (expression_scanner reads each tag's text once): that very object, checked at this
    # level during this load, is not checked again. The program outlives the load, so its
    # ids are not reused meanwhile.
    seen = (id(e), level)
    built = memo.get(seen)
    if built is not None:
        return built
    built = memo[seen] = _expression(e, level, memo)
    return built


def _expression(e: object, level: int, memo: dict) -> tuple[Ev, int]:
    if not (isinstance(e, list) and e and level < MAX_LOAD_DEPTH):
        raise InvalidProgram("expression")
    kind = e[0]
    if kind == "path":
        if not (len(e) == 3 and type(e[1]) is int and 0 <= e[1] <= MAX_LOAD_DEPTH):
            raise InvalidProgram("path")
        segs = _segments(e[2])
        key = ("path", e[1], segs)
        built = memo.get(key)
        if built is None:
            built = memo[key] = (_path(e[1], segs), 1)
        return built
    if kind == "lit":
        if not (len(e) == 2 and (e[1] is None or type(e[1]) in (str, int, float, bool))):
            raise InvalidProgram("lit")
        value = e[1]
        # Never shared: 1, 1.0 and True are equal keys. So a call on a lit matches no other.
        return (lambda c, d: value), 1
    if kind == "data":
        if not (len(e) == 3 and type(e[1]) is str and e[1] in DATA_NAMES):
            raise InvalidProgram("data")
        name, segs = e[1], _segments(e[2])
        if segs and name != "root":
            raise InvalidProgram("data path")
        if not segs:
            return (lambda c, d: d.get(name)), 1
        return (lambda c, d: _walk(d.get("root"), segs)), 1
    if kind == "call":
        if not (len(e) == 3 and type(e[1]) is str and e[1] in INLINE_HELPERS
                and isinstance(e[2], list)):
            raise InvalidProgram("call")
        low, high = INLINE_HELPERS[e[1]]
        if not low <= len(e[2]) <= high:
            raise InvalidProgram("arity")
        fn = INLINE_FUNCTIONS[e[1]]
        args: list[Ev] = []
        weight = 1
        for a in e[2]:
            ev, w = expression(a, level + 1, memo)
            args.append(ev)
            weight += w
        key = ("call", fn, *args)
        built = memo.get(key)
        if built is None:
            built = memo[key] = ((lambda c, d: fn(*[a(c, d) for a in args])), weight)
        return built
    raise InvalidProgram(f"expression kind {kind!r}")


def _segments(segs: object) -> tuple[str, ...]:
    if not isinstance(segs, list):
        raise InvalidProgram("segments")
    for s in segs:
        if type(s) is not str:
            raise InvalidProgram("segments")
    return tuple([s.lower() for s in segs])


def _walk(obj: object, segs: tuple[str, ...]) -> object:
    for seg in segs:
        if obj is None:
            return None
        obj = get(obj, seg)
    return obj


def _path(depth: int, segs: tuple[str, ...]) -> Ev:
    if depth == 0 and not segs:
        return lambda c, d: c[0]
    if depth == 0 and len(segs) == 1:
        key = segs[0]

        def one(c: tuple, d: dict) -> object:
            top = c[0]
            if top.__class__ is Tags:
                return top.get(key)
            return string_property(top, key) if top.__class__ is str else None
        one.tag_key = key  # type: ignore[attr-defined]  # runtime._out reads it inline
        return one

    def deep(c: tuple, d: dict) -> object:
        return _walk(c[depth], segs) if depth < len(c) else None
    return deep
