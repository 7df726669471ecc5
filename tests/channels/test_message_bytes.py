"""The fast serialisation writes exactly what the standard library's generator writes."""

from __future__ import annotations

import io
import random
import re
from email import message_from_bytes, message_from_string, policy
from email.generator import BytesGenerator
from email.message import Message

import pytest

from channels.email import EmailChannel
from channels.email.mime import ascii_domain
from engine.formats.message_bytes import message_bytes
from tests import factories

HEADER_VALUES = ["plain", "two  spaces", " leading", "trailing ", "tab\there", "x" * 70,
                 "y" * 200, "word " * 30, "caf\u00e9", "=?utf-8?q?already?=", "a:b;c<d>",
                 "\u2603 snow", "", "b" * 67, "b" * 68, "b" * 69, "b" * 70, "c d" * 23,
                 "<https://h.example/t/u/" + "Ab9_-." * 20 + ">",
                 "<https://h/x;y=" + "z" * 80 + ">", "a," + "b" * 90,
                 "=?utf-8?q?" + "c" * 80 + "?="]


def _standard(message) -> bytes:
    out = io.BytesIO()
    BytesGenerator(out, mangle_from_=False, policy=message.policy.clone(linesep="\r\n")).flatten(
        message, linesep="\r\n")
    return out.getvalue()


@pytest.mark.parametrize("value", HEADER_VALUES)
def test_every_header_shape_is_serialised_like_the_standard_generator(value: str) -> None:
    payload = factories.email_payload(
        subject=value or "s", to=["Ada Lovelace <ada@example.net>", "b@example.net"],
        cc=["\u00c9mile <e@example.net>"], replyTo="r@example.net",
        headers={"X-Custom": value, "X-Other-Header-With-A-Long-Name": value})
    message = EmailChannel().build(payload).mime
    assert message_bytes(message) == _standard(message)


def test_plain_addresses_are_kept_as_given_and_named_ones_formatted() -> None:
    payload = factories.email_payload(to=["ada@example.net", "Ada <ada2@example.net>",
                                          '"Lovelace, Ada" <ada3@example.net>'])
    raw = message_bytes(EmailChannel().build(payload).mime)
    assert b'To: ada@example.net, Ada <ada2@example.net>, "Lovelace, Ada" <ada3@example.net>' \
        in raw.replace(b"\r\n ", b" ")


def test_each_multipart_has_its_own_random_boundary() -> None:
    first = EmailChannel().build(factories.email_payload()).mime
    second = EmailChannel().build(factories.email_payload()).mime
    assert first.get_boundary() and first.get_boundary() != second.get_boundary()


def test_a_boundary_asks_the_kernel_for_nothing(monkeypatch) -> None:
    # Every part is base64, so no body line can be the boundary line: it needs no secret
    # randomness, and a read of os.urandom in each fan-out message releases the interpreter
    # lock its lanes and the worker share (docs/performance.md, "Fan-out").
    import os

    def refused(_: int) -> bytes:
        raise AssertionError("os.urandom read for a message")

    monkeypatch.setattr(os, "urandom", refused)
    for method in ("randbytes", "getrandbits", "random"):  # secrets' and SystemRandom's
        monkeypatch.setattr(random.SystemRandom, method, refused)
    built = EmailChannel().build(factories.email_payload()).mime
    assert built.get_boundary().startswith("=_")


@pytest.mark.parametrize("text", ["", "Hello", "caf\u00e9 \u2603\n" * 50, "x" * 1000])
@pytest.mark.parametrize("subtype", ["plain", "html"])
def test_text_parts_are_those_mimetext_builds(text: str, subtype: str) -> None:
    from email.mime.text import MIMEText

    from channels.email.mime import _text_part

    assert _text_part(text, subtype).as_bytes() == MIMEText(text, subtype, "utf-8").as_bytes()


