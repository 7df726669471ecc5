"""Stored program -> render function, and the bounded render itself.

`load` validates a program (it may come from a database row) and turns it into closures
over a fixed set of operations. Rendering counts work and output so that nested `each`
or huge values end in RenderError instead of holding the process or truncating.
"""

from __future__ import annotations

import marshal
import re
import time
from collections.abc import Callable

from .budget import MAX_PART_CHARS, deadline_within
from .errors import RenderError
from .expressions import MAX_LOAD_DEPTH, Ev, InvalidProgram, expression
from .flat_runs import flat_runner, is_flat
from .helpers import BLOCK_HELPERS, MAX_LOG_LINES, log_lines_left
from .partial_calls import LANGUAGE, PARTIALS, partial_op
from .slots import DISCARDED, RenderedHtml
from .values import Tags, is_empty, js_string, push_context, string_property, truthy

MAX_WORK = 2_000_000
CHECK_EVERY = 256
RENDER_DEADLINE_SECONDS = 2.0

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
_searches: dict[int, Callable[[str], object]] = {}


def _escaped_by(table: dict[int, str]) -> Callable[[str], object]:
    """A search for any character ``table`` changes: a value holding none is written as it
    is. Most values hold none, and the search costs a third of what ``str.translate`` with
    a dict costs to give back the same text (a dict look-up per character)."""
    search = _searches.get(id(table))
    if search is None:
        search = _searches[id(table)] = re.compile(
            "[" + "".join(re.escape(chr(c)) for c in sorted(table)) + "]").search
    return search


Op = Callable[[list, tuple, dict, "_State"], None]


class _State:
    """Output size and work done so far; checked at every program run (cheap) and
    against the clock every CHECK_EVERY units of work."""

    __slots__ = ("deadline", "depth", "escaped", "next_check", "size", "slots", "work")

    def __init__(self, seconds: float, track: bool = False) -> None:
        # Where each value of an HTML part went in the output (slots.py): the CSS
        # inliner's skeleton; DISCARDED once a piece mixes values and text (an indented
        # partial) or when the part is not HTML.
        self.slots: list[int] = [] if track else DISCARDED
        # An HTML part's values as escaped, by value: a value written many times (an order
        # number in every row) is searched for what HTML escapes once per render, not at
        # each write (a search costs about 2,000 instructions, a look-up a tenth of that).
        self.escaped: dict[str, str] = {}
        self.size = 0
        self.work = 0
        self.depth = 0  # partials being rendered inside one another
        self.next_check = CHECK_EVERY
        self.deadline = deadline_within(seconds)  # the request's budget, if it ends first

    def check(self) -> None:
        if self.size > MAX_PART_CHARS:
            raise RenderError(f"rendered part is longer than {MAX_PART_CHARS:,} characters")
        if self.work > MAX_WORK:
            raise RenderError("template needs too much work to render (nested loops?)")
        if time.monotonic() > self.deadline:
            raise RenderError("template took too long to render")
        self.next_check = self.work + CHECK_EVERY


