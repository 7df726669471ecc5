"""Rendering behaviour: context, helpers, escaping, stored code, cache, threads."""

from __future__ import annotations

import json
import threading

import pytest

from engine import rendering
from engine.rendering import (
    ENGINE_VERSION,
    MAX_PART_CHARS,
    RenderError,
    compile_parts,
    render_part,
    variable_metadata,
)
from engine.rendering.cache import CACHED_TEXT_CHARS, LRU
from engine.rendering.runtime import ESCAPES
from engine.rendering.version import PYBARS3_VERSION, VERSION_KEY


def render(text: str, tags: dict[str, str]) -> str:
    return render_part(None, "body", text, tags)


def test_escaping_matches_handlebars_escape_expression() -> None:
    value = "& < > \" ' ` = plain"
    assert render("{{v}}", {"v": value}) == (
        "&amp; &lt; &gt; &quot; &#x27; &#x60; &#x3D; plain")
    assert render("{{{v}}}|{{&v}}", {"v": value}) == f"{value}|{value}"


SPECIALS = "& < > \" ' ` = \\ / \b\f\n\r\t \x00\x1f\x7f \u2028 é 😀"


@pytest.mark.parametrize("language", ["html", "json", "text"])
def test_triple_braces_never_escape_whatever_the_language(language: str) -> None:
    assert render_part(None, "body", "{{{v}}}|{{&v}}", {"v": SPECIALS},
                       language=language) == f"{SPECIALS}|{SPECIALS}"


def test_text_takes_a_value_as_it_is() -> None:
    assert render_part(None, "subject", "Hi {{v}}", {"v": SPECIALS},
                       language="text") == f"Hi {SPECIALS}"


def test_json_keeps_every_value_inside_its_string_literal() -> None:
    every = "".join(map(chr, range(0x80))) + SPECIALS
    text = '{"v": "{{v}}", "{{v}}": 1}'
    body = render_part(None, "body", text, {"v": every}, language="json")
    assert json.loads(body) == {"v": every, every: 1}
    # Nothing a value holds can end the literal and add a member.
    injected = render_part(None, "body", '{"a": "{{v}}"}', {"v": 'x", "admin": "true'},
                           language="json")
    assert json.loads(injected) == {"a": 'x", "admin": "true'}


@pytest.mark.parametrize("language", ["html", "json"])
def test_a_value_is_escaped_whichever_escaped_character_it_holds(language: str) -> None:
    # A value without any character its language escapes is written as it is, unsearched
    # by the table: each such character, alone, first, last or among plain text, is not.
    table = ESCAPES[language]
    assert table is not None
    for code, escaped in table.items():
        for value in (chr(code), f"{chr(code)}ab", f"ab{chr(code)}", f"a{chr(code)}b"):
            assert render_part(None, "body", "[{{v}}]", {"v": value}, language=language) == (
                "[" + value.replace(chr(code), escaped) + "]"), (language, code, value)
    plain = "".join(chr(c) for c in range(0x20, 0x300) if c not in table)
    assert render_part(None, "body", "{{v}}", {"v": plain}, language=language) == plain


def test_the_language_is_part_of_the_cache_key() -> None:
    tags = {"v": "<&>"}
    html = render_part(None, "body", "{{v}}", tags, cache_key="k-lang", language="html")
    text = render_part(None, "body", "{{v}}", tags, cache_key="k-lang", language="text")
    assert (html, text) == ("&lt;&amp;&gt;", "<&>")


def test_lookups_ignore_case() -> None:
    tags = {"FirstName": "Ada", "city": "London"}
    assert render("{{firstname}} {{FIRSTNAME}} {{City}} {{this.CITY}} {{@root.firstNAME}}",
                  tags) == "Ada Ada London London Ada"
    assert render("{{lookup this 'FIRSTNAME'}}", tags) == "Ada"


def test_helper_names_ignore_case() -> None:
    tags = {"a": "x", "b": "x"}
    text = "{{UpperCase a}}{{LOWERCASE 'Q'}}{{#IfEquals a b}}={{else}}!{{/ifequals}}"
    assert render(text, tags) == "Xq="
    assert render("{{#IF a}}y{{/If}}{{#Each this}}{{@key}}{{/EACH}}", tags) == "yab"


def test_each_keeps_the_tags_order_and_spelling() -> None:
    tags = {"Zeta": "1", "alpha": "2", "10": "ten", "2": "two"}
    assert render("{{#each this}}{{@key}}={{this}},{{/each}}", tags) == (
        "2=two,10=ten,Zeta=1,alpha=2,")


def test_a_later_key_differing_in_case_wins() -> None:
    assert render("{{name}}", {"name": "first", "NAME": "second"}) == "second"


def test_each_over_a_string_renders_the_else_branch() -> None:
    assert render("{{#each name}}x{{else}}none{{/each}}", {"name": "abc"}) == "none"


def test_values_that_are_not_strings_are_stringified() -> None:
    assert render("{{n}}", {"n": 5}) == "5"  # type: ignore[dict-item]


def test_exactly_the_limit_renders() -> None:
    big = "x" * MAX_PART_CHARS
    assert len(render("{{big}}", {"big": big})) == MAX_PART_CHARS
    with pytest.raises(RenderError):
        render("!{{big}}", {"big": big})


def test_stored_code_is_used_when_its_key_matches() -> None:
    stored = compile_parts({"subject": "S {{name}}", "body": "B {{name}}"})
    doc = json.loads(stored)
    assert doc["key"] == VERSION_KEY
    assert ENGINE_VERSION in VERSION_KEY and PYBARS3_VERSION in VERSION_KEY
    # The text given alongside is not compiled when the stored code is usable.
    assert render_part(stored, "subject", "ignored", {"name": "n"}) == "S n"
    assert render_part(stored, "body", "ignored", {"name": "n"}) == "B n"


