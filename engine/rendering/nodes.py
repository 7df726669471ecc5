"""Parse-tree nodes of a template (what scanner.py builds and whitespace.py trims)."""

from __future__ import annotations

# JavaScript's \s, which handlebars.js uses for both the lexer and whitespace control.
JS_WHITESPACE = (
    " \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

class Content:
    """Literal text; `original` is kept because standalone detection reads it."""

    __slots__ = ("left_stripped", "original", "right_stripped", "value")

    def __init__(self, text: str) -> None:
        self.value = self.original = text
        self.left_stripped = self.right_stripped = False


class Mustache:
    """`{{expr}}`, `{{{expr}}}` or `{{&expr}}`."""

    __slots__ = ("escaped", "expr", "strip")

    def __init__(self, expr: list, escaped: bool, strip: tuple[bool, bool]) -> None:
        self.expr, self.escaped, self.strip = expr, escaped, strip


class Comment:
    """`{{! ...}}` or `{{!-- ... --}}`; renders nothing but takes part in whitespace control."""

    __slots__ = ("strip",)

    def __init__(self, strip: tuple[bool, bool]) -> None:
        self.strip = strip


class Block:
    """`{{#helper params}}program{{else}}inverse{{/helper}}`."""

    __slots__ = (
        "close_strip", "helper", "inverse", "inverse_strip", "name", "open_strip", "params",
        "pos", "program",
    )

    def __init__(self, helper: str, name: str, params: list, strip: tuple[bool, bool],
                 pos: int) -> None:
        self.helper, self.name, self.params, self.pos = helper, name, params, pos
        self.program: list = []
        self.inverse: list | None = None
        self.open_strip = strip
        self.inverse_strip = (False, False)
        self.close_strip = (False, False)


class Partial:
    """`{{> name [context] [key=value ...]}}`; `indent` is set by whitespace control when the
    tag stands alone on its line (handlebars.js indents every line of the partial by it)."""

    __slots__ = ("context", "hash", "indent", "name", "strip")

    def __init__(self, name: str, context: list | None, hash_: list,
                 strip: tuple[bool, bool]) -> None:
        self.name, self.context, self.hash, self.strip = name, context, hash_, strip
        self.indent = ""


class PartialBlock(Block):
    """`{{#> name [context] [key=value ...]}}program{{/name}}`: the partial, with the program
    as its `{{> @partial-block}}` (and as the fallback when there is no such partial)."""

    __slots__ = ("context", "hash")

    def __init__(self, name: str, context: list | None, hash_: list,
                 strip: tuple[bool, bool], pos: int) -> None:
        super().__init__(">", name, [], strip, pos)
        self.context, self.hash = context, hash_