# -- statements ---------------------------------------------------------------------
def _out(ev: Ev, table: dict[int, str] | None, track: bool) -> Op:
    key = getattr(ev, "tag_key", None)
    if track and table is not None and key is not None:
        # `{{name}}` in an HTML part, the commonest statement: its tag read here, without
        # a call of its evaluator (expressions._path's `one`, the same reading).
        escaped = _escaped_by(table)

        def tracked_tag_op(out: list, c: tuple, d: dict, st: _State) -> None:
            top = c[0]
            if top.__class__ is Tags:
                v = top.get(key)
            else:
                v = string_property(top, key) if top.__class__ is str else None
            s = v if v.__class__ is str else js_string(v)
            written = st.escaped.get(s)
            if written is None:
                written = st.escaped[s] = s.translate(table) if escaped(s) is not None else s
            st.size += len(written)
            if st.size > MAX_PART_CHARS:
                st.check()
            st.slots.append(len(out))
            out.append(written)
        tracked_tag_op.tag_key = key  # type: ignore[attr-defined]  # flat_runs.py's
        tracked_tag_op.escapes = (table, escaped)  # type: ignore[attr-defined]
        return tracked_tag_op
    if track and table is not None:  # an HTML part: each value's place is noted
        escaped = _escaped_by(table)

        def tracked_op(out: list, c: tuple, d: dict, st: _State) -> None:
            v = ev(c, d)
            s = v if v.__class__ is str else js_string(v)
            written = st.escaped.get(s)
            if written is None:
                written = st.escaped[s] = s.translate(table) if escaped(s) is not None else s
            st.size += len(written)
            if st.size > MAX_PART_CHARS:
                st.check()
            st.slots.append(len(out))
            out.append(written)
        return tracked_op
    if track:  # `{{{x}}}` in an HTML part: noted negated

        def tracked_raw_op(out: list, c: tuple, d: dict, st: _State) -> None:
            v = ev(c, d)
            s = v if v.__class__ is str else js_string(v)
            st.size += len(s)
            if st.size > MAX_PART_CHARS:
                st.check()
            st.slots.append(~len(out))
            out.append(s)
        return tracked_raw_op
    if table is not None:
        escaped = _escaped_by(table)

        def escaped_op(out: list, c: tuple, d: dict, st: _State) -> None:
            v = ev(c, d)
            s = v if v.__class__ is str else js_string(v)
            if escaped(s) is not None:
                s = s.translate(table)
            st.size += len(s)
            if st.size > MAX_PART_CHARS:
                st.check()
            out.append(s)
        return escaped_op

    def op(out: list, c: tuple, d: dict, st: _State) -> None:
        v = ev(c, d)
        s = v if v.__class__ is str else js_string(v)
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
                prog(out, push_context(c, v), d, st)
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
            prog(out, push_context(c, v[low]), frame, st)  # type: ignore[index]
    return each_op


# A template repeats whole statements (a table's row, a partial call) many times, and a
# stored program parsed from JSON holds a list of its own for each repeat. Each statement
# is checked and built once per load and level, and its twins found by its `marshal`
# bytes: over what JSON gives (lists, str, int, float, bool, None) they can be read back
# into one value only, so they tell `1`, `1.0` and `true` apart (`==` does not) and a twin
# is the very same statement, valid alike (sharing inside a statement may change its bytes:
# then it is only checked again). Only near the top (where a table's rows sit, inside a
# layout or an `each`): a statement is written at most that many times however deep it
# nests. `repr` would do as well, at twice the instructions.
_KEYED_LEVELS = 4


def _statement_key(node: list, level: int) -> tuple | None:
    """The memo key of a statement; None for a value marshal cannot write (too deep: it
    is then checked as any other)."""
    try:
        return ("statement", level, marshal.dumps(node))
    except ValueError:
        return None


def _program(nodes: object, level: int, memo: dict, escapes: dict[int, str] | None) -> Op:
    """The runner of one list of statements. Nodes are checked in order, a block's
    inverse before its program, so the first bad node names the InvalidProgram."""
    if not (isinstance(nodes, list) and level < MAX_LOAD_DEPTH):
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
        key = None
        if level < _KEYED_LEVELS:
            # A twin loaded before at this level (above) gives its op and weight.
            key = _statement_key(node, level)
            found = memo.get(key)
            if found is not None:
                ops.append(found[0])
                cost += found[1]
                continue
        kind = node[0]
        if kind == "out":
            op, weight = _out_node(node, level, memo, escapes)
        elif kind == "block":
            op, weight = _block_node(node, level, memo, escapes)
        elif kind == "partial":
            op, weight = _partial_node(node, level, memo, escapes)
        else:
            raise InvalidProgram(f"node kind {kind!r}")
        if key is not None:
            memo[key] = (op, weight)
        ops.append(op)
        cost += weight
    return _runner(ops, static, cost, dynamic)


