"""A rendered HTML part that remembers where each value went.

The CSS inliner (engine.formats.css_skeleton) inlines a document once per skeleton (the
render with each value replaced by a marker) and puts the values back afterwards; for
that it needs the render's pieces and which of them are values. A plain `str` for every
other use: the extra fields are read only by the inliner.
"""

from __future__ import annotations


class _Discarded(list):
    """Slots no one will read: appending does nothing."""

    def append(self, _: object) -> None:
        return None


DISCARDED: list[int] = _Discarded()


class RenderedHtml(str):
    """The rendered text; ``pieces`` joined give it, ``slots`` are the indexes of the
    pieces that are values (``~index`` for a value written unescaped, `{{{x}}}`)."""

    pieces: list[str]
    slots: list[int]

    @classmethod
    def of(cls, text: str, pieces: list[str], slots: list[int]) -> RenderedHtml:
        made = cls(text)
        made.pieces = pieces
        made.slots = slots
        return made
