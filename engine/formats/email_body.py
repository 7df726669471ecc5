"""Final email bodies (D6, docs/api.md): a whole HTML document with htmlHead inside <head>,
text from HTML."""

from __future__ import annotations

import functools
import re

from engine.formats.css_skeleton import inline_rendered

_DOCUMENT = re.compile(r"<html[\s>]", re.IGNORECASE)
_HEAD_END = re.compile(r"</head\s*>", re.IGNORECASE)
# What the inliner acts on: a <style> block to move into the elements, a <link> to drop.
_STYLED = re.compile(r"<(?:style|link)[\s>/]", re.IGNORECASE)


def _found(pattern: re.Pattern[str], text: str, *starts: str) -> bool:
    """``pattern.search(text)``, told at once for ASCII text holding none of ``starts``
    (what any match begins with, lower case): a case-insensitive pattern is tried at every
    position (about 25 instructions a character), ``lower`` and a substring search cost a
    third of that (docs/performance.md)."""
    if text.isascii():
        lowered = text.lower()
        if not any(start in lowered for start in starts):
            return False
    return pattern.search(text) is not None


class _Document(str):
    """A document built from a rendered body that remembers where its values went
    (engine.rendering's RenderedHtml): ``source`` is (body, head), for inline_css."""

    source: tuple[str, str | None]


def html_document(body: str, head: str | None) -> str:
    """Wrap a fragment in a document; a body that already is a document gets the head added.
    A rendered body's document keeps the body and head: inline_css inlines its skeleton
    once and puts the values back (engine/formats/css_skeleton.py)."""
    made = _document(body, head)
    if hasattr(body, "pieces") and made is not body:
        document = _Document(made)
        document.source = (body, head)
        return document
    return made


def _document(body: str, head: str | None) -> str:
    head = head or ""
    if _found(_DOCUMENT, body, "<html"):
        if not head:
            return body
        if _HEAD_END.search(body):
            return _HEAD_END.sub(lambda m: head + m.group(0), body, count=1)
        # The first "<html" tag ends at the first ">" after it, found with str.find:
        # <html[^>]*> read from every "<html" to the end when no ">" followed (quadratic).
        opened = re.search("(?i)<html", body)  # rare: compiled at first use
        end = body.find(">", opened.start()) + 1 if opened else 0
        if end:
            return body[:end] + f"<head>{head}</head>" + body[end:]
        # An <html tag that never closes has no place for a head: wrapped as a fragment.
    return ('<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f"{head}</head><body>{body}</body></html>")


def inline_css(html: str) -> str:
    """The document with its `<style>` rules moved into each element's `style` attribute,
    which Gmail and Outlook keep where they drop a `<style>` block; `@media` rules stay in
    a `<style>` in the head (a rule on a state or a screen size has no element to go to).
    Remote stylesheets are never fetched (a template could name a private address) and
    `<link>` tags are dropped. CSS the inliner cannot read leaves the document as it was:
    a send is never refused for its styling. A document with neither a `<style>` nor a
    `<link>` is returned as it is: the inliner would only parse and re-serialise it, about
    120 µs of a send's CPU (docs/performance.md)."""
    if not _styled(html):
        return html
    source = getattr(html, "source", None)
    if source is not None or hasattr(html, "pieces"):
        body, head = source or (html, None)
        fast = inline_rendered(body, head, _document if source else _same, _inline, _styled)
        if fast is not None:
            return fast
    return _inline(html)


def _inline(html: str) -> str:
    try:
        return _inliner().inline(str(html))
    except ValueError:  # css_inline.InlineError
        return html


def _same(body: str, head: str | None) -> str:
    return body


def _styled(html: str) -> bool:
    return _found(_STYLED, html, "<style", "<link")


@functools.cache
def _inliner():  # type: ignore[no-untyped-def]
    import css_inline

    return css_inline.CSSInliner(keep_at_rules=True, load_remote_stylesheets=False,
                                 keep_link_tags=False)


def text_from_html(html: str) -> str:
    """The plain-text alternative, derived from the HTML (D6 in docs/api.md; rules in
    engine/formats/plaintext.py)."""
    # Imported here: lxml costs a fresh process about 15 ms, and what renders and inlines
    # a message (a preview, the API's send) needs only html_document and inline_css.
    from engine.formats.plaintext import html_to_text

    return html_to_text(html)