def _out_node(node: list, level: int, memo: dict,
              escapes: dict[int, str] | None) -> tuple[Op, int]:
    """An output statement's op (shared through ``memo``) and its weight."""
    if not (len(node) == 3 and type(node[2]) is bool):
        raise InvalidProgram("out")
    ev, weight = expression(node[1], level + 1, memo)
    key = ("out", ev, node[2])
    op = memo.get(key)
    if op is None:
        op = memo[key] = _out(ev, escapes if node[2] else None, memo[LANGUAGE] == "html")
    return op, weight


def _block_node(node: list, level: int, memo: dict,
                escapes: dict[int, str] | None) -> tuple[Op, int]:
    """A block statement's op and the weight of its parameters; the inverse is checked
    before the program."""
    if not (len(node) == 5 and type(node[1]) is str and node[1] in BLOCK_HELPERS
            and isinstance(node[2], list)):
        raise InvalidProgram("block")
    low, high = BLOCK_HELPERS[node[1]]
    if not low <= len(node[2]) <= high:
        raise InvalidProgram("arity")
    evs: list[Ev] = []
    cost = 0
    for p in node[2]:
        ev, weight = expression(p, level + 1, memo)
        evs.append(ev)
        cost += weight
    inv = None if node[4] is None else _program(node[4], level + 1, memo, escapes)
    return _block(node[1], evs, _program(node[3], level + 1, memo, escapes), inv), cost


def _partial_node(node: list, level: int, memo: dict,
                  escapes: dict[int, str] | None) -> tuple[Op, int]:
    """A partial call's op: ``["partial", name, context, [[key, value], ...], indent,
    block program or None]``."""
    if not (len(node) == 6 and type(node[1]) is str and node[1]
            and (node[2] is None or isinstance(node[2], list)) and isinstance(node[3], list)
            and type(node[4]) is str and node[4].strip(" \t") == ""):
        raise InvalidProgram("partial")
    cost = 1
    context = None
    if node[2] is not None:
        context, cost = expression(node[2], level + 1, memo)
    pairs: list[tuple[str, Ev]] = []
    for pair in node[3]:
        if not (isinstance(pair, list) and len(pair) == 2 and type(pair[0]) is str):
            raise InvalidProgram("partial argument")
        ev, weight = expression(pair[1], level + 1, memo)
        pairs.append((pair[0], ev))
        cost += weight
    block = None if node[5] is None else _program(node[5], level + 1, memo, escapes)
    return partial_op(node[1], context, pairs, node[4], block, memo[LANGUAGE]), cost


def _runner(ops: list, static: int, cost: int, dynamic: bool) -> Op:
    """The op that runs a program's statements (its text joined once when it is all text)."""
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
    return flat_runner(ops, static, cost, run) if is_flat(ops) else run


def load(program: object, deadline_seconds: float = RENDER_DEADLINE_SECONDS,
         language: str = "html") -> Callable[[Tags], str]:
    """Build the render function of one stored part, escaping for its ``language`` (a key
    of ESCAPES); raises InvalidProgram."""
    track = language == "html"
    try:
        run = _program(program, 0, {LANGUAGE: language}, ESCAPES[language])
    except RecursionError as exc:  # pragma: no cover - depth is bounded above
        raise InvalidProgram("program nested too deep") from exc

    def render(tags: Tags, partials: Callable[[str, str], Op | None] | None = None) -> str:
        """``partials`` finds a partial's program runner by name and language."""
        out: list[str] = []
        st = _State(deadline_seconds, track)
        token = log_lines_left.set([MAX_LOG_LINES])
        data: dict = {"root": tags}
        if partials is not None:
            data[PARTIALS] = partials
        try:
            run(out, (tags,), data, st)
        except RecursionError:  # partials nested within the bound, each deeply nested
            raise RenderError("partials are nested too deep to render") from None
        finally:
            log_lines_left.reset(token)
        text = "".join(out)
        if len(text) > MAX_PART_CHARS:
            raise RenderError(f"rendered part is longer than {MAX_PART_CHARS:,} characters")
        return text if st.slots is DISCARDED else RenderedHtml.of(text, out, st.slots)
    render.run = run  # type: ignore[attr-defined]  # what a partial call runs
    return render
