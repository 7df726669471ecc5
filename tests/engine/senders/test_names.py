"""What a sender domain may be (issue 26, "Bad input")."""

from __future__ import annotations

import pytest

from engine.senders.errors import SenderError
from engine.senders.names import MAX_DOMAIN, issued_records, parse_domain, target_label


@pytest.mark.parametrize("text, expected", [
    ("acme.example", "acme.example"),
    ("  Acme.Example. ", "acme.example"),
    ("bücher.example", "xn--bcher-kva.example"),
    ("xn--bcher-kva.example", "xn--bcher-kva.example"),
    ("\uff22\uff35\uff23\uff28\uff25\uff32\u3002example", "bucher.example"),  # fullwidth, 。
    ("mail.sub.acme.co.uk", "mail.sub.acme.co.uk"),
])
def test_domains_in_either_form_are_kept_in_ascii(text, expected):
    assert parse_domain(text) == expected


@pytest.mark.parametrize("text, words", [
    ("192.0.2.1", "IP address"),
    ("2001:db8::1", "IP address"),
    ("[2001:db8::1]", "IP address"),
    ("127.1", "IP address"),
    ("https://acme.example/", "not a URL"),
    ("acme.example/path", "not a URL"),
    ("ops@acme.example", "single sender"),
    ("acme", "single label"),
    ("acme.example:25", "ports"),
    ("acme .example", "spaces"),
    ("-acme.example", "not a valid domain"),
    ("acme.123", "not a valid domain"),
    ("", "Enter a domain"),
    (None, "Enter a domain"),
    ("a" * 64 + ".example", "label of 64 characters"),
    (".".join(["a" * 60] * 5), "at most 253"),
])
def test_what_is_not_a_domain_is_refused_with_its_reason(text, words):
    with pytest.raises(SenderError) as caught:
        parse_domain(text)
    assert words in str(caught.value)
    assert caught.value.field == "domain"


def test_a_domain_too_long_for_its_dkim_host_is_refused():
    labels = ["a" * 60, "b" * 60, "c" * 60, "d" * (MAX_DOMAIN - 183 + 1)]
    text = ".".join(labels)
    assert len(text) == MAX_DOMAIN + 1
    with pytest.raises(SenderError, match="DKIM record name"):
        parse_domain(text)
    assert parse_domain(text[1:]) == text[1:]


def test_issued_records_name_two_selectors_the_return_path_and_dmarc():
    label = target_label("xn--bcher-kva.example")
    assert "--" not in label and len(label) <= 63
    records = issued_records("acme.example", "acme-example-0a1b2c3d", "dkim.herald.test",
                             "rp.herald.test")
    assert [(r["purpose"], r["type"], r["host"], r["value"]) for r in records] == [
        ("dkim", "CNAME", "hd1._domainkey.acme.example",
         "hd1.acme-example-0a1b2c3d.dkim.herald.test"),
        ("dkim", "CNAME", "hd2._domainkey.acme.example",
         "hd2.acme-example-0a1b2c3d.dkim.herald.test"),
        ("return-path", "CNAME", "hrp.acme.example", "rp.herald.test"),
        ("dmarc", "TXT", "_dmarc.acme.example", "v=DMARC1; p=none;"),
    ]
    assert {r["status"] for r in records} == {"pending"}
