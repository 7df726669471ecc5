"""The plain-text alternative of an HTML email (D6, docs/api.md), from libxml2's parse of the HTML.

Every preview and every email without a text part needs one. html2text, which we used
first, parses in pure Python; this walks lxml's tree without recursion, in a fraction of
its time (docs/performance.md, "Measurements behind the code's shape"). The rules are
those of a readable text email:

- ``head``, ``script``, ``style`` and other non-content elements are left out, as are images;
- block elements (paragraphs, headings, lists, tables, ...) start on a new line, and
  paragraphs and headings are separated by a blank line; ``br`` breaks the line;
- list items start with ``- `` (``1. ``, ``2. `` in an ordered list);
- table rows are lines and their cells are separated by two spaces;
- a link keeps its text and shows its target after it in parentheses (http, https and
  mailto targets only, and not when the text already is the target);
- whitespace runs collapse to one space, except inside ``pre``; ``hr`` is a line of dashes.
"""

from __future__ import annotations

import html as entities
import re
import threading
from types import ModuleType
from typing import TYPE_CHECKING

from engine.formats.text_writer import Links, TextWriter

if TYPE_CHECKING:
    import lxml.etree

SKIPPED = frozenset({"head", "title", "script", "style", "template", "noscript", "iframe",
                     "object", "embed", "svg", "math", "canvas", "audio", "video", "select",
                     "button", "img", "map"})
PARAGRAPHS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table",
                        "blockquote", "pre", "dl", "figure", "hr", "address", "fieldset"})
LINES = frozenset({"div", "li", "tr", "dt", "dd", "section", "article", "header", "footer",
                   "main", "nav", "aside", "center", "form", "figcaption", "caption",
                   "tbody", "thead", "tfoot", "details", "summary", "html", "body"})
CELLS = frozenset({"td", "th"})
LINK_SCHEMES = ("http://", "https://", "mailto:")
_SPACES = re.compile(r"\s+")
_TAG = re.compile(r"<[^<>]*>")  # no '<' inside: linear on any input
_parsers = threading.local()  # an lxml parser serves one thread at a time
# lxml.etree (about 5 MiB of a process's memory) is imported by the first conversion, not at
# start: a worker whose emails carry their own text never needs it (docs/performance.md,
# "Memory at rest").
_etree: ModuleType | None = None


def _lxml() -> ModuleType:
    """lxml.etree, imported once."""
    global _etree
    if _etree is None:
        import lxml.etree

        _etree = lxml.etree
    return _etree

# libxml2 builds an element's attributes as a list it walks to the end to add each one, so
# k attributes on one element cost k² (seconds for one hostile tag, docs/performance.md).
# Past this budget of the sum of k² over the elements the text comes from the stripped
# tags, as for nesting libxml2 refuses; real mail is many orders of magnitude below.
ATTRIBUTE_BUDGET = 1 << 24
# What libxml2's tokenizer (HTML5's) can have just before an attribute's first character:
# the space or "/" ending the tag name or the previous name or value, or a value's closing
# quote. So no document has more attributes than these characters, and one with at most
# sqrt(ATTRIBUTE_BUDGET) of them is within the budget without being parsed twice.
_BEFORE_ATTRIBUTE = ("\t", "\n", "\f", "\r", " ", "/", '"', "'")

# What each tag does to the text: a table lookup, one per element, instead of set tests.
SKIP, PARAGRAPH, LIST, RULE, LINE, ITEM, BREAK, CELL, LINK, PRE = range(10)
KINDS: dict[str, int] = {
    **dict.fromkeys(SKIPPED, SKIP), **dict.fromkeys(PARAGRAPHS, PARAGRAPH),
    **dict.fromkeys(LINES, LINE), **dict.fromkeys(CELLS, CELL),
    "ul": LIST, "ol": LIST, "hr": RULE, "li": ITEM, "br": BREAK, "a": LINK, "pre": PRE,
}
# The break a paragraph or a line asks for before and after it (2: a blank line).
BREAKS = {PARAGRAPH: 2, LINE: 1}


def _parser() -> lxml.etree.HTMLParser:
    parser = getattr(_parsers, "parser", None)
    if parser is None:
        # lxml.etree's parser, not lxml.html's: its elements need no Python class lookup
        # each. Bytes in a declared encoding: a str with an XML declaration is refused.
        parser = _parsers.parser = _lxml().HTMLParser(encoding="utf-8", remove_comments=True,
                                                      remove_pis=True, no_network=True,
                                                      huge_tree=True)
    return parser


class _AttributeWork:
    """An lxml parser target: the sum over the elements of their number of attributes,
    squared. A target gets each start tag's attributes from the tokenizer, without the tree
    whose building is quadratic in them."""

    __slots__ = ("total",)

    def __init__(self) -> None:
        self.total = 0

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self.total += len(attrib) ** 2

    def close(self) -> int:
        return self.total


def _over_attribute_budget(html: str, data: bytes) -> bool:
    """Whether building ``data``'s tree would do more than ATTRIBUTE_BUDGET attribute work."""
    # The common cases, without a second parse: a short document (the bench's 1.5 KB), or
    # too few of those characters (about 25 KB of ordinary HTML has 4,096).
    if len(html) ** 2 <= ATTRIBUTE_BUDGET or \
            sum(map(html.count, _BEFORE_ATTRIBUTE)) ** 2 <= ATTRIBUTE_BUDGET:
        return False
    etree = _lxml()
    parser = etree.HTMLParser(encoding="utf-8", no_network=True, huge_tree=True,
                              target=_AttributeWork())
    return etree.fromstring(data, parser=parser) > ATTRIBUTE_BUDGET



