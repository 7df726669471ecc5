"""Stored program -> render function, and the bounded render itself.

`load` validates a program (it may come from a database row) and turns it into closures
over a fixed set of operations. Rendering counts work and output so that nested `each`
or huge values end in RenderError instead of holding the process or truncating.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .errors import RenderError
from .helpers import BLOCK_HELPERS, DATA_NAMES, INLINE_FUNCTIONS, INLINE_HELPERS
from .values import Tags, get, is_empty, js_string, string_property, truthy

MAX_PART_CHARS = 1_048_576
MAX_WORK = 2_000_000
CHECK_EVERY = 256
RENDER_DEADLINE_SECONDS = 2.0
_MAX_LOAD_DEPTH = 64

# handlebars.js escapeExpression
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                          "'": "&#x27;", "`": "&#x60;", "=": "&#x3D;"})

Op = Callable[[list, tuple, dict, "_State"], None]
Ev = Callable[[tuple, dict], object]


class _State:
    """Output size and work done so far; checked at every program run (cheap) and
    against the clock every CHECK_EVERY units of work."""

    __slots__ = ("deadline", "next_check", "size", "work")

    def __init__(self, seconds: float) -> None:
        self.size = 0
        self.work = 0
        self.next_check = CHECK_EVERY
        self.deadline = time.monotonic() + seconds

    def check(self) -> None:
        if self.size > MAX_PART_CHARS:
            raise RenderError(f"rendered part is longer than {MAX_PART_CHARS:,} characters")
        if self.work > MAX_WORK:
            raise RenderError("template needs too much work to render (nested loops?)")
        if time.monotonic() > self.deadline:
            raise RenderError("template took too long to render")
        self.next_check = self.work + CHECK_EVERY


class InvalidProgram(ValueError):
    """A stored program is not one this engine produces."""


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise InvalidProgram(what)


def _push(c: tuple, value: object) -> tuple:
    # handlebars.js adds a depth only when the context changes.
    top = c[0]
    if value is top or (value.__class__ is top.__class__ and value.__class__ is not Tags
                        and value == top):
        return c
    return (value, *c)


# -- expressions --------------------------------------------------------------------
def _expr(e: object, level: int) -> Ev:
    _check(isinstance(e, list) and e and level < _MAX_LOAD_DEPTH, "expression")
    kind = e[0]
    if kind == "lit":
        _check(len(e) == 2 and (e[1] is None or type(e[1]) in (str, int, float, bool)), "lit")
        value = e[1]
        return lambda c, d: value
    if kind == "path":
        _check(len(e) == 3 and type(e[1]) is int and 0 <= e[1] <= _MAX_LOAD_DEPTH, "path")
        return _path(e[1], _segments(e[2]))
    if kind == "data":
        _check(len(e) == 3 and e[1] in DATA_NAMES, "data")
        name, segs = e[1], _segments(e[2])
        _check(not segs or name == "root", "data path")
        if not segs:
            return lambda c, d: d.get(name)
        return lambda c, d: _walk(d.get("root"), segs)
    if kind == "call":
        _check(len(e) == 3 and e[1] in INLINE_HELPERS and isinstance(e[2], list), "call")
        low, high = INLINE_HELPERS[e[1]]
        _check(low <= len(e[2]) <= high, "arity")
        fn = INLINE_FUNCTIONS[e[1]]
        args = [_expr(a, level + 1) for a in e[2]]
        return lambda c, d: fn(*[a(c, d) for a in args])
    raise InvalidProgram(f"expression kind {kind!r}")


def _segments(segs: object) -> tuple[str, ...]:
    _check(isinstance(segs, list) and all(type(s) is str for s in segs), "segments")
    return tuple(s.lower() for s in segs)  # type: ignore[union-attr]


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
        return one

    def deep(c: tuple, d: dict) -> object:
        return _walk(c[depth], segs) if depth < len(c) else None
    return deep


# -- statements ---------------------------------------------------------------------
def _out(ev: Ev, escaped: bool) -> Op:
    def op(out: list, c: tuple, d: dict, st: _State) -> None:
        v = ev(c, d)
        s = v if v.__class__ is str else js_string(v)
        if escaped:
            s = s.translate(_ESCAPES)
        st.size += len(s)
        if st.size > MAX_PART_CHARS:
            st.check()
        out.append(s)
    return op


def _block(helper: str, evs: list[Ev], prog: Op, inv: Op | None) -> Op:
    if helper in ("if", "unless"):
        cond, want = evs[0], helper == "if"

        def if_op(out: list, c: tuple, d: dict, st: _State) -> None:
            if truthy(cond(c, d)) is want:
                prog(out, c, d, st)
            elif inv is not None:
                inv(out, c, d, st)
        return if_op
    if helper == "ifequals":
        left, right = evs

        def eq_op(out: list, c: tuple, d: dict, st: _State) -> None:
            if js_string(left(c, d)) == js_string(right(c, d)):
                prog(out, c, d, st)
            elif inv is not None:
                inv(out, c, d, st)
        return eq_op
    if helper == "with":
        target = evs[0]

        def with_op(out: list, c: tuple, d: dict, st: _State) -> None:
            v = target(c, d)
            if not is_empty(v):
                prog(out, _push(c, v), d, st)
            elif inv is not None:
                inv(out, c, d, st)
        return with_op
    items = evs[0]

    def each_op(out: list, c: tuple, d: dict, st: _State) -> None:
        v = items(c, d)
        order = v.order if v.__class__ is Tags else None  # type: ignore[union-attr]
        if not order:
            if inv is not None:
                inv(out, c, d, st)
            return
        last = len(order) - 1
        for index, (key, low) in enumerate(order):
            frame = dict(d)
            frame["key"], frame["index"] = key, index
            frame["first"], frame["last"] = index == 0, index == last
            prog(out, _push(c, v[low]), frame, st)  # type: ignore[index]
    return each_op


def _weight(e: list) -> int:
    return 1 + sum(_weight(a) for a in e[2]) if e[0] == "call" else 1


def _program(nodes: object, level: int) -> Op:
    _check(isinstance(nodes, list) and level < _MAX_LOAD_DEPTH, "program")
    ops: list = []
    static = 0
    for node in nodes:  # type: ignore[union-attr]
        if node.__class__ is str:
            ops.append(node)
            static += len(node)
            continue
        _check(isinstance(node, list) and node, "node")
        if node[0] == "out":
            _check(len(node) == 3 and type(node[2]) is bool, "out")
            ops.append(_out(_expr(node[1], level + 1), node[2]))
        elif node[0] == "block":
            _check(len(node) == 5 and node[1] in BLOCK_HELPERS and isinstance(node[2], list),
                   "block")
            low, high = BLOCK_HELPERS[node[1]]
            _check(low <= len(node[2]) <= high, "arity")
            evs = [_expr(p, level + 1) for p in node[2]]
            inv = None if node[4] is None else _program(node[4], level + 1)
            ops.append(_block(node[1], evs, _program(node[3], level + 1), inv))
        else:
            raise InvalidProgram(f"node kind {node[0]!r}")
    # Work units: one per program run, per statement and per expression node.
    cost = len(ops) + 1 + sum(_weight(n[1]) if n[0] == "out" else sum(_weight(e) for e in n[2])
                              for n in nodes if n.__class__ is not str)  # type: ignore[union-attr]
    if all(op.__class__ is str for op in ops):
        text = "".join(ops)

        def static_run(out: list, c: tuple, d: dict, st: _State) -> None:
            st.work += cost
            st.size += static
            if st.work > st.next_check or st.size > MAX_PART_CHARS:
                st.check()
            out.append(text)
        return static_run

    def run(out: list, c: tuple, d: dict, st: _State) -> None:
        st.work += cost
        st.size += static
        if st.work > st.next_check or st.size > MAX_PART_CHARS:
            st.check()
        for op in ops:
            if op.__class__ is str:
                out.append(op)
            else:
                op(out, c, d, st)
    return run


def load(program: object,
         deadline_seconds: float = RENDER_DEADLINE_SECONDS) -> Callable[[Tags], str]:
    """Build the render function of one stored part; raises InvalidProgram."""
    try:
        run = _program(program, 0)
    except RecursionError as exc:  # pragma: no cover - depth is bounded above
        raise InvalidProgram("program nested too deep") from exc

    def render(tags: Tags) -> str:
        out: list[str] = []
        st = _State(deadline_seconds)
        run(out, (tags,), {"root": tags}, st)
        text = "".join(out)
        if len(text) > MAX_PART_CHARS:
            raise RenderError(f"rendered part is longer than {MAX_PART_CHARS:,} characters")
        return text
    return render
