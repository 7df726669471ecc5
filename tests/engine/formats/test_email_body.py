"""CSS inlining acts on documents with a stylesheet and leaves the others as they are."""

from __future__ import annotations

import pytest

from engine.formats import email_body
from engine.formats.email_body import html_document, inline_css


def test_a_document_without_a_stylesheet_is_returned_as_it_is():
    html = html_document("<p class='x'>Hello <b>there</b></p>", None)
    assert inline_css(html) is html


def test_style_rules_move_into_the_elements_whatever_the_tag_case():
    for tag in ("style", "STYLE", "Style"):
        html = html_document(f"<{tag}>p {{ color: red }}</{tag}><p>Hi</p>", None)
        inlined = inline_css(html)
        assert 'style="color: red' in inlined, inlined
        assert "<p>Hi</p>" not in inlined


def test_a_link_tag_is_dropped_and_never_fetched():
    html = html_document('<link rel="stylesheet" href="http://10.0.0.1/a.css"><p>Hi</p>',
                         None)
    assert "<link" not in inline_css(html)


@pytest.mark.parametrize("text", [
    "<p>x</p>", "<HTML>", "<Html lang=en>", "<html", "<htm>", "<STYLE>a{}</STYLE>",
    "<Link rel=x>", "<li>", "<stylex>", "<lin\u212a rel=x>", "é<style>", "\u017ftyle",
    "<\u017ftyle>", "<html\t>", "<link/>"])
def test_the_quick_refusal_agrees_with_the_patterns(text: str) -> None:
    assert email_body._found(email_body._DOCUMENT, text, "<html") == bool(
        email_body._DOCUMENT.search(text))
    assert email_body._styled(text) == bool(email_body._STYLED.search(text))
