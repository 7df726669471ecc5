"""The text alternative of an HTML email: its rules, and its behaviour on hostile input."""

from __future__ import annotations

import pytest

from engine.formats import plaintext
from engine.formats.plaintext import html_to_text


@pytest.mark.parametrize(("html", "expected"), [
    ('<html><head><title>T</title><style>p{color:red}</style><script>x()</script></head>'
     "<body><h1>Hello</h1><p>Your order.</p></body></html>", "Hello\n\nYour order.\n"),
    ("<p>a  \n  b<br>c<br/>  d</p>", "a b\nc\nd\n"),
    ("<ul><li>one</li><li>two <b>bold</b></li></ul>", "- one\n- two bold\n"),
    ("<ol><li>a</li><li>b<ul><li>n</li></ul></li><li>c</li></ol><p>after</p>",
     "1. a\n2. b\n- n\n3. c\n\nafter\n"),
    ("<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Tea</td><td>2</td></tr></table>",
     "Item  Qty\nTea  2\n"),
    ("<pre>  keep\n   this</pre><p>x</p>", "  keep\n   this\n\nx\n"),
    ("<p>a</p><hr><p>b</p>", "a\n\n--------------------\n\nb\n"),
    ("<p>Caf&eacute; &amp; &lt;b&gt;&nbsp;x \u2603</p>", "Caf\u00e9 & <b> x \u2603\n"),
    ("just   text", "just text\n"),
    ("<div>a<!-- hidden --><img src=x alt=pic>b</div>", "ab\n"),
    ('<?xml version="1.0" encoding="utf-8"?><html><body><p>xhtml</p></body></html>',
     "xhtml\n"),
    ("", "\n"),
    ("   ", "\n"),
    # Every kind of white space collapses, not only ASCII spaces and new lines.
    ("<p>a\u00a0\u00a0b\u2028c\td  e</p>", "a b c d e\n"),
    ("<p>x <b> y </b> z</p>", "x y z\n"),
    ("<div>a</div> <div> b</div>", "a\nb\n"),
    ("<p>one\u3000two</p><p>\u2003</p>", "one two\n"),
    ('<p><a href="mailto:"></a>x</p>', "x\n"),
    # What the last step takes away: spaces before a new line or at the end, a third new
    # line, both from tags (a text with none of them is returned as it is).
    ("<p>a </p>", "a\n"),
    ("<p>a<br><br><br>b</p>", "a\n\nb\n"),
    ("<ul><li></li><li>x</li></ul>", "-\n- x\n"),
    ("<table><tr><td>a</td><td></td></tr></table><p>b</p>", "a\n\nb\n"),
    ("<pre>x  </pre>y", "x\n\ny\n"),
    ("<p>a</p><pre>\n\n\n\nb</pre>", "a\n\nb\n"),
])
def test_text_rules(html: str, expected: str) -> None:
    assert html_to_text(html) == expected


@pytest.mark.parametrize(("html", "expected"), [
    ('<a href="https://e.test/x">here</a>', "here (https://e.test/x)"),
    ('<a href="https://e.test/x">https://e.test/x</a>', "https://e.test/x"),
    ('<a href="mailto:a@b.test">a@b.test</a>', "a@b.test"),
    ('<a href="mailto:a@b.test">write</a>', "write (a@b.test)"),
    ('<a href="javascript:alert(1)">bad</a>', "bad"),
    ('<a href="https://e.test/i"><img src=x></a>', "https://e.test/i"),
    ('go <a href="/relative">there</a>.', "go there."),
])
def test_links_show_their_web_target(html: str, expected: str) -> None:
    assert html_to_text(f"<p>{html}</p>") == expected + "\n"


def test_nesting_deeper_than_libxml2_allows_still_keeps_every_word() -> None:
    html = "<div>" * 5000 + "deep &amp; <b>wide</b>" + "</div>" * 5000
    assert html_to_text(html) == "deep & wide\n"


@pytest.mark.parametrize("html", ["<" * 200_000, "<a " * 100_000, "<!--" * 100_000,
                                  "&" * 100_000 + "<p>x", "<p>" * 100_000 + "y",
                                  "<pre>a" + " " * 200_000 + "b</pre>",
                                  "<p>a" + "\u3000 " * 100_000 + "b</p>"])
def test_hostile_markup_is_linear_and_never_raises(html: str) -> None:
    text = html_to_text(html)
    assert text.endswith("\n") and len(text) <= len(html) + 1


def _attributes(count: int) -> str:
    return " ".join(f"a{i}" for i in range(count))


LIST = "<ul><li>one</li><li>two &amp; <b>three</b></li></ul>"


def test_an_element_with_many_attributes_keeps_the_text_rules() -> None:
    # 4,000 attributes: 16,000,000 of the attribute budget's 16,777,216, parsed as usual.
    assert html_to_text(f"<p {_attributes(4000)}>x</p>{LIST}") == "x\n\n- one\n- two & three\n"


