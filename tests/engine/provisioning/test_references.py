"""`${NAME}` references: what export takes out of a provider URL and apply puts back."""

from __future__ import annotations

from engine.provisioning.references import (
    ReferenceNamer,
    resolve_references,
    without_credentials,
)


def test_each_kind_of_credential_becomes_a_reference_and_the_rest_is_kept():
    namer = ReferenceNamer()
    urls = ["smtp://bob:hunter2@mx.example:587?tls=starttls",
            "smtp://alice:p%40ss@mx2.example:25",
            "postmark://pm-token@?stream=outbound",
            "twilio://AC123:tok@?from=%2B15005550006",
            "smtp://carol:hunter2@mx3.example:25",
            "vendor://api.example?api_key=k-1&region=eu#x",
            "smtp://mx.example:25", "inbox://"]
    out = [without_credentials(url, f"p{i}", namer) for i, url in enumerate(urls)]
    assert out == ["smtp://bob:${SMTP_PASSWORD}@mx.example:587?tls=starttls",
                   "smtp://alice:${SMTP_PASSWORD_2}@mx2.example:25",
                   "postmark://${POSTMARK_TOKEN}@?stream=outbound",
                   "twilio://AC123:${TWILIO_PASSWORD}@?from=%2B15005550006",
                   "smtp://carol:${SMTP_PASSWORD}@mx3.example:25",  # the same one: one name
                   "vendor://api.example?api_key=${VENDOR_API_KEY}&region=eu#x",
                   "smtp://mx.example:25", "inbox://"]
    assert [n["variable"] for n in namer.needed] == [
        "SMTP_PASSWORD", "SMTP_PASSWORD_2", "POSTMARK_TOKEN", "TWILIO_PASSWORD",
        "SMTP_PASSWORD", "VENDOR_API_KEY"]
    # A URL that already holds references is left as it is.
    assert without_credentials(out[0], "p", ReferenceNamer()) == out[0]


def _doc(url: str) -> dict:
    return {"accounts": [{"name": "A", "workspaces": [
        {"name": "W", "emailProvider": [{"plugin": "smtp", "url": "smtp://mx:25"},
                                        {"plugin": "smtp", "url": url}]}]}]}


def test_references_resolve_percent_encoded_and_only_in_provider_urls():
    doc = _doc("smtp://bob:${PW}@mx:25")
    doc["accounts"][0]["workspaces"][0]["projects"] = [{"name": "${PW}"}]
    found = resolve_references(doc, {"PW": "a b@c"})
    assert found.problems == []
    assert doc["accounts"][0]["workspaces"][0]["emailProvider"][1]["url"] == \
        "smtp://bob:a%20b%40c@mx:25"
    assert doc["accounts"][0]["workspaces"][0]["projects"][0]["name"] == "${PW}"


def test_an_unset_variable_is_a_problem_naming_it_and_its_path():
    found = resolve_references(_doc("smtp://bob:${NOPE}@mx:25"), {})
    assert found.problems == ["accounts[0].workspaces[0].emailProvider[1].url: ${NOPE} is "
                              "not set in the environment (export NOPE=... before apply)"]


def test_a_problem_about_the_entry_shows_the_reference_never_the_value():
    found = resolve_references(_doc("smtp://bob:${PW}@mx:25"), {"PW": "s3cret value"})
    path = "accounts[0].workspaces[0].emailProvider[1]"
    assert found.hide(f"{path}: refused smtp://bob:s3cret%20value@mx:25 (s3cret value)") == \
        f"{path}: refused smtp://bob:${{PW}}@mx:25 (${{PW}})"
    short = resolve_references(_doc("smtp://bob:${PW}@mx:25"), {"PW": "1"})
    hidden = short.hide(f"{path}: port 1 refused")
    assert hidden.startswith(f"{path}: ") and "1" not in hidden.removeprefix(path)
    other = "accounts[0].workspaces[0].emailProvider[0]: s3cret value"  # another entry's
    assert found.hide(other) == other
