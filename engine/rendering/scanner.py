"""Strict, linear scanner and parser for the supported Handlebars subset.

It follows the handlebars.js lexer rules for what it accepts (so accepted templates mean
the same thing in both) and refuses everything outside the subset with a line and column.
One pass, no regular expressions that can backtrack, nesting bounded, and a deadline.
"""

from __future__ import annotations

import time

from .budget import deadline_within
from .errors import TemplateSyntaxError
from .expression_scanner import PARTIAL_BLOCK, WS, ExpressionScanner
from .nodes import Block, Comment, Content, Mustache, Partial, PartialBlock

MAX_TEMPLATE_CHARS = 1_048_576
MAX_BLOCK_DEPTH = 50
DEFAULT_DEADLINE_SECONDS = 5.0


def position(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


class _Parser(ExpressionScanner):
    def __init__(self, text: str, deadline: float) -> None:
        self.text = text
        self.n = len(text)
        self.deadline = deadline
        self.tags_seen = 0

    def fail(self, pos: int, message: str) -> TemplateSyntaxError:
        line, column = position(self.text, pos)
        return TemplateSyntaxError(message, line, column)

    # -- template level -------------------------------------------------------------
    def parse(self) -> list:
        text, n = self.text, self.n
        nul = text.find("\x00")
        if nul >= 0:
            raise self.fail(nul, "NUL characters are not allowed in templates")
        root: list = []
        self._root = root
        body = root
        stack: list[Block] = []
        pos = 0
        while pos < n:
            i = text.find("{{", pos)
            if i < 0:
                body.append(Content(text[pos:]))
                break
            if i > pos and text[i - 1] == "\\":
                if i - 1 > pos and text[i - 2] == "\\":
                    # `\\{{`: a literal backslash, then a real mustache.
                    body.append(Content(text[pos:i - 1]))
                else:
                    # `\{{`: the mustache is literal text up to the next one.
                    if i - 1 > pos:
                        body.append(Content(text[pos:i - 1]))
                    pos = self._escaped_end(i)
                    body.append(Content(text[i:pos]))
                    continue
            elif i > pos:
                body.append(Content(text[pos:i]))
            pos, body = self._tag(i, body, stack)
        if stack:
            raise self.fail(stack[-1].pos, f"block '{stack[-1].name}' is never closed")
        return root

    def _escaped_end(self, i: int) -> int:
        k = self.text.find("{{", i + 2)
        if k < 0:
            return self.n
        for _ in range(2):
            if k - 1 >= i + 2 and self.text[k - 1] == "\\":
                k -= 1
        return k

    def _tag(self, start: int, body: list, stack: list[Block]) -> tuple[int, list]:
        self.tags_seen += 1
        if self.tags_seen & 255 == 0 and time.monotonic() > self.deadline:
            raise self.fail(start, "template took too long to compile")
        text = self.text
        p = start + 2
        if text.startswith("{{", p):
            raise self.fail(start, "raw blocks ({{{{ }}}}) are not supported")
        strip_open = p < self.n and text[p] == "~"
        if strip_open:
            p += 1
        c = text[p] if p < self.n else ""
        if c == "!":
            return self._comment(start, p, strip_open, body), body
        if c == ">":
            name, context, pairs, end, strip_close = self._partial_call(start, p + 1)
            body.append(Partial(name, context, pairs, (strip_open, strip_close)))
            return end, body
        if c == "*":
            raise self.fail(start, "decorators are not supported")
        if c == "^":
            raise self.fail(start, "inverse sections ({{^}}) are not supported; use {{else}}")
        if c == "#":
            if text.startswith("*", p + 1):
                raise self.fail(start, "decorators are not supported")
            if text.startswith(">", p + 1):
                return self._open_partial_block(start, p + 2, strip_open, body, stack)
            return self._open_block(start, p + 1, strip_open, body, stack)
        if c == "/":
            return self._close_block(start, p + 1, stack)
        q = p
        while q < self.n and text[q] in WS:
            q += 1
        if text.startswith("else", q):
            r = q + 4
            while r < self.n and text[r] in WS:
                r += 1
            if text.startswith(("}}", "~}}"), r):
                return self._else(start, r, strip_open, stack)
            if r > q + 4 or text.startswith(("}", "~"), r):
                raise self.fail(start, "chained {{else ...}} is not supported; nest the block")
        if c == "{":
            expr, end, strip_close = self._expression(start, p + 1, "}}}")
            body.append(Mustache(expr, False, (strip_open, strip_close)))
            return end, body
        if c == "&":
            p += 1
        expr, end, strip_close = self._expression(start, p, "}}")
        body.append(Mustache(expr, c != "&", (strip_open, strip_close)))
        return end, body

    def _comment(self, start: int, p: int, strip_open: bool, body: list) -> int:
        text = self.text
        if text.startswith("!--", p):
            # As in handlebars.js the closing `--` may reuse the opening one: `{{!--}}`.
            end = text.find("--", p + 1)
            while end >= 0 and not text.startswith(("}}", "~}}"), end + 2):
                end = text.find("--", end + 1)
            if end < 0:
                raise self.fail(start, "comment is never closed (expected --}})")
            close_len = 5 if text[end + 2] == "~" else 4
        else:
            end = text.find("}}", p + 1)
            if end < 0:
                raise self.fail(start, "comment is never closed (expected }})")
            close_len = 2
        tail = end + close_len
        body.append(Comment((strip_open, text[tail - 3] == "~")))
        return tail

    # -- blocks ---------------------------------------------------------------------
    def _open_block(self, start: int, p: int, strip_open: bool, body: list,
                    stack: list[Block]) -> tuple[int, list]:
        if len(stack) >= MAX_BLOCK_DEPTH:
            raise self.fail(start, f"blocks are nested more than {MAX_BLOCK_DEPTH} deep")
        expr, end, strip_close = self._expression(start, p, "}}", block=True)
        _, helper, params, name = expr
        block = Block(helper, name, params, (strip_open, strip_close), start)
        body.append(block)
        stack.append(block)
        block.program = []
        return end, block.program

    def _open_partial_block(self, start: int, p: int, strip_open: bool, body: list,
                            stack: list[Block]) -> tuple[int, list]:
        if len(stack) >= MAX_BLOCK_DEPTH:
            raise self.fail(start, f"blocks are nested more than {MAX_BLOCK_DEPTH} deep")
        name, context, pairs, end, strip_close = self._partial_call(start, p)
        if name == PARTIAL_BLOCK:
            raise self.fail(start, f"{{{{#> {PARTIAL_BLOCK}}}}} is not supported; "
                                   f"use {{{{> {PARTIAL_BLOCK}}}}}")
        block = PartialBlock(name, context, pairs, (strip_open, strip_close), start)
        body.append(block)
        stack.append(block)
        return end, block.program

    def _else(self, start: int, r: int, strip_open: bool,
              stack: list[Block]) -> tuple[int, list]:
        if not stack:
            raise self.fail(start, "{{else}} outside a block")
        block = stack[-1]
        if block.__class__ is PartialBlock:
            raise self.fail(start, f"{{{{else}}}} inside the partial block '{block.name}'")
        if block.inverse is not None:
            raise self.fail(start, f"second {{{{else}}}} in block '{block.name}'")
        strip_close = self.text[r] == "~"
        block.inverse_strip = (strip_open, strip_close)
        block.inverse = []
        return r + (3 if strip_close else 2), block.inverse

    def _close_block(self, start: int, p: int, stack: list[Block]) -> tuple[int, list]:
        head, end, strip_close, params = self._tokens(start, p, "}}", 0)
        name = head[2][0] if head[0] == "path" and head[1] == 0 and len(head[2]) == 1 else None
        if params or name is None:
            raise self.fail(start, "a closing tag names only its block helper")
        if not stack:
            raise self.fail(start, f"closing tag '{name}' without an open block")
        block = stack.pop()
        if (name != block.name if block.__class__ is PartialBlock
                else name.lower() != block.helper):
            raise self.fail(start, f"'{{{{/{name}}}}}' does not close '{block.name}'")
        block.close_strip = (self.text[start + 2] == "~", strip_close)
        parent = stack[-1] if stack else None
        if parent is None:
            return end, self._root
        return end, parent.inverse if parent.inverse is not None else parent.program


def parse(text: str, deadline_seconds: float = DEFAULT_DEADLINE_SECONDS) -> list:
    """Parse `text` into an AST (lists of Content/Mustache/Comment/Block)."""
    if not isinstance(text, str):
        raise TypeError("template text must be a string")
    if len(text) > MAX_TEMPLATE_CHARS:
        raise TemplateSyntaxError(
            f"template part is longer than {MAX_TEMPLATE_CHARS:,} characters", 1, 1)
    # Within the request's render budget, when one is open: a preview parses a part more
    # than once (checks, metadata, the render) and all of it shares the budget.
    parser = _Parser(text, deadline_within(deadline_seconds))
    return parser.parse()