def test_an_internationalised_domain_is_sent_in_its_ascii_form() -> None:
    email = EmailChannel().build(factories.email_payload(
        **{"from": {"address": "hello@bücher.example", "name": "Bücher"}},
        to=["Zoë <zoe@bücher.example>"], cc=["c@example.net"], bcc=["b@straße.example"],
        replyTo="help@bücher.example"))
    assert ascii_domain('"a@bücher.example" <a@bücher.example>') == (
        '"a@bücher.example" <a@xn--bcher-kva.example>')  # the name is left as written
    assert email.sender == "hello@xn--bcher-kva.example"
    assert email.recipients == ["Zoë <zoe@xn--bcher-kva.example>", "c@example.net",
                                "b@xn--strae-oqa.example"]
    raw = message_bytes(email.mime)
    assert raw.isascii() and raw == _standard(email.mime)
    parsed = message_from_bytes(raw, policy=policy.default)
    assert str(parsed["From"]) == "Bücher <hello@xn--bcher-kva.example>"
    assert str(parsed["To"]) == "Zoë <zoe@xn--bcher-kva.example>"
    assert str(parsed["Reply-To"]) == "help@xn--bcher-kva.example"
    assert parsed["Message-ID"].endswith("@xn--bcher-kva.example>")


def test_a_non_ascii_local_part_is_written_as_utf8_one_address_a_line() -> None:
    email = EmailChannel().build(factories.email_payload(
        **{"from": {"address": "jörg@example.com", "name": 'Jörg "J" M'}},
        to=["ada@example.net", "Zoë <zoë@example.net>", "plain@example.net"]))
    raw = message_bytes(email.mime)
    assert b"From: \"J\xc3\xb6rg \\\"J\\\" M\" <j\xc3\xb6rg@example.com>\r\n" in raw
    assert (b"To: ada@example.net,\r\n \"Zo\xc3\xab\" <zo\xc3\xab@example.net>,\r\n"
            b" plain@example.net\r\n") in raw
    parsed = message_from_string(raw.decode(), policy=policy.SMTPUTF8)
    assert [a.addr_spec for a in parsed["To"].addresses] == [
        "ada@example.net", "zoë@example.net", "plain@example.net"]
    assert parsed["From"].addresses[0].display_name == 'Jörg "J" M'


def test_random_printable_values_are_serialised_like_the_standard_generator() -> None:
    rng = random.Random(2920)
    printable = [chr(c) for c in range(0x21, 0x7F)] + [" "] * 3
    for _ in range(3000):
        message = Message()
        message["X-" + "N" * rng.randrange(0, 90)] = "".join(
            rng.choice(printable) for _ in range(rng.choice([1, 40, 74, 75, 76, 77, 300])))
        message.set_payload("x")
        assert message_bytes(message) == _standard(message)


@pytest.mark.parametrize("sender", ["hello@example.com", "jörg@example.com"])
@pytest.mark.parametrize("broken", ["Hi x\r\nBcc: victim@evil.example", "Hi\nthere",
                                    "Hé\r\nX-Injected: 1", "\r\n\r\n<p>body</p>"])
def test_a_line_break_in_a_subject_or_name_never_makes_a_header(sender, broken) -> None:
    email = EmailChannel().build(factories.email_payload(
        subject=broken, **{"from": {"address": sender, "name": broken}},
        to=["Ada <ada@example.net>"]))
    assert "\n" not in email.subject and "\r" not in email.subject  # for every provider
    assert "\n" not in email.sender_name and "\r" not in email.sender_name
    raw = message_bytes(email.mime)
    parsed = message_from_string(raw.decode(), policy=policy.SMTPUTF8)
    assert sorted(parsed.keys()) == sorted(
        ["Content-Type", "MIME-Version", "From", "To", "Subject", "Date", "Message-ID"])
    assert parsed["Subject"].strip() == re.sub(r"[\r\n]+", " ", broken).strip()
    assert parsed["From"].addresses[0].addr_spec == sender
    assert "\n" not in parsed["From"].addresses[0].display_name


