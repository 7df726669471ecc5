"""Partial calls at render time, as handlebars.js runs them: `{{> name}}`, `{{> name ctx}}`,
`{{> name key=value}}`, partial blocks `{{#> layout}}...{{/layout}}` and
`{{> @partial-block}}` inside the partial.

A partial renders into the same output, work budget and deadline as the template calling
it (one `_State`), with the context stack reset to its own context (as handlebars.js does
outside its `compat` mode) and the caller's `@data`. The partials a render may use come in
the data frame under a key no template can name (`@` names are a fixed set).
"""

from __future__ import annotations

from collections.abc import Callable

from .budget import MAX_PART_CHARS
from .errors import RenderError
from .expression_scanner import PARTIAL_BLOCK
from .slots import DISCARDED
from .values import extend, push_context

PARTIALS = "\x00partials"  # data key: callable(name, language) -> runner or None
BLOCK = "\x00partial-block"  # data key: (program, caller's contexts, the outer block)
LANGUAGE = ("language",)  # load memo key: the language of the part being loaded
# Partials inside partials: publish refuses a partial that includes itself; this bounds a
# chain (and any stored program that slipped past) well before Python's recursion limit.
MAX_PARTIAL_DEPTH = 16

Runner = Callable[[list, tuple, dict, object], None]


def _block_runner(block: tuple) -> Runner:
    """The partial block's program as handlebars.js wraps it: run with the context it is
    called with pushed on the caller's contexts, `@partial-block` the caller's own again."""
    program, caller, outer = block

    def run(out: list, c: tuple, d: dict, st: object) -> None:
        frame = dict(d)
        if outer is None:
            frame.pop(BLOCK, None)
        else:
            frame[BLOCK] = outer
        program(out, push_context(caller, c[0]), frame, st)
    return run


def _indented(text: str, indent: str) -> str:
    """handlebars.js: every line prefixed, except an empty last one."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line and i + 1 == len(lines):
            break
        lines[i] = indent + line
    return "\n".join(lines)


def partial_op(name: str, context: Callable | None, pairs: list[tuple[str, Callable]],
               indent: str, block: Runner | None, language: str) -> Runner:
    """The op of one partial call (``block``: the program of a partial block)."""

    def op(out: list, c: tuple, d: dict, st) -> None:  # type: ignore[no-untyped-def]
        value = c[0] if context is None else context(c, d)
        if pairs:
            value = extend(value, [(key, ev(c, d)) for key, ev in pairs])
        frame = d
        if block is not None:
            frame = dict(d)
            frame[BLOCK] = (block, c, d.get(BLOCK))
        if name == PARTIAL_BLOCK:
            current = d.get(BLOCK)
            run = None if current is None else _block_runner(current)
        else:
            find = d.get(PARTIALS)
            run = None if find is None else find(name, language)
            if run is None and block is not None:  # the block is the fallback
                run = _block_runner(frame[BLOCK])
        if run is None:
            raise RenderError(f"the partial {name} could not be found")
        st.depth += 1
        if st.depth > MAX_PARTIAL_DEPTH:
            raise RenderError(f"partials are nested more than {MAX_PARTIAL_DEPTH} deep "
                              f"(at {name}: does a partial include itself?)")
        try:
            if not indent:
                run(out, (value,), frame, st)
                return
            inner: list[str] = []
            # Indenting rewrites values with the text around them: no value keeps a
            # place of its own (slots.py), so the render gives up noting them.
            st.slots = DISCARDED
            run(inner, (value,), frame, st)
            text = "".join(inner)
            # Counted before it is built: a wide indent on many lines multiplies the text.
            st.size += len(indent) * (text.count("\n") + 1)
            if st.size > MAX_PART_CHARS:
                raise RenderError(f"rendered part is longer than {MAX_PART_CHARS:,} "
                                  "characters")
            out.append(_indented(text, indent))
        finally:
            st.depth -= 1
    return op