@pytest.mark.parametrize("html", [
    f"<p {_attributes(4100)}>x</p>{LIST}",
    # About 1 MB in one tag: libxml2 took 24 s to build its tree.
    f"<p {_attributes(150_000)}>x</p>{LIST}",
    # Values, quotes, slashes and no spaces: every way an attribute can start.
    "<p " + "".join(f'b{i}="v"/c{i}=\'w\'' for i in range(60_000)) + f">x</p>{LIST}",
    # Many elements, each with fewer attributes than a single one over the budget needs.
    f"<p {_attributes(255)}>x</p>" * 300 + LIST,
], ids=["over-the-budget", "one-tag-of-1MB", "quoted-and-slashed", "many-elements"])
def test_attributes_past_the_budget_give_the_stripped_text(html: str) -> None:
    # Past ATTRIBUTE_BUDGET the tree is not built (its attributes are quadratic): every word
    # is kept, as for nesting libxml2 refuses, without the block and list rules.
    words = " ".join(["x"] * html.count(">x</p>"))
    assert html_to_text(html) == f"{words} one two & three\n"


class _CountedChunks(list):
    """A writer's chunks that count how many of them are read, one by one or in slices."""

    reads = 0

    def __getitem__(self, key):  # type: ignore[no-untyped-def]
        item = super().__getitem__(key)
        _CountedChunks.reads += len(item) if isinstance(key, slice) else 1
        return item


NESTED = 1000  # libxml2 refuses nesting past about 2,000 elements: <a><b> 1,000 times
OPEN = '<a href="https://e.test/x"><b>' * NESTED
CLOSE = "</b></a>" * NESTED


@pytest.mark.parametrize(("html", "expected"), [
    # Every label is longer than its target: each link shows it, once per level.
    (OPEN + "<b>word</b> " * 80_000 + CLOSE,
     " ".join(["word"] * 80_000 + ["(https://e.test/x)"] * NESTED) + "\n"),
    # Every label is its target once stripped, past megabytes of white space in many chunks.
    ("<pre>" + OPEN + "<b> </b>" * 80_000 + "https://e.test/x" + "<b>\n</b>" * 80_000 + CLOSE
     + "</pre>", " " * 80_000 + "https://e.test/x\n"),
    # The same with a mail address: the label is the address, not the mailto: target.
    (OPEN.replace("https://e.test/x", "mailto:a@b.test") + "<b>a@b.test</b>" + "<br>" * 80_000
     + CLOSE, "a@b.test\n"),
], ids=["long-labels", "labels-are-the-target", "labels-are-the-address"])
def test_nested_links_read_each_chunk_a_bounded_number_of_times(
        html: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each closing link used to join every chunk written since it opened: (text length) x
    # (nesting depth), over a second for 1 MB. Counting the chunks read, not timing them,
    # keeps the test exact: the labels now read each chunk a bounded number of times.
    from engine.formats import text_writer as plaintext
    made = plaintext.TextWriter.__init__
    writers: list[plaintext.TextWriter] = []

    def counted(self: plaintext.TextWriter) -> None:
        made(self)
        self.chunks = _CountedChunks()
        writers.append(self)

    monkeypatch.setattr(plaintext.TextWriter, "__init__", counted)
    monkeypatch.setattr(_CountedChunks, "reads", 0)
    text = html_to_text(html)
    assert text == expected
    # Here 1.5 to 2 reads a chunk; the old joins read 80,000,000 (500 a chunk).
    assert _CountedChunks.reads <= 3 * len(writers[0].chunks)


def test_a_large_body_converted_again_gives_the_text_kept_and_the_same_text():
    html = "<p>" + "word " * 1000 + "</p><ul><li>one</li></ul>"
    first = plaintext.html_to_text(html)
    assert plaintext._cache[html] == first
    again = plaintext.html_to_text((html + " ")[:-1])  # equal text, another object
    assert again == first == plaintext._convert(html)


def test_the_texts_kept_stay_within_their_bound(monkeypatch):
    monkeypatch.setattr(plaintext, "_cache", {})
    monkeypatch.setattr(plaintext, "_cached_chars", 0)
    monkeypatch.setattr(plaintext, "_CACHE_CHARS", 40_000)
    for n in range(20):
        plaintext.html_to_text(f"<p>{n}</p>" + "<p>x</p>" * 500)
    assert plaintext._cached_chars <= 40_000
    assert plaintext._cached_chars == sum(len(h) + len(t) for h, t in plaintext._cache.items())
    assert f"<p>19</p>{'<p>x</p>' * 500}" in plaintext._cache  # the newest kept
    assert f"<p>0</p>{'<p>x</p>' * 500}" not in plaintext._cache  # the oldest dropped
