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

# What `{{x}}` escapes, by the language of the part it is written into (`{{{x}}}` never
# escapes). HTML is handlebars.js escapeExpression; JSON keeps a value inside the string
# literal it is written into; plain text (a subject, an SMS) takes the value as it is.
ESCAPES: dict[str, dict[int, str] | None] = {
    "html": str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                           "'": "&#x27;", "`": "&#x60;", "=": "&#x3D;"}),
    "json": {ord('"'): '\\"', ord("\\"): "\\\\", ord("\b"): "\\b", ord("\f"): "\\f",
             ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t",
             **{c: f"\\u{c:04x}" for c in (*range(8), 11, *range(14, 32))}},
    "text": None,
}

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


def _push(c: tuple, value: object) -> tuple:
    # handlebars.js adds a depth only when the context changes.
    top = c[0]
    if value is top or (value.__class__ is top.__class__ and value.__class__ is not Tags
                        and value == top):
        return c
    return (value, *c)


# -- expressions --------------------------------------------------------------------
# Loading checks each node and builds its closure in the same pass (the template of a cold
# start pays for it). `memo`, one per load, hands out again the closure built for a path,
# call or output statement already seen: closures hold no state, and a template repeats a
# few distinct ones many times. A node is always checked in full before its memo lookup.
def _expr(e: object, level: int, memo: dict) -> tuple[Ev, int]:
    """The evaluator of one expression node and its weight: the number of expression
    nodes, the work units each evaluation is charged."""
    if not (isinstance(e, list) and e and level < _MAX_LOAD_DEPTH):
        raise InvalidProgram("expression")
    kind = e[0]
    if kind == "path":
        if not (len(e) == 3 and type(e[1]) is int and 0 <= e[1] <= _MAX_LOAD_DEPTH):
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
            ev, w = _expr(a, level + 1, memo)
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
        return one

    def deep(c: tuple, d: dict) -> object:
        return _walk(c[depth], segs) if depth < len(c) else None
    return deep


# -- statements ---------------------------------------------------------------------
def _out(ev: Ev, table: dict[int, str] | None) -> Op:
    def op(out: list, c: tuple, d: dict, st: _State) -> None:
        v = ev(c, d)
        s = v if v.__class__ is str else js_string(v)
        if table is not None:
            s = s.translate(table)
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


def _program(nodes: object, level: int, memo: dict, escapes: dict[int, str] | None) -> Op:
    """The runner of one list of statements. Nodes are checked in order, a block's
    inverse before its program, so the first bad node names the InvalidProgram."""
    if not (isinstance(nodes, list) and level < _MAX_LOAD_DEPTH):
        raise InvalidProgram("program")
    ops: list = []
    static = 0
    # Work units: one per program run, per statement and per expression node.
    cost = 1
    dynamic = False
    for node in nodes:  # type: ignore[union-attr]
        cost += 1
        if node.__class__ is str:
            ops.append(node)
            static += len(node)
            continue
        if not (isinstance(node, list) and node):
            raise InvalidProgram("node")
        dynamic = True
        kind = node[0]
        if kind == "out":
            if not (len(node) == 3 and type(node[2]) is bool):
                raise InvalidProgram("out")
            ev, weight = _expr(node[1], level + 1, memo)
            cost += weight
            key = ("out", ev, node[2])
            op = memo.get(key)
            if op is None:
                op = memo[key] = _out(ev, escapes if node[2] else None)
            ops.append(op)
        elif kind == "block":
            if not (len(node) == 5 and type(node[1]) is str and node[1] in BLOCK_HELPERS
                    and isinstance(node[2], list)):
                raise InvalidProgram("block")
            low, high = BLOCK_HELPERS[node[1]]
            if not low <= len(node[2]) <= high:
                raise InvalidProgram("arity")
            evs: list[Ev] = []
            for p in node[2]:
                ev, weight = _expr(p, level + 1, memo)
                evs.append(ev)
                cost += weight
            inv = None if node[4] is None else _program(node[4], level + 1, memo, escapes)
            ops.append(_block(node[1], evs, _program(node[3], level + 1, memo, escapes), inv))
        else:
            raise InvalidProgram(f"node kind {kind!r}")
    if not dynamic:
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


def load(program: object, deadline_seconds: float = RENDER_DEADLINE_SECONDS,
         language: str = "html") -> Callable[[Tags], str]:
    """Build the render function of one stored part, escaping for its ``language`` (a key
    of ESCAPES); raises InvalidProgram."""
    try:
        run = _program(program, 0, {}, ESCAPES[language])
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