def _tree(html: str) -> lxml.etree._Element | None:
    """libxml2's tree of ``html``, or None when it cannot be built whole (then the text
    comes from the stripped tags)."""
    etree = _lxml()
    parser = _parser()
    data = html.encode("utf-8", "surrogatepass")
    try:
        if _over_attribute_budget(html, data):
            return None
        root = etree.fromstring(data, parser=parser)
    except (etree.ParserError, ValueError):
        return None
    if root is None or any(error.level_name == "FATAL" for error in parser.error_log):
        # Nothing parsed, or libxml2 gave up part-way (nesting deeper than it allows): keep
        # every word anyway.
        return None
    return root


# The same HTML always gives the same text, and the same HTML comes back: a preview asked
# again with the same tags (the editor's preview of a draft, an integration checking its
# template), a template's body without tags. The text of a large body is kept, bounded by
# the characters held (a few large bodies at most), the oldest dropped first; a small one
# (under 256 characters) costs less to convert than to keep.
_CACHED_FROM = 256
_CACHE_CHARS = 4_000_000
_cache: dict[str, str] = {}  # insertion order: the oldest first
_cache_lock = threading.Lock()
_cached_chars = 0


def html_to_text(html: str) -> str:
    """The text part for ``html``: never empty, ends with one newline."""
    global _cached_chars
    if len(html) < _CACHED_FROM:
        return _convert(html)
    found = _cache.get(html)
    if found is not None:
        return found
    text = _convert(html)
    size = len(html) + len(text)
    if size <= _CACHE_CHARS // 4:
        with _cache_lock:
            if html not in _cache:
                _cache[html] = text
                _cached_chars += size
                while _cached_chars > _CACHE_CHARS:
                    oldest = next(iter(_cache))
                    _cached_chars -= len(oldest) + len(_cache.pop(oldest))
    return text


def _convert(html: str) -> str:
    if not html or not html.strip():
        return "\n"
    root = _tree(html)
    if root is None:
        return _stripped(html)
    out = TextWriter()
    words, chunks = out.words, out.chunks
    skipping = 0  # depth inside a left-out element
    preformatted = 0
    lists: list[int | None] = []  # None: unordered; else the next number
    links = Links()
    kinds = KINDS
    breaks = BREAKS
    # Paragraphs and lines, most of an email's elements, only ask for a break, the same on
    # both sides of them: that is done here, without a call (TextWriter.brk); _open and
    # _close do the rest.
    for event, element in _lxml().iterwalk(root, events=("start", "end")):
        tag = element.tag
        kind = kinds.get(tag) if tag.__class__ is str else SKIP  # SKIP: comment or PI
        start = event == "start"
        if start:
            if skipping or kind == SKIP:
                skipping += 1
                continue
        elif skipping:
            skipping -= 1
            if skipping:
                continue
            kind = None  # the left-out element's own end: only its tail is read
        level = breaks.get(kind)
        if level:
            if chunks and out.pending < level:
                out.pending = level
        elif kind is not None:
            if start:
                _open(out, element, kind, tag, lists, links)
            else:
                _close(out, kind, lists, links)
            if kind == PRE:
                preformatted += 1 if start else -1
        text = element.text if start else element.tail
        if text and preformatted:
            out.keep(text)
        elif text:
            words(text)
    return out.text() + "\n"


def _stripped(html: str) -> str:
    """Tags removed, entities decoded: the text of a document libxml2 would not parse whole."""
    text = entities.unescape(_TAG.sub(" ", html))
    return _SPACES.sub(" ", text).strip() + "\n"


def _open(out: TextWriter, element: lxml.etree._Element, kind: int, tag: str,
          lists: list[int | None], links: Links) -> None:
    if kind in (PARAGRAPH, PRE):
        out.brk(2)
    elif kind == LIST:
        out.brk(1 if lists else 2)
        lists.append(1 if tag == "ol" else None)
    elif kind == RULE:
        out.brk(2)
        out.raw("-" * 20)
        out.brk(2)
    elif kind in (LINE, ITEM):
        out.brk(1)
        if kind == ITEM:
            number = lists[-1] if lists else None
            out.raw("- " if number is None else f"{number}. ")
            if number is not None:
                lists[-1] = number + 1
    elif kind == BREAK:
        out.raw("\n")
    elif kind == CELL:
        if element.getprevious() is not None:
            out.raw("  ")
    elif kind == LINK:
        href = (element.get("href") or "").strip()
        links.open(href if href.lower().startswith(LINK_SCHEMES) else None, out.chunks)


def _close(out: TextWriter, kind: int, lists: list[int | None],
           links: Links) -> None:
    if kind == LIST and lists:
        lists.pop()
        out.brk(1 if lists else 2)
    elif kind in (PARAGRAPH, PRE, LIST, RULE):
        out.brk(2)
    elif kind in (LINE, ITEM):
        out.brk(1)
    elif kind == LINK and links.stack:
        href, label = links.close(out.chunks)
        if href:
            shown = href[7:] if href.lower().startswith("mailto:") else href
            # label is None: longer than href, so neither href nor shown.
            if label not in (href, shown):
                out.words(shown if label == "" else f" ({shown})")
