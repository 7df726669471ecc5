"""The expressions inside a mustache (`name param* hash*`, subexpressions, literals, paths and
`@data`), read with the same lexer rules as handlebars.js; the template level around them is
engine/rendering/scanner.py."""

from __future__ import annotations

from .cache import LRU
from .errors import TemplateSyntaxError
from .helpers import BLOCK_HELPERS, DATA_NAMES, INLINE_HELPERS
from .nodes import JS_WHITESPACE

MAX_SUBEXPR_DEPTH = 8
# `../` steps in one path: the loader refuses more (expressions.MAX_LOAD_DEPTH), so a template
# the check accepted must never hold more.
MAX_PARENT_STEPS = 64
# Digits of a number literal: a longer one means nothing as a JavaScript number, and
# past 4,300 digits Python's int() itself refuses it.
MAX_NUMBER_CHARS = 100

WS = frozenset(JS_WHITESPACE)
_ID_EXCLUDED = frozenset("!\"#%&'()*+,./;<=>@[\\]^`{|}~") | WS
_ID_LOOKAHEAD = frozenset("=~}/.)|") | WS
_LITERAL_LOOKAHEAD = frozenset("~})") | WS
_SPECIAL_SEGMENTS = ("..", ".", "this")
# Expressions read before, by their text: a template repeats a few expressions many times,
# and an editor's keystroke parses its whole text again (docs/performance.md). Only an
# expression with no quote up to its first '}' is kept: its reading cannot depend on any
# character past that '}' and the next three, which are part of the key.
_READ = LRU(maxsize=4096, max_weight=1_000_000)
_QUOTES = ("\"", "'")
PARTIAL_BLOCK = "@partial-block"
_PARTIAL_NAME_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class ExpressionScanner:
    """The expression half of the parser; the parser supplies the text and ``fail``."""

    text: str
    n: int

    def fail(self, pos: int, message: str) -> TemplateSyntaxError:
        raise NotImplementedError

    def _expression(self, start: int, p: int, closer: str, block: bool = False):
        text = self.text
        brace = text.find("}", p)
        key = None
        if brace >= 0:
            segment = text[p:brace]
            if _QUOTES[0] not in segment and _QUOTES[1] not in segment:
                key = (segment, text[brace:brace + 4], closer, block)
                read = _READ.get(key)
                if read is not None:
                    expr, length, strip_close = read  # type: ignore[misc]
                    return expr, p + length, strip_close
        head, end, strip_close, params = self._tokens(start, p, closer, 0)
        expr = self._classify(start, head, params, block)
        if key is not None:
            # Shared by every tree that holds it: nothing downstream changes an expression.
            _READ.put(key, (expr, end - p, strip_close), weight=len(key[0]))
        return expr, end, strip_close

    def _classify(self, start: int, head: list, params: list, block: bool,
                  subexpr: bool = False) -> list:
        kind = head[0]
        simple = kind == "path" and head[1] == 0 and len(head[2]) == 1
        name = head[2][0] if simple else None
        lname = name.lower() if name else None
        if block:
            if lname not in BLOCK_HELPERS:
                what = name if name else "this expression"
                raise self.fail(start, f"unknown block helper '{what}'")
            self._arity(start, name, BLOCK_HELPERS[lname], params)
            return ["block", lname, params, name]
        if lname in BLOCK_HELPERS:
            raise self.fail(start, f"'{name}' is a block helper; use {{{{#{name} ...}}}}")
        if lname in INLINE_HELPERS:
            self._arity(start, name, INLINE_HELPERS[lname], params)
            return ["call", lname, params]
        if kind == "lit" or params or subexpr:
            what = name if name else "this expression"
            if kind == "lit" and not params and not subexpr:
                raise self.fail(start, "a mustache must start with a name, not a literal")
            raise self.fail(start, f"unknown helper '{what}'")
        return head

    def _arity(self, start: int, name: str, bounds: tuple[int, int], params: list) -> None:
        low, high = bounds
        if not low <= len(params) <= high:
            want = str(low) if low == high else f"{low} to {high}"
            raise self.fail(start, f"'{name}' takes {want} argument(s), got {len(params)}")

    def _tokens(self, start: int, p: int, closer: str, depth: int):
        """Read `head param*` up to `closer` (or ')' when depth > 0)."""
        text, n = self.text, self.n
        items: list = []
        while True:
            while p < n and text[p] in WS:
                p += 1
            if p >= n:
                what = "subexpression" if depth else "mustache"
                raise self.fail(start, f"{what} is never closed")
            c = text[p]
            if depth and c == ")":
                end, strip_close = p + 1, False
                break
            if not depth:
                if text.startswith("}}}}", p):
                    raise self.fail(p, "'}}}}' closes raw blocks, which are not supported")
                if closer == "}}" and text.startswith(("}}}", "}~}}"), p):
                    raise self.fail(p, "'}}}' closes a mustache opened with '{{'")
                if c == "~" and closer == "}}" and text.startswith(closer, p + 1):
                    end, strip_close = p + 1 + len(closer), True
                    break
                if closer == "}}}" and text.startswith("}~}}", p):
                    end, strip_close = p + 4, True
                    break
                if text.startswith(closer, p):
                    end, strip_close = p + len(closer), False
                    break
            if c == "(":
                if not items:
                    raise self.fail(p, "a mustache must start with a name")
                if depth >= MAX_SUBEXPR_DEPTH:
                    raise self.fail(p, "subexpressions are nested too deep")
                sub = p
                head, p, _, params = self._tokens(sub, sub + 1, closer, depth + 1)
                items.append(self._classify(sub, head, params, False, subexpr=True))
                continue
            item, p = self._atom(p)
            items.append(item)
        if not items:
            raise self.fail(start, "empty mustache")
        return items[0], end, strip_close, items[1:]

    def _atom(self, p: int) -> tuple[list, int]:
        text = self.text
        c = text[p]
        if c in "\"'":
            q, out = p + 1, []
            while True:
                k = text.find(c, q)
                if k < 0:
                    raise self.fail(p, "string is never closed")
                if text[k - 1] == "\\":
                    out.append(text[q:k - 1] + c)
                    q = k + 1
                    continue
                out.append(text[q:k])
                return ["lit", "".join(out)], k + 1
        if c == "[":
            raise self.fail(p, "bracket segments ([...]) are not allowed")
        if c == "=" or self._is_hash_key(p):
            raise self.fail(p, "hash arguments (name=value) are not supported")
        if c == "|" or (text.startswith("as", p) and self._as_pipe(p + 2)):
            raise self.fail(p, "block parameters (as |x|) are not supported")
        if c == "@":
            segs, q = self._segments(p + 1)
            return self._data(p, segs), q
        lit = self._literal(p)
        if lit is not None:
            return lit
        segs, q = self._segments(p)
        return self._path(p, segs), q

    def _is_hash_key(self, p: int) -> bool:
        q = p
        while q < self.n and self.text[q] not in _ID_EXCLUDED:
            q += 1
        while q < self.n and self.text[q] in WS:
            q += 1
        return q > p and q < self.n and self.text[q] == "="

    def _as_pipe(self, q: int) -> bool:
        r = q
        while r < self.n and self.text[r] in WS:
            r += 1
        return r > q and r < self.n and self.text[r] == "|"

    def _literal(self, p: int) -> tuple[list, int] | None:
        text, n = self.text, self.n
        if p >= n:
            return None
        for word, value in (("true", True), ("false", False), ("null", None),
                            ("undefined", None)):
            end = p + len(word)
            if text.startswith(word, p) and end < n and text[end] in _LITERAL_LOOKAHEAD:
                return ["lit", value], end
        q = p + 1 if text[p] == "-" else p
        d = q
        while d < n and "0" <= text[d] <= "9":
            d += 1
        if d == q:
            return None
        end = d
        if end + 1 < n and text[end] == "." and "0" <= text[end + 1] <= "9":
            end += 1
            while end < n and "0" <= text[end] <= "9":
                end += 1
        if end >= n or text[end] not in _LITERAL_LOOKAHEAD:
            return None
        raw = text[p:end]
        if len(raw) > MAX_NUMBER_CHARS:
            raise self.fail(p, f"number literal longer than {MAX_NUMBER_CHARS} characters")
        return ["lit", float(raw) if "." in raw else int(raw)], end

    def _segments(self, p: int) -> tuple[list[str], int]:
        """Path segments as handlebars.js lexes them: ID (SEP ID)*, with '.' and '..' IDs."""
        text, n = self.text, self.n
        segs: list[str] = []
        while True:
            if p >= n:
                raise self.fail(p, "mustache is never closed")
            if text.startswith("..", p):
                seg, p = "..", p + 2
            elif p < n and text[p] == "." and p + 1 < n and text[p + 1] in _ID_LOOKAHEAD:
                seg, p = ".", p + 1
            else:
                if segs and self._literal(p) is not None:
                    raise self.fail(p, "a path segment must be a name, not a literal")
                q = p
                while q < n and text[q] not in _ID_EXCLUDED:
                    q += 1
                if q == p or (q < n and text[q] not in _ID_LOOKAHEAD):
                    bad = q if q > p else p
                    if bad < n and text[bad] == "[":
                        raise self.fail(bad, "bracket segments ([...]) are not allowed")
                    raise self.fail(bad, f"unexpected character {text[bad:bad + 1]!r}")
                seg, p = text[p:q], q
            segs.append(seg)
            if p < n and (text[p] == "/" or (
                    text[p] == "." and not text.startswith("..", p)
                    and not (p + 1 < n and text[p + 1] in _ID_LOOKAHEAD))):
                p += 1
            else:
                return segs, p

    def _path(self, p: int, segs: list[str]) -> list:
        depth, dig = 0, []
        for seg in segs:
            if seg in _SPECIAL_SEGMENTS:
                if dig:
                    raise self.fail(p, f"invalid path '{'.'.join(segs)}'")
                if seg == "..":
                    depth += 1
                    if depth > MAX_PARENT_STEPS:
                        raise self.fail(p, f"more than {MAX_PARENT_STEPS} '../' in one path")
            else:
                if seg.startswith("_"):
                    raise self.fail(p, f"names starting with '_' are not allowed ('{seg}')")
                dig.append(seg)
        return ["path", depth, dig]

    def _data(self, p: int, segs: list[str]) -> list:
        head, rest = segs[0], segs[1:]
        if head not in DATA_NAMES:
            raise self.fail(p, f"unknown data variable '@{head}'")
        if rest and (head != "root" or any(s in _SPECIAL_SEGMENTS for s in rest)):
            raise self.fail(p, f"invalid data path '@{'.'.join(segs)}'")
        return ["data", head, self._path(p, rest)[2]]

    # -- partials ---------------------------------------------------------------------
    def _partial_call(self, start: int, p: int) -> tuple[str, list | None, list, int, bool]:
        """`name [context] [key=value ...]` of `{{> ...}}` or `{{#> ...}}` up to `}}`:
        (name, context expression or None, [[key, expression], ...], end, strip_close)."""
        text, n = self.text, self.n
        while p < n and text[p] in WS:
            p += 1
        q = p
        if text.startswith(PARTIAL_BLOCK, p):
            q = p + len(PARTIAL_BLOCK)
        else:
            while q < n and text[q] in _PARTIAL_NAME_CHARS:
                q += 1
        if q == p or (q < n and text[q] not in WS and text[q] not in "}~"):
            raise self.fail(start, "a partial is named by letters, digits, '_' and '-' "
                                   "({{> footer}})")
        name, p = text[p:q], q
        context: list | None = None
        pairs: list = []
        while True:
            while p < n and text[p] in WS:
                p += 1
            if p >= n:
                raise self.fail(start, "mustache is never closed")
            if text.startswith(("}}}", "}~}}"), p):
                raise self.fail(p, "'}}}' closes a mustache opened with '{{'")
            if text.startswith("~}}", p):
                return name, context, pairs, p + 3, True
            if text.startswith("}}", p):
                return name, context, pairs, p + 2, False
            if self._is_hash_key(p):
                k = p
                while text[k] not in _ID_EXCLUDED:
                    k += 1
                key = text[p:k]
                while text[k] in WS:
                    k += 1
                value, p = self._partial_value(start, k + 1)
                pairs.append([key, value])
                continue
            if pairs:
                raise self.fail(p, "a partial's context comes before its key=value arguments")
            if context is not None:
                raise self.fail(p, "a partial takes at most one context argument")
            context, p = self._partial_value(start, p)

    def _partial_value(self, start: int, p: int) -> tuple[list, int]:
        """One argument of a partial: a path, a literal, `@data` or a subexpression."""
        text, n = self.text, self.n
        while p < n and text[p] in WS:
            p += 1
        if p >= n:
            raise self.fail(start, "mustache is never closed")
        if text[p] == "(":
            head, end, _, params = self._tokens(p, p + 1, "}}", 1)
            return self._classify(p, head, params, False, subexpr=True), end
        if text[p] == "}" or text.startswith("~}}", p):
            raise self.fail(p, "a value is missing after '='")
        return self._atom(p)
