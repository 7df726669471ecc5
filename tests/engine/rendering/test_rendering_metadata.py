"""Variable metadata for preview: provided, missing, unused (case-insensitive)."""

from __future__ import annotations

from engine.rendering import variable_metadata


def test_provided_missing_and_unused() -> None:
    meta = variable_metadata(["Hi {{FirstName}} {{lastName}}", "<p>{{uppercase City}}</p>"],
                             {"firstname": "Ada", "city": "London", "extra": "x"})
    assert meta == {"providedVariables": ["firstname", "city", "extra"],
                    "missingVariables": ["lastName"], "unusedVariables": ["extra"]}


def test_references_inside_blocks_follow_the_context() -> None:
    text = ("{{#if a}}{{b}}{{/if}}{{#with c}}{{inner}}{{../d}}{{else}}{{e}}{{/with}}"
            "{{#ifEquals f 'x'}}{{/ifEquals}}{{@root.g}}{{lookup this 'h'}}"
            "{{formatDate i 'yyyy'}}{{#unless j}}{{/unless}}")
    meta = variable_metadata([text], {})
    assert meta["missingVariables"] == ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]


def test_each_over_the_root_uses_every_tag() -> None:
    meta = variable_metadata(["{{#each this}}{{@key}}{{/each}}"], {"a": "1", "b": "2"})
    assert meta["unusedVariables"] == [] and meta["missingVariables"] == []


def test_invalid_parts_and_empty_parts_are_skipped() -> None:
    meta = variable_metadata(["{{#if x}}", "", "{{y}}"], {"Y": "1"})
    assert meta == {"providedVariables": ["Y"], "missingVariables": [], "unusedVariables": []}


def test_lookup_with_a_computed_key_uses_every_tag() -> None:
    meta = variable_metadata(["{{lookup this which}}"], {"which": "a", "a": "1"})
    assert meta["unusedVariables"] == [] and meta["missingVariables"] == []


def test_the_same_texts_asked_again_answer_for_the_new_tags() -> None:
    texts = ["Hi {{name}}", "{{> footer}} {{city}}"]
    first = variable_metadata(texts, {"name": "Ada", "extra": "x"})
    again = variable_metadata(list(texts), {"City": "Paris"})
    assert first == {"providedVariables": ["name", "extra"], "missingVariables": ["city"],
                     "unusedVariables": ["extra"]}
    assert again == {"providedVariables": ["City"], "missingVariables": ["name"],
                     "unusedVariables": []}
    assert variable_metadata(texts, {"name": "Ada", "extra": "x"}) == first


def test_a_partial_sets_called_texts_asked_again_are_the_same() -> None:
    from engine.rendering import PartialSet, PartialSource

    partials = PartialSet({"footer": PartialSource("f1", "{{> legal}} {{town}}"),
                           "legal": PartialSource("l1", "(c) {{company}}")})
    first = partials.texts_called(["Hi {{> footer}}"])
    first.append("changed by the caller")
    assert partials.texts_called(["Hi {{> footer}}"]) == [
        "{{> legal}} {{town}}", "(c) {{company}}"]
    assert partials.texts_called(["no partial"]) == []
