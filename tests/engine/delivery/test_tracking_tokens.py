"""Tracking tokens: made by Herald's own signer, read by itsdangerous, and the same bytes as
itsdangerous makes wherever the two agree on compressing."""

from __future__ import annotations

import uuid

import pytest
from itsdangerous import URLSafeSerializer

from engine.delivery.tracking import make_token, read_token

NID = "c6ce4503-3479-45c1-8904-923a76027755"  # ids are random (uuid4)
PAYLOADS = [
    ("open", {"n": NID, "r": "user0@example.net"}),
    ("open", {"n": "preview", "r": None}),
    ("unsubscribe", {"n": NID, "r": "zoë+tag@bücher.example"}),
    ("click", {"n": NID, "r": None, "u": "https://example.org/x?a=1&b=2"}),
    # Long enough to compress: the token is ".<zlib>.<signature>".
    ("click", {"n": NID, "r": None, "u": "https://example.org/" + "utm_source=news&" * 20}),
    ("click", {"n": NID, "r": None, "u": "https://example.org/" + uuid.uuid4().hex * 6}),
]


@pytest.mark.parametrize(("purpose", "data"), PAYLOADS)
def test_a_token_is_what_itsdangerous_makes_and_reads_back(settings, purpose, data):
    token = make_token(purpose, data)
    reference = URLSafeSerializer(settings.secret_key, salt=f"herald-{purpose}").dumps(data)
    assert token == reference
    assert read_token(purpose, token) == data


def test_a_long_repetitive_payload_is_compressed(settings):
    data = PAYLOADS[4][1]
    assert make_token("click", data).startswith(".")


@pytest.mark.parametrize("data", [
    {"n": NID, "r": "a" * 60 + "@example.net"},
    {"n": NID, "r": "a@example.net", "u": "https://example.org/x?a=1&b=2"},
])
def test_a_short_payload_is_never_compressed_and_still_reads_back(settings, data):
    reference = URLSafeSerializer(settings.secret_key, salt="herald-click").dumps(data)
    assert reference.startswith(".")  # itsdangerous saves a few bytes with zlib here
    token = make_token("click", data)
    assert not token.startswith(".")
    assert read_token("click", token) == data


def test_a_token_reads_only_for_its_purpose_and_key_and_unaltered(settings):
    token = make_token("unsubscribe", {"n": NID, "r": "a@example.net"})
    assert read_token("open", token) is None
    # A signature character other than the last, whose low bits are only padding.
    tampered = token[:-4] + ("A" if token[-4] != "A" else "B") + token[-3:]
    assert read_token("unsubscribe", tampered) is None
    body, _, signature = token.rpartition(".")
    forged = make_token("unsubscribe", {"n": NID, "r": "b@example.net"}).rpartition(".")[0]
    assert read_token("unsubscribe", f"{forged}.{signature}") is None
    other = URLSafeSerializer("another-secret-key-0123456789-abcdefghij",
                              salt="herald-unsubscribe").dumps({"n": NID, "r": "a@example.net"})
    assert read_token("unsubscribe", other) is None
    assert read_token("unsubscribe", f"{body}.{signature}") == {"n": NID, "r": "a@example.net"}


def test_a_fan_out_recipient_s_unsubscribe_token_is_not_compressed(settings):
    # Ids, an address and a time: zlib saves a dozen bytes of it, and sets up its window
    # and tables for each token (tens to hundreds of microseconds), once a recipient of a
    # fan-out (docs/performance.md, "Fan-out").
    data = {"n": NID, "r": "reader1234@example.net", "w": str(uuid.uuid4()), "i": 1796000000,
            "t": "news"}
    token = make_token("unsubscribe", data)
    assert not token.startswith(".")
    assert read_token("unsubscribe", token) == data
