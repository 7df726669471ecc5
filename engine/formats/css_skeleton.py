"""CSS inlining once per document skeleton, the values put back at each send.

The skeleton is the rendered document with each value replaced by a marker; it is
inlined once per process (the inliner parses and re-serialises the whole document, most
of a send's CPU) and kept by its text. A send then puts its values where the markers came
out, written as the inliner writes text (`&`, `<`, `>`, U+00A0 escaped) or an attribute
value (`&`, `"`, U+00A0). The result is byte for byte the inliner's output on the whole
document, or the skeleton is refused and the whole document is inlined: docs/rendering.md
lists when, tests/engine/formats/test_css_skeleton.py checks it against the inliner.

A marker is a newline, U+E000, its number, a probe (`&lt;`, as the template escapes `<`,
and U+00A0) and U+E001. It is kept only when it comes out whole, once, as text or in an
attribute, so wherever a value would be read differently from its marker the marker comes
out otherwise and the skeleton is refused: in `<style>`, a comment or a raw-text element
(the probe is not decoded), in an unquoted attribute, a tag or an attribute name (the
newline ends it), where leading white space is dropped or moved (before `<body>`, after
`<pre>`, in a table row's white space). Refused before
inlining: a marker right after `<`, `&...` or a carriage return (the value would change
what they read), in an attribute the CSS or the parser reads (`class`, `id`, `style`,
`type`, one an attribute selector names...). Per send, a value falls back to the whole
document when it holds NUL, a carriage return or a lone surrogate; an empty or
white-space-only value is written into the skeleton itself (the parser treats white
space apart), and so is part of its key.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from operator import itemgetter

OPEN, CLOSE = "\ue000", "\ue001"
# The probe: `<` as a template's `{{x}}` writes it (`&lt;`) and U+00A0. It tells each place
# apart: text writes `&lt;&nbsp;`, an attribute `<&nbsp;`, a place that does not decode
# references (`<style>`, a comment) keeps `&lt;\xa0`. Within text or within an attribute
# the inliner writes each character the same way wherever it is, so the other characters
# the escapes touch need no reference of their own in every marker: a reference costs the
# inliner's parser more than the rest of a marker (a probe of all seven escaped characters
# would be about 40% of the first inlining of a 50 KB document).
_PROBE = "&lt;\xa0"
# Kept in a <head>: the skeleton of one template, one structure, one set of empty values.
MAX_ENTRIES = 256
MAX_CHARS = 16_000_000
# Attributes whose value the inliner or the HTML parser reads: a value there may change
# which rules match or how the document is built (an <input type=hidden> in a table).
_READ_ATTRIBUTES = frozenset({
    "class", "id", "style", "data-css-inline", "rel", "type", "width", "height", "color",
    "face", "size", "encoding", "media"})
# The patterns of the rarer checks are sources, compiled at their first use (`re` keeps
# them): a process that never needs one does not pay its compile (about 300,000
# instructions each) at import.
_ATTRIBUTE_SELECTOR = r"\[\s*(?:[-\w*]*\|)?\s*([-\w]+)"
_STYLE_TEXT = r"(?is)<style[^>]*>(.*?)(?:</style|$)"
# Text right before a marker that a value could continue: a tag, a character reference
# (the longest name is 32 characters), a carriage return (CR LF is one line break).
_REFERENCE_END = r"&[#0-9A-Za-z]*\Z"
_FOUND = re.compile("\n" + OPEN + r"(\d+)([^" + CLOSE + "]*)" + CLOSE)
# What may come right before a marker whose value would continue a construct (`<`, `</`,
# `<!`, `<?`, a character reference, a CR): a skeleton with none is not looked at further.
_MAY_CONTINUE = frozenset("<\r/!?&#0123456789"
                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_WHITE_ONLY = re.compile(r"\x00[\t\n\f ]*\x00")
_UNESCAPED_UNSAFE = "[&<>\"']"

REFUSED = "refused"  # a skeleton whose documents are inlined whole


def as_text(escaped: str) -> str:
    """A value as the template escaped it, as the inliner writes it in text."""
    if "&" in escaped:
        escaped = (escaped.replace("&quot;", '"').replace("&#x27;", "'")
                   .replace("&#x60;", "`").replace("&#x3D;", "="))
    return escaped.replace("\xa0", "&nbsp;") if "\xa0" in escaped else escaped


def as_attribute(escaped: str) -> str:
    """A value as the template escaped it, as the inliner writes it in an attribute."""
    if "&" in escaped:
        escaped = (escaped.replace("&lt;", "<").replace("&gt;", ">").replace("&#x27;", "'")
                   .replace("&#x60;", "`").replace("&#x3D;", "="))
    return escaped.replace("\xa0", "&nbsp;") if "\xa0" in escaped else escaped


_TEXT_PROBE, _ATTRIBUTE_PROBE = as_text(_PROBE), as_attribute(_PROBE)
_markers: list[str] = []
_markers_lock = threading.Lock()


def markers(count: int) -> list[str]:
    """At least the first ``count`` markers (made once each, marker i at index i)."""
    if len(_markers) < count:
        with _markers_lock:
            _markers.extend(f"\n{OPEN}{i}{_PROBE}{CLOSE}"
                            for i in range(len(_markers), count))
    return _markers


class Entry:
    """An inlined skeleton cut at its markers: ``chunks`` around them, ``order`` the
    values' positions (in the skeleton's order) as they come out, ``text`` whether each
    comes out as text (else in an attribute)."""

    __slots__ = ("chunks", "order", "plain", "text")

    def __init__(self, chunks: list[str], order: list[int], text: list[bool]) -> None:
        self.chunks, self.order, self.text = chunks, order, text
        # The common case: every value as text, in the order written.
        self.plain = all(text) and order == sorted(order)


class _Skeletons:
    """The inlined skeletons of this process, bounded by count and characters."""

    def __init__(self) -> None:
        self._data: OrderedDict[str, object] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> object | None:
        with self._lock:
            found = self._data.get(key)
            if found is not None:
                self._data.move_to_end(key)
            return found

    def put(self, key: str, value: object) -> None:
        with self._lock:
            if key in self._data:
                return
            self._data[key] = value
            self._chars += 2 * len(key)
            while len(self._data) > MAX_ENTRIES or self._chars > MAX_CHARS:
                old, _ = self._data.popitem(last=False)
                self._chars -= 2 * len(old)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._chars = 0


skeletons = _Skeletons()


def inline_rendered(body: object, head: str | None, document: Callable[[str, str | None], str],
                    inline: Callable[[str], str], styled: Callable[[str], bool]) -> str | None:
    """The inlined document of a rendered body (engine.rendering's RenderedHtml) and its
    head, or None when it must be inlined as a whole. ``document`` wraps a body in its
    document, ``inline`` is the inliner, ``styled`` whether a document has CSS to inline."""
    pieces: list[str] = body.pieces  # type: ignore[attr-defined]
    slots: list[int] = body.slots  # type: ignore[attr-defined]
    count = len(slots)
    if count == 0:
        return None
    if min(slots) < 0:  # an unescaped value: only plain text can stand for its marker
        values = []
        for slot in slots:
            if slot < 0:
                value = pieces[~slot]
                if re.search(_UNESCAPED_UNSAFE, value):
                    return None
                values.append(value.replace("`", "&#x60;").replace("=", "&#x3D;"))
            else:
                values.append(pieces[slot])
        slots = [~slot if slot < 0 else slot for slot in slots]
    else:
        values = list(itemgetter(*slots)(pieces)) if count > 1 else [pieces[slots[0]]]
    joined = "\x00".join(values)
    if (joined.count("\x00") != count - 1 or "\r" in joined
            or (not joined.isascii() and _has_surrogate(joined))):
        return None
    skeleton = list(pieces)
    if _WHITE_ONLY.search(f"\x00{joined}\x00"):
        # Empty and white-space-only values are written into the skeleton as they are.
        kept = [i for i, value in enumerate(values) if value.strip("\t\n\f ")]
        all_markers = markers(count)
        for i in kept:
            skeleton[slots[i]] = all_markers[i]
        values = [values[i] for i in kept]
        joined = "\x00".join(values)
    else:
        list(map(skeleton.__setitem__, slots, markers(count)))
    key = document("".join(skeleton), head)
    entry = skeletons.get(key)
    if entry is None:
        entry = _inlined_skeleton(key, len(values), inline, styled)
        skeletons.put(key, entry)
    if entry is REFUSED or len(entry.text) != len(values):  # type: ignore[union-attr]
        return None  # (a skeleton with a marker of its own text, from another template)
    return _filled(entry, values, joined)  # type: ignore[arg-type]


def _has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (UTF-8 encodes every other character).
    Not a regular expression: a class of surrogates costs `re` about 2 million
    instructions to compile, a fresh process's import of this module most of it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _filled(entry: Entry, values: list[str], joined: str) -> str:
    """The inlined skeleton with each value in its marker's place."""
    if not values:
        return entry.chunks[0]
    if entry.plain:
        written = as_text(joined).split("\x00")
    else:
        written = [as_text(v) if text else as_attribute(v)
                   for v, text in zip(values, entry.text, strict=True)]
        written = [written[i] for i in entry.order]
    out = [*entry.chunks]
    parts: list[str] = [""] * (2 * len(out) - 1)
    parts[0::2] = out
    parts[1::2] = written
    return "".join(parts)


def _inlined_skeleton(skeleton: str, expected: int, inline: Callable[[str], str],
                      styled: Callable[[str], bool]) -> object:
    """The Entry of a skeleton holding ``expected`` markers, or REFUSED."""
    if not styled(skeleton) or skeleton.count(OPEN) != expected:
        return REFUSED  # (a U+E000 of the template's own text)
    before = {piece[-1:] for piece in skeleton.split("\n" + OPEN)[:-1]}
    if not before.isdisjoint(_MAY_CONTINUE):
        for found in _FOUND.finditer(skeleton):
            if _continued(skeleton, found.start()):
                return REFUSED
    numbers = [number for number, _ in _FOUND.findall(skeleton)]
    if len(numbers) != expected or len(set(numbers)) != expected:
        return REFUSED
    try:
        out = inline(skeleton)
    except ValueError:
        return REFUSED
    if out.count(OPEN) != expected:
        return REFUSED
    position = {number: i for i, number in enumerate(numbers)}
    # Cut where the markers came out, in one pass: chunk, number, probe, chunk, ... chunk.
    cut = _FOUND.split(out)
    if len(cut) != 3 * expected + 1:
        return REFUSED
    order = [position.get(number, -1) for number in cut[1::3]]
    if -1 in order or len(set(order)) != expected:
        return REFUSED
    text = [True] * expected
    if cut[2::3].count(_TEXT_PROBE) != expected:  # some value in an attribute, or refused
        selected = _selected_attributes(skeleton)
        for found in _FOUND.finditer(out):
            probe = found.group(2)
            if probe == _ATTRIBUTE_PROBE:
                name = _attribute_name(out, found.start())
                if (name is None or name in _READ_ATTRIBUTES or selected is None
                        or name in selected):
                    return REFUSED
                text[position[found.group(1)]] = False
            elif probe != _TEXT_PROBE:
                return REFUSED
    return Entry(cut[0::3], order, text)


def _continued(skeleton: str, at: int) -> bool:
    """Whether the text before ``at`` is a construct a value written there would
    continue: `<`, `</`, `<!`, `<?`, an unfinished character reference, a CR."""
    before = skeleton[at - 1] if at else ""
    if before in ("<", "\r"):
        return True
    if before in ("/", "!", "?"):
        return skeleton[at - 2:at - 1] == "<"
    if before == "&" or before == "#" or before.isalnum():
        return re.compile(_REFERENCE_END).search(skeleton, max(0, at - 40), at) is not None
    return False


def _attribute_name(out: str, at: int) -> str | None:
    """The name of the attribute whose value holds ``at`` (the inliner writes each as
    ` name="value"`, no `"` inside), or None when ``at`` is not in one."""
    quote = out.rfind('"', 0, at)
    if quote < 1 or out[quote - 1] != "=":
        return None
    start = out.rfind(" ", 0, quote - 1) + 1
    name = out[start:quote - 1]
    return name.lower() if name and "<" not in name and "\n" not in name else None


def _selected_attributes(skeleton: str) -> set[str] | None:
    """The attributes the document's CSS selects on; None when it cannot be read
    plainly (an escape)."""
    names: set[str] = set()
    for css in re.findall(_STYLE_TEXT, skeleton):
        if "\\" in css:
            return None
        names.update(n.lower() for n in re.findall(_ATTRIBUTE_SELECTOR, css))
    return names
