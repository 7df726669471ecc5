"""engine/formats/uuid_text.py gives the text the uuid module gives, kept or not."""

from __future__ import annotations

import re
import uuid

import pytest

from engine.formats import uuid_text


@pytest.mark.parametrize("text", [
    "0C9D8E7F-6A5B-4C3D-9E2F-1A0B9C8D7E6F", "0c9d8e7f6a5b4c3d9e2f1a0b9c8d7e6f",
    "{0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f}", "urn:uuid:0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f"])
def test_canonical_is_the_uuid_modules_text_asked_again(text: str) -> None:
    for _ in range(2):
        assert uuid_text.canonical(text) == str(uuid.UUID(text))


@pytest.mark.parametrize("text", ["", "not-a-uuid", "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6"])
def test_canonical_of_a_text_that_spells_no_uuid_is_none(text: str) -> None:
    assert uuid_text.canonical(text) is None
    assert uuid_text.canonical(text) is None


def test_a_long_text_is_answered_but_never_kept() -> None:
    """A body's tenantId or templateId can be megabytes: the answer is the uuid module's,
    and the text is not held by the process afterwards."""
    spelled = "-" * 100_000 + "0c9d8e7f6a5b4c3d9e2f1a0b9c8d7e6f"
    junk = "x" * 100_000
    assert uuid_text.canonical(spelled) == "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f"
    assert uuid_text.canonical(junk) is None
    assert spelled not in uuid_text._canonical and junk not in uuid_text._canonical


def test_of_is_str_for_kept_and_new_objects() -> None:
    ids = [uuid.uuid4() for _ in range(uuid_text.KEPT + 10)]
    for value in ids + ids[:5]:
        assert uuid_text.of(value) == str(value)


def test_of_never_answers_for_another_object_at_the_same_address() -> None:
    first = uuid.UUID(int=1)
    assert uuid_text.of(first) == str(first)
    del first
    for n in range(2, 200):  # a freed object's address is soon reused
        value = uuid.UUID(int=n)
        assert uuid_text.of(value) == str(value)


def test_random_ids_are_version_4_as_uuid4_writes_them() -> None:
    texts = {uuid_text.random_text() for _ in range(500)}
    assert len(texts) == 500
    for text in texts:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == text
    for _ in range(500):
        digits = uuid_text.random_hex()
        assert re.fullmatch(r"[0-9a-f]{32}", digits)
        parsed = uuid.UUID(hex=digits)
        assert (parsed.version, parsed.variant, parsed.hex) == (4, uuid.RFC_4122, digits)


def test_lower_is_the_lower_case_text_of_any_id() -> None:
    value = uuid.uuid4()
    assert uuid_text.lower(value) == uuid_text.lower(value) == str(value)
    assert uuid_text.lower("0C9D8E7F-6A5B-4C3D-9E2F-1A0B9C8D7E6F") == \
        "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f"
    assert uuid_text.lower(42) == "42"
