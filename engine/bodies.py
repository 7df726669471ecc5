"""Final email bodies (D6): a whole HTML document with htmlHead inside <head>, text from HTML."""

from __future__ import annotations

import re

from channels.email import text_from_html

_DOCUMENT = re.compile(r"<html[\s>]", re.IGNORECASE)
_HEAD_END = re.compile(r"</head\s*>", re.IGNORECASE)


def html_document(body: str, head: str | None) -> str:
    """Wrap a fragment in a document; a body that already is a document gets the head added."""
    head = head or ""
    if _DOCUMENT.search(body):
        if not head:
            return body
        if _HEAD_END.search(body):
            return _HEAD_END.sub(lambda m: head + m.group(0), body, count=1)
        match = re.search(r"<html[^>]*>", body, re.IGNORECASE)
        assert match is not None
        return body[: match.end()] + f"<head>{head}</head>" + body[match.end():]
    return ('<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f"{head}</head><body>{body}</body></html>")


__all__ = ["html_document", "text_from_html"]
