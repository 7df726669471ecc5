"""A program of text and `{{name}}` alone, run without a Python call a value.

runtime.py runs a program statement by statement, one op a value; a receipt's body is text
and names alternating (41 values in the bench's), and those calls were a tenth of a send.
Here each name is read and escaped once and the pieces are put together by C loops, with
the same pieces, slots, size and work as the statement-by-statement run.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from operator import itemgetter
from typing import Any

from .budget import MAX_PART_CHARS
from .slots import DISCARDED
from .values import Tags, js_string

Op = Callable[[list, tuple, dict, Any], None]

# A program of text and `{{name}}` alone (a receipt's rows, a letter), alternating, text
# first and last, with at least this many names, is run by flat_runner.
FLAT_FROM = 4


def is_flat(ops: list) -> bool:
    """Text and names alternating, text first and last, at least FLAT_FROM names, one
    language."""
    return (len(ops) >= 2 * FLAT_FROM + 1 and len(ops) % 2 == 1
            and all(op.__class__ is str for op in ops[::2])
            and all(getattr(op, "tag_key", None) is not None for op in ops[1::2])
            and len({id(op.escapes[0]) for op in ops[1::2]}) == 1)


def flat_runner(ops: list, static: int, cost: int, run: Op) -> Op:
    """``run`` for a flat program, the same pieces, slots and checks: each name read and
    escaped once, the pieces put together by C loops (``run`` called each name's op, a
    Python call per value, a tenth of a send)."""
    texts, tag_ops = ops[::2], ops[1::2]
    heads, last = tuple(texts[:-1]), texts[-1]
    keys = tuple(op.tag_key for op in tag_ops)
    table, escaped = tag_ops[0].escapes
    names = tuple(dict.fromkeys(keys))
    pick = itemgetter(*keys)  # a tuple: at least FLAT_FROM keys
    positions = tuple(range(1, 2 * len(keys), 2))

    def flat_run(out: list, c: tuple, d: dict, st: Any) -> None:
        top = c[0]
        if top.__class__ is not Tags:  # an `each` over text: each op reads it
            run(out, c, d, st)
            return
        st.work += cost
        st.size += static
        if st.work > st.next_check or st.size > MAX_PART_CHARS:
            st.check()
        memo = st.escaped
        written = {}
        for name in names:
            v = top.get(name)
            s = v if v.__class__ is str else js_string(v)
            text = memo.get(s)
            if text is None:
                text = memo[s] = s.translate(table) if escaped(s) is not None else s
            written[name] = text
        values = pick(written)
        st.size += sum(map(len, values))
        if st.size > MAX_PART_CHARS:
            st.check()
        start = len(out)
        out.extend(chain.from_iterable(zip(heads, values, strict=True)))
        out.append(last)
        if st.slots is not DISCARDED:
            st.slots.extend(map(start.__add__, positions))
    return flat_run