@pytest.mark.parametrize("stored", [
    json.dumps({"key": "pybars3-0.0.1/herald-engine-0", "parts": {"body": ["old"]}}),
    "not json",
    json.dumps({"key": VERSION_KEY, "parts": {}}),
    json.dumps({"key": VERSION_KEY, "parts": {"body": [["exec", "print(1)"]]}}),
    json.dumps({"key": VERSION_KEY, "parts": {"body": [["out", ["call", "eval", []], True]]}}),
    json.dumps({"key": VERSION_KEY, "parts": {"body": [["out", ["path", 0, [1]], True]]}}),
    json.dumps({"key": VERSION_KEY, "parts": {"body": [["block", "each", [], [], None]]}}),
    json.dumps({"key": VERSION_KEY, "parts": {"body": ["x", []]}}),
    "[" * 100_000,
])
def test_unusable_stored_code_falls_back_to_compiling_the_text(stored: str) -> None:
    assert render_part(stored, "body", "T {{name}}", {"name": "n"}) == "T n"


def test_cache_key_keeps_the_loaded_function() -> None:
    stored = compile_parts({"body": "v1 {{name}}"})
    assert render_part(stored, "body", "v1 {{name}}", {"name": "a"}, cache_key="ver-1") == "v1 a"
    # Same key and text: served from the cache even if the stored copy were gone.
    assert render_part(None, "body", "v1 {{name}}", {"name": "b"}, cache_key="ver-1") == "v1 b"
    # Different text under the same key (a draft that changed) is not served stale.
    assert render_part(None, "body", "v2 {{name}}", {"name": "c"}, cache_key="ver-1") == "v2 c"


def test_lru_is_bounded_and_keeps_recent_entries() -> None:
    lru = LRU(maxsize=3)
    for i in range(5):
        lru.put(i, f"v{i}")
        lru.get(0) if i == 3 else None
    assert len(lru) == 3
    assert lru.get(1) is None and lru.get(0) is None and lru.get(4) == "v4"


def test_module_cache_is_bounded() -> None:
    cache = rendering._loaded
    for i in range(cache.maxsize + 50):
        render_part(None, "body", "x", {}, cache_key=f"bounded-{i}")
    assert len(cache) <= cache.maxsize


def test_an_lru_is_bounded_by_weight_as_well_as_entries() -> None:
    lru = LRU(maxsize=10, max_weight=100)
    for i in range(4):
        lru.put(i, f"v{i}", weight=30)
    assert (len(lru), lru.weight) == (3, 90) and lru.get(0) is None  # the oldest went
    lru.put(1, "again", weight=5)  # replaced: its weight counted once
    assert (len(lru), lru.weight, lru.get(1)) == (3, 65, "again")
    lru.put("huge", "x", weight=101)  # heavier than the whole budget: not kept
    assert lru.get("huge") is None and lru.weight == 65
    lru.clear()
    assert (len(lru), lru.weight) == (0, 0)


def test_the_module_caches_keep_at_most_their_budget_of_template_text() -> None:
    # Near-limit parts, one version each (the audit: ~31 MB of RSS per version previewed).
    from engine.rendering import metadata

    part = "\U0001f600" * 1_000_000 + "{{a}}"
    for number in range(20):
        text = f"{part}{number}"
        render_part(None, "body", text, {"a": "x"}, cache_key=f"big-{number}")
        variable_metadata([text], {"a": "x"})
    for cache in (rendering._loaded, metadata._parsed):
        assert 0 < cache.weight <= CACHED_TEXT_CHARS
        assert len(cache) >= CACHED_TEXT_CHARS // len(part) - 1  # the newest still kept


def test_compile_is_thread_safe() -> None:
    templates = [f"{{{{#if a}}}}{i} {{{{uppercase a}}}}{{{{else}}}}{{{{b}}}}{{{{/if}}}}" * 50
                 for i in range(16)]
    expected = [compile_parts({"body": t}) for t in templates]
    results: list[str | None] = [None] * len(templates)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(5):
                results[i] = compile_parts({"body": templates[i]})
                render_part(results[i], "body", templates[i], {"a": "z"})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(templates))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == expected


def test_the_stored_program_key_is_the_one_every_stored_program_carries() -> None:
    # pybars3 is no longer installed; the key keeps its name so that no program stored
    # before goes unused (docs/rendering.md).
    assert f"pybars3-{PYBARS3_VERSION}/herald-engine-1" == VERSION_KEY


def test_log_helper_renders_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="engine.rendering"):
        assert render("a{{log 'hello' name}}b", {"name": "n"}) == "ab"
    assert "hello n" in caplog.text


def test_tampered_code_is_logged_and_a_missing_part_is_not(
        caplog: pytest.LogCaptureFixture) -> None:
    stored = compile_parts({"subject": "S"})
    with caplog.at_level("WARNING", logger="engine.rendering"):
        assert render_part(stored, "htmlHead", "<title>{{t}}</title>", {"t": "T"}) == (
            "<title>T</title>")
    assert not caplog.records
    tampered = json.dumps({"key": VERSION_KEY, "parts": {"body": [["out", ["call", "eval",
                                                                         []], True]]}})
    with caplog.at_level("WARNING", logger="engine.rendering"):
        assert render_part(tampered, "body", "ok", {}) == "ok"
    assert "unusable (InvalidProgram)" in caplog.text
