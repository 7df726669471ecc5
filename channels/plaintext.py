"""The plain-text alternative of an HTML email (D6), from libxml2's parse of the HTML.

Every preview and every email without a text part needs one. html2text, which we used
first, parses in pure Python (about 2 ms for a 1.4 KB receipt); this walks lxml's tree
without recursion in a tenth of that. The rules are those of a readable text email:

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

import lxml.etree
import lxml.html

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
_BLANK_LINES = re.compile(r"\n{3,}")
_TAG = re.compile(r"<[^<>]*>")  # no '<' inside: linear on any input
_parsers = threading.local()  # an lxml parser serves one thread at a time


def _parser() -> lxml.html.HTMLParser:
    parser = getattr(_parsers, "parser", None)
    if parser is None:
        # Bytes in a declared encoding: a str with an XML declaration would be refused.
        parser = _parsers.parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True,
                                                        remove_pis=True, no_network=True,
                                                        huge_tree=True)
    return parser


class _Writer:
    """Text chunks with pending line breaks, so a break is written once, before new text."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.pending = 0  # 0: none, 1: new line, 2: blank line
        self.at_line_start = True

    def brk(self, level: int) -> None:
        if self.chunks:
            self.pending = max(self.pending, level)

    def raw(self, text: str) -> None:
        if not text:
            return
        if self.pending:
            self.chunks.append("\n" * self.pending)
            self.pending = 0
            self.at_line_start = True
        self.chunks.append(text)
        self.at_line_start = text.endswith("\n")

    def words(self, text: str | None) -> None:
        if not text:
            return
        text = _SPACES.sub(" ", text)
        if text.startswith(" ") and (self.at_line_start or self.pending or
                                     (self.chunks and self.chunks[-1].endswith(" "))):
            text = text[1:]
        self.raw(text)

    def text(self) -> str:
        lines = "".join(self.chunks).split("\n")
        return _BLANK_LINES.sub("\n\n", "\n".join(line.rstrip() for line in lines)).strip("\n")


def html_to_text(html: str) -> str:
    """The text part for ``html``: never empty, ends with one newline."""
    if not html or not html.strip():
        return "\n"
    parser = _parser()
    try:
        root = lxml.html.document_fromstring(html.encode("utf-8", "surrogatepass"),
                                             parser=parser)
    except (lxml.etree.ParserError, ValueError):
        return _stripped(html)
    if any(error.level_name == "FATAL" for error in parser.error_log):
        # libxml2 gave up part-way (nesting deeper than it allows): keep every word anyway.
        return _stripped(html)
    out = _Writer()
    skipping = 0  # depth inside a left-out element
    preformatted = 0
    lists: list[int | None] = []  # None: unordered; else the next number
    links: list[tuple[str | None, int]] = []
    for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else None  # None: comment or PI
        if event == "start":
            if skipping or tag in SKIPPED:
                skipping += 1
                continue
            if tag is None:
                continue
            _open(out, element, tag, lists, links)
            if tag == "pre":
                preformatted += 1
            if preformatted:
                out.raw(element.text or "")
            else:
                out.words(element.text)
            continue
        if skipping:
            skipping -= 1
            if skipping:
                continue
        elif tag is not None:
            _close(out, tag, lists, links)
            if tag == "pre":
                preformatted -= 1
        if preformatted:
            out.raw(element.tail or "")
        else:
            out.words(element.tail)
    return out.text() + "\n"


def _stripped(html: str) -> str:
    """Tags removed, entities decoded: the text of a document libxml2 would not parse whole."""
    text = entities.unescape(_TAG.sub(" ", html))
    return _SPACES.sub(" ", text).strip() + "\n"


def _open(out: _Writer, element: lxml.html.HtmlElement, tag: str, lists: list[int | None],
          links: list[tuple[str | None, int]]) -> None:
    if tag in PARAGRAPHS:
        out.brk(1 if lists and tag in ("ul", "ol") else 2)
        if tag == "hr":
            out.raw("-" * 20)
            out.brk(2)
        elif tag in ("ul", "ol"):
            lists.append(1 if tag == "ol" else None)
    elif tag in LINES:
        out.brk(1)
        if tag == "li":
            number = lists[-1] if lists else None
            out.raw("- " if number is None else f"{number}. ")
            if number is not None:
                lists[-1] = number + 1
    elif tag == "br":
        out.raw("\n")
    elif tag in CELLS:
        if element.getprevious() is not None:
            out.raw("  ")
    elif tag == "a":
        href = (element.get("href") or "").strip()
        links.append((href if href.lower().startswith(LINK_SCHEMES) else None,
                      len(out.chunks)))


def _close(out: _Writer, tag: str, lists: list[int | None],
           links: list[tuple[str | None, int]]) -> None:
    if tag in PARAGRAPHS:
        if tag in ("ul", "ol") and lists:
            lists.pop()
            out.brk(1 if lists else 2)
        else:
            out.brk(2)
    elif tag in LINES:
        out.brk(1)
    elif tag == "a" and links:
        href, start = links.pop()
        if href:
            label = "".join(out.chunks[start:]).strip()
            shown = href[7:] if href.lower().startswith("mailto:") else href
            if label not in (href, shown):
                out.words(f" ({shown})" if label else shown)
