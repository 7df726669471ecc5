"""Handlebars rendering for templates written by untrusted workspace users.

See docs/rendering.md. Publish: `check_template` / `compile_parts` (store the JSON with the
version). Send and preview: `render_part` per part, `variable_metadata` for preview.
The compiler is imported on first use: a process that only renders stored programs
(a worker) does not pay for it at start-up.
"""

from __future__ import annotations

import json
from collections import namedtuple
from collections.abc import Callable, Iterable, Mapping

from .budget import render_budget, seconds_left
from .cache import CACHED_TEXT_CHARS, LRU
from .errors import RenderError, TemplateSyntaxError
from .runtime import MAX_PART_CHARS, load
from .values import Tags, make_tags
from .version import ENGINE_VERSION, VERSION_KEY

__all__ = [
    "ENGINE_VERSION", "MAX_PART_CHARS", "VERSION_KEY", "PartialSet", "PartialSource",
    "RenderError", "TemplateSyntaxError", "check_template", "compile_parts", "make_tags",
    "partials_used", "render_budget", "render_part", "variable_metadata",
]

# Loaded render functions keep their template's static text alive: at most 512 of them,
# and at most CACHED_TEXT_CHARS of template text in all.
_loaded = LRU(maxsize=512, max_weight=CACHED_TEXT_CHARS)


def check_template(text: str) -> None:
    """Strict scan of one part; raises TemplateSyntaxError naming line and column."""
    from .compiler import check_template as check

    check(text)


def compile_parts(parts: Mapping[str, str], deadline_seconds: float | None = None) -> str:
    """Check and compile each named part on its own, each within a time bound; returns
    the JSON to store with the version (it carries VERSION_KEY)."""
    from .compiler import compile_parts as compile_all
    from .scanner import DEFAULT_DEADLINE_SECONDS

    return compile_all(parts, DEFAULT_DEADLINE_SECONDS if deadline_seconds is None
                       else deadline_seconds)


def variable_metadata(texts: Iterable[str], tags: Mapping[str, str]) -> dict[str, list[str]]:
    """{"providedVariables", "missingVariables", "unusedVariables"}, case-insensitive."""
    from .metadata import variable_metadata as collect

    return collect(texts, tags)


def partials_used(text: str) -> set[str]:
    """The partials ``text`` calls by name (not `@partial-block`); raises
    TemplateSyntaxError."""
    from .metadata import partials_used as used

    return used(text)


class PartialSource(namedtuple("PartialSource", ("key", "text", "compiled"),
                               defaults=(None,))):
    """One partial's text as a render uses it: ``key`` (str | None) names the content (a
    partial version's id, for the cache), ``compiled`` is its stored program when
    published. A named tuple: a dataclass imports `inspect`, which costs a fresh process
    a few milliseconds before its first render."""

    __slots__ = ()


# Lists of texts whose partials' bodies one PartialSet keeps (a template's parts, in each
# language variant).
_CALLS_KEPT = 64


class PartialSet:
    """The partials one render may call, by name: each loaded (from its stored program,
    or compiled within the request's budget) the first time a render calls it, in the
    language of the part calling it, and kept in the process's LRU by its key."""

    def __init__(self, sources: Mapping[str, PartialSource]) -> None:
        self.sources = dict(sources)
        self._runners: dict[tuple[str, str], Callable | None] = {}
        self._called: dict[tuple[str, ...], list[str]] = {}

    def texts_called(self, texts: Iterable[str]) -> list[str]:
        """The bodies of the partials ``texts`` call, directly or through each other (a
        preview's variable metadata reads them with the template's own text). Kept per
        list of texts for the set's life (its sources never change): a snapshot's set
        serves every preview of its template's versions."""
        key = tuple(texts)
        found = self._called.get(key)
        if found is None:
            found = self._find_called(key)
            if len(self._called) >= _CALLS_KEPT:
                self._called.clear()
            self._called[key] = found
        return list(found)

    def _find_called(self, texts: tuple[str, ...]) -> list[str]:
        pending = list(texts)
        seen: set[str] = set()
        found: list[str] = []
        while pending:
            try:
                names = partials_used(pending.pop())
            except TemplateSyntaxError:
                continue
            for name in sorted(names - seen):
                seen.add(name)
                source = self.sources.get(name)
                if source is not None:
                    found.append(source.text)
                    pending.append(source.text)
        return found

    def __call__(self, name: str, language: str) -> Callable | None:
        found = self._runners.get((name, language))
        if found is None and (name, language) not in self._runners:
            source = self.sources.get(name)
            if source is not None:
                try:
                    fn = _cached(source.compiled, "body", source.text, source.key, language)
                except RenderError as err:
                    raise RenderError(f"partial {name}: {err}") from None
                found = fn.run  # type: ignore[attr-defined]
            self._runners[(name, language)] = found
        return found


def _from_stored(stored: str, part: str, language: str) -> Callable[[Tags], str] | None:
    """The stored program of `part`, or None when there is none usable (then the text is
    compiled). Another key (an engine or pybars3 upgrade) or a missing part is expected;
    an unreadable or invalid program is logged."""
    try:
        doc = json.loads(stored)
        if not isinstance(doc, dict) or doc.get("key") != VERSION_KEY:
            return None
        parts = doc.get("parts")
        if not isinstance(parts, dict) or part not in parts:
            return None
        return load(parts[part], language=language)
    except (ValueError, TypeError, RecursionError) as exc:
        import logging

        logging.getLogger(__name__).warning("stored template code unusable (%s); recompiling",
                                            type(exc).__name__)
        return None


def _renderer(stored: str | None, part: str, text: str,
              language: str) -> Callable[[Tags], str]:
    fn = _from_stored(stored, part, language) if stored else None
    if fn is None:
        from .compiler import compile_template
        from .scanner import DEFAULT_DEADLINE_SECONDS

        try:  # compiling a draft counts against the request's budget too
            fn = load(compile_template(text or "", seconds_left(DEFAULT_DEADLINE_SECONDS)),
                      language=language)
        except TemplateSyntaxError as exc:
            raise RenderError(str(exc)) from exc
        except (ValueError, RecursionError) as exc:  # a program the loader refuses
            raise RenderError(f"the template cannot be loaded ({exc})") from exc
    return fn


def render_part(stored: str | None, part: str, text: str, tags: Mapping[str, str],
                cache_key: str | None = None, language: str = "html",
                partials: PartialSet | None = None) -> str:
    """Render one part with the version's stored code (or `text`, compiled with a bound).

    ``partials`` are the partials `{{> name}}` may call (none: a call is a RenderError,
    a partial block renders its own program, as in handlebars.js).

    `language` is what the part is written in, and so what `{{x}}` escapes: "html",
    "json" or "text" (see docs/rendering.md). `cache_key` names the content (a version
    id); with it the loaded function is kept in a bounded per-process LRU, keyed also by
    the text so a changed draft is never stale. Raises RenderError.
    """
    fn = _cached(stored, part, text, cache_key, language)
    context = tags if tags.__class__ is Tags else make_tags(tags)
    return fn(context, partials)  # type: ignore[call-arg]


def _cached(stored: str | None, part: str, text: str, cache_key: str | None,
            language: str) -> Callable[[Tags], str]:
    if cache_key is None:
        return _renderer(stored, part, text, language)
    key = (cache_key, part, hash(text), language)
    fn = _loaded.get(key)
    if fn is None:
        fn = _renderer(stored, part, text, language)
        _loaded.put(key, fn, weight=len(text))
    return fn  # type: ignore[return-value]