@pytest.mark.parametrize("payload", [
    factories.email_payload(),
    factories.email_payload(html=None, text="Only text\non two lines"),
    factories.email_payload(subject="caf\u00e9 " * 30, headers={"X-Long": "w " * 60},
                            to=["Z\u00f6e <z@example.net>"], priority="High"),
], ids=["html and text", "text only", "folded headers"])
def test_the_messages_of_text_and_html_are_written_without_the_generator(payload) -> None:
    from engine.formats.message_bytes import _direct, _policy

    message = EmailChannel().build(payload).mime
    assert _direct(message, _policy(message.policy, "\r\n"), "\r\n") is not None
    assert message_bytes(message) == _standard(message)


def test_a_multipart_is_the_one_mimemultipart_builds(monkeypatch) -> None:
    from email.mime.multipart import MIMEMultipart

    from channels.email import mime as channel
    from channels.email.mime import _multipart, _text_part

    monkeypatch.setattr(channel, "_boundary", lambda: "=_0123456789abcdef")
    for subtype in ("alternative", "related", "mixed"):
        parts = [_text_part("a", "plain"), _text_part("<p>b</p>", "html")]
        built = _multipart(subtype, parts)
        standard = MIMEMultipart(subtype, boundary="=_0123456789abcdef", _subparts=parts)
        assert built.items() == standard.items()
        assert message_bytes(built) == standard.as_bytes(policy=standard.policy.clone(
            linesep="\r\n"))


BODIES = ["", "x", "line\n", "a\r\nb\rc\nd", "\n\n", "caf\u00e9\n", "tail\r", "=" * 90,
          "--=_b\n", "From the start\n", "\udcff surrogate"]
CONTENT_TYPES = ["text/plain", 'text/html; charset="utf-8"', "TEXT/Plain", "application/pdf",
                 "image/png", "message/rfc822", "text", None]
BOUNDARIES = ["=_b", "simple", "with space", 'q"uote', "a.b-c_d=e", ""]


def _tree(rng: random.Random, depth: int) -> Message:
    from channels.email.mime import _header

    message = Message()
    if depth < 3 and rng.random() < 0.4:
        subtype = rng.choice(["alternative", "mixed", "related", "signed", "Mixed"])
        boundary = rng.choice(BOUNDARIES)
        value = f"multipart/{subtype}" + (f'; boundary="{boundary}"' if boundary else "")
        message["Content-Type"] = value
        message["MIME-Version"] = "1.0"
        if subtype == "signed":
            message.set_param("protocol", "application/pgp-signature")
        message.set_payload([_tree(rng, depth + 1) for _ in range(rng.randrange(0, 4))])
        if rng.random() < 0.15:
            message.preamble = rng.choice(BODIES)
        if rng.random() < 0.15:
            message.epilogue = rng.choice(BODIES)
    else:
        content_type = rng.choice(CONTENT_TYPES)
        if content_type is not None:
            message["Content-Type"] = content_type
        # As build_mime sets a header: a non-ASCII value as an encoded Header (a raw UTF-8
        # str is written as it stands, for an SMTPUTF8 address, where the generator encodes).
        message["X-Part"] = _header(rng.choice(HEADER_VALUES))
        if rng.random() < 0.9:
            message.set_payload(rng.choice(BODIES))
    return message


def test_random_trees_are_serialised_like_the_standard_generator() -> None:
    from engine.formats.message_bytes import _direct, _policy

    rng = random.Random(2045)
    direct = 0
    for _ in range(2000):
        message = _tree(rng, 0)
        try:
            expected = _standard(message)
        except Exception:  # a tree the standard generator itself cannot write
            continue
        direct += _direct(message, _policy(message.policy, "\r\n"), "\r\n") is not None
        assert message_bytes(message) == expected
    assert direct > 300  # the direct path was exercised, not only the generator
