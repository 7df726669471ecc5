"""handlebars.js whitespace control: `~` stripping and standalone-line removal.

A port of handlebars' `WhitespaceControl` visitor so that block tags alone on a line
disappear with their line exactly as they do in handlebars.js. The regular expressions
of the original are replaced by linear strip operations.
"""

from __future__ import annotations

from .nodes import JS_WHITESPACE, Block, Comment, Content, Mustache, Partial, PartialBlock

_BLANKS = " \t"


def _trailing_ws(text: str) -> str:
    return text[len(text.rstrip(JS_WHITESPACE)):]


def _leading_ws(text: str) -> str:
    return text[:len(text) - len(text.lstrip(JS_WHITESPACE))]


def _is_prev_whitespace(body: list, i: int | None = None, is_root: bool = False) -> bool:
    if i is None:
        i = len(body)
    prev = body[i - 1] if i - 1 >= 0 else None
    if prev is None:
        return is_root
    if prev.__class__ is not Content:
        return False
    sibling = i - 2 >= 0
    tail = _trailing_ws(prev.original)
    if "\n" in tail:
        return True
    return not (sibling or not is_root) and tail == prev.original


def _is_next_whitespace(body: list, i: int | None = None, is_root: bool = False) -> bool:
    if i is None:
        i = -1
    nxt = body[i + 1] if i + 1 < len(body) else None
    if nxt is None:
        return is_root
    if nxt.__class__ is not Content:
        return False
    sibling = i + 2 < len(body)
    head = _leading_ws(nxt.original)
    if "\n" in head:
        return True
    return not (sibling or not is_root) and head == nxt.original


def _omit_right(body: list, i: int | None, multiple: bool = False) -> None:
    j = 0 if i is None else i + 1
    current = body[j] if j < len(body) else None
    if current is None or current.__class__ is not Content or (
            not multiple and current.right_stripped):
        return
    original = current.value
    if multiple:
        current.value = original.lstrip(JS_WHITESPACE)
    else:
        value = original.lstrip(_BLANKS)
        if value.startswith("\r"):
            value = value[1:]
        if value.startswith("\n"):
            value = value[1:]
        current.value = value
    current.right_stripped = current.value != original


def _omit_left(body: list, i: int | None, multiple: bool = False) -> bool:
    j = len(body) - 1 if i is None else i - 1
    current = body[j] if j >= 0 else None
    if current is None or current.__class__ is not Content or (
            not multiple and current.left_stripped):
        return False
    original = current.value
    current.value = original.rstrip(JS_WHITESPACE if multiple else _BLANKS)
    current.left_stripped = current.value != original
    return current.left_stripped


class _Strip:
    __slots__ = ("close", "close_standalone", "inline_standalone", "open", "open_standalone")

    def __init__(self, open_: bool, close: bool, open_sa: bool = False,
                 close_sa: bool = False, inline_sa: bool = False) -> None:
        self.open, self.close = open_, close
        self.open_standalone, self.close_standalone = open_sa, close_sa
        self.inline_standalone = inline_sa


def _block(block: Block) -> _Strip:
    _program(block.program, False)
    if block.inverse is not None:
        _program(block.inverse, False)
    program, inverse = block.program, block.inverse
    strip = _Strip(block.open_strip[0], block.close_strip[1],
                   open_sa=_is_next_whitespace(program),
                   close_sa=_is_prev_whitespace(inverse if inverse is not None else program))
    if block.open_strip[1]:
        _omit_right(program, None, True)
    if inverse is not None:
        if block.inverse_strip[0]:
            _omit_left(program, None, True)
        if block.inverse_strip[1]:
            _omit_right(inverse, None, True)
        if block.close_strip[0]:
            _omit_left(inverse, None, True)
        if _is_prev_whitespace(program) and _is_next_whitespace(inverse):
            _omit_left(program, None)
            _omit_right(inverse, None)
    elif block.close_strip[0]:
        _omit_left(program, None, True)
    return strip


def _accept(node: object) -> _Strip | None:
    cls = node.__class__
    if cls is Block or cls is PartialBlock:
        return _block(node)  # type: ignore[arg-type]
    if cls is Mustache:
        return _Strip(*node.strip)  # type: ignore[attr-defined]
    if cls is Comment or cls is Partial:
        return _Strip(*node.strip, inline_sa=True)  # type: ignore[attr-defined]
    return None


def _program(body: list, is_root: bool) -> None:
    for i, current in enumerate(body):
        cls = current.__class__
        if cls is Content or (cls is Mustache and not (current.strip[0] or current.strip[1])):
            continue  # `{{x}}` without `~` changes nothing: most of a template's tags
        strip = _accept(current)
        if strip is None:
            continue
        # Read from the neighbours' original text, which the omissions below leave as is.
        standalone = strip.inline_standalone or strip.open_standalone or strip.close_standalone
        prev_ws = standalone and _is_prev_whitespace(body, i, is_root)
        next_ws = standalone and _is_next_whitespace(body, i, is_root)
        if strip.close:
            _omit_right(body, i, True)
        if strip.open:
            _omit_left(body, i, True)
        if strip.inline_standalone and prev_ws and next_ws:
            _omit_right(body, i)
            if _omit_left(body, i) and current.__class__ is Partial:
                # A standalone partial indents each of its lines by the line's whitespace.
                original = body[i - 1].original
                current.indent = original[len(original.rstrip(_BLANKS)):]
        if strip.open_standalone and prev_ws:
            _omit_right(current.program, None)
            _omit_left(body, i)
        if strip.close_standalone and next_ws:
            _omit_right(body, i)
            _omit_left(current.inverse if current.inverse is not None else current.program,
                        None)


def control(root: list) -> list:
    """Apply whitespace control to a parsed template in place; returns it."""
    _program(root, True)
    return root
