"""engine/lists: a recipients file read and checked, every kind of problem named."""

from __future__ import annotations

import pytest

from engine.catalog import suppressions
from engine.database.models import Account, Notification
from engine.database.models.lists import RecipientList
from engine.lists import checking, reading, uploads
from tests import factories


@pytest.fixture
def ws(settings):
    return factories.workspace()


def _check(ws, template, text: str | bytes, filename: str = "list.csv"):
    data = text.encode() if isinstance(text, str) else text
    return uploads.upload(ws, template, filename, data, None)


def _messages(checked) -> list[str]:
    return [str(p) for p in checked.problems]


def test_a_good_file_is_kept_with_its_rows_and_nothing_is_sent(ws):
    template = factories.template(ws)
    checked, kept = _check(ws, template, "Email_Address,NAME\r\n"
                                         " ada@example.net ,Ada\r\n\r\ngrace@example.net,Grace\n")
    assert checked.ok and checked.count == 2
    assert checked.first_tags() == {"NAME": "Ada"}  # tags match the template's case-blind
    assert kept.rows == [[2, "ada@example.net", ["Ada"]], [4, "grace@example.net", ["Grace"]]]
    assert (kept.status, kept.row_count, kept.columns) == ("checked", 2,
                                                           ["email address", "NAME"])
    assert Notification.select().count() == 0


@pytest.mark.parametrize("header", ["email address", "Email Address", "EMAIL_ADDRESS",
                                    "email-address", "  email   address "])
def test_the_recipient_column_is_matched_as_notify_matches_it(ws, header):
    template = factories.template(ws)
    checked, _ = _check(ws, template, f"{header},name\nada@example.net,Ada\n")
    assert checked.ok


def test_a_file_without_the_recipient_column_says_which_it_needs(ws):
    email = factories.template(ws)
    sms = factories.template(ws, "sms")
    checked, kept = _check(ws, email, "email,name\nada@example.net,Ada\n")
    assert kept is None
    assert _messages(checked) == ["The file needs a column named 'email address': row 1 "
                                  "names the columns."]
    checked, _ = _check(ws, sms, "phone,code\n+14155550100,1\n")
    assert "'phone number'" in _messages(checked)[0]


def test_each_bad_row_is_named_and_nothing_is_kept(ws):
    template = factories.template(ws)
    checked, kept = _check(ws, template, "email address,name\n"
                                         "ada@example.net,Ada\n"
                                         ",Nobody\n"
                                         "not-an-address,Bad\n"
                                         "grace@example.net,Grace,extra\n")
    assert kept is None and RecipientList.select().count() == 0
    assert _messages(checked) == [
        "row 3: no email address",
        "row 4: email address is not a valid address: “not-an-address”",
        "row 5: it has 3 cells; row 1 names 2 columns"]
    assert checked.rows == []


def test_a_phone_number_the_api_would_refuse_is_named(ws):
    template = factories.template(ws, "sms")
    checked, _ = _check(ws, template, "Phone Number,code\n+1 (415) 555-0100,1\n07700 900123,2\n")
    assert _messages(checked) == ["row 3: phone number is not a valid address: “07700 900123”"]


def test_a_suppressed_recipient_is_named(ws):
    template = factories.template(ws)
    suppressions.add(ws.id, ["Grace@Example.net"], "manual")
    checked, _ = _check(ws, template, "email address,name\nada@example.net,Ada\n"
                                      "grace@example.net,Grace\n")
    assert _messages(checked) == ["row 3: grace@example.net is on the suppression list"]


def test_a_tag_the_template_needs_but_the_file_lacks_is_named(ws):
    template = factories.template(ws, content={"subject": "Hi {{name}}",
                                               "body": "<p>{{ Code }}</p>"})
    checked, _ = _check(ws, template, "email address,name\nada@example.net,Ada\n")
    assert _messages(checked) == ["The template uses the tag 'Code': the file needs a "
                                  "column named 'Code'."]


def test_a_row_over_the_limits_is_named(ws):
    template = factories.template(ws)
    checked, _ = _check(ws, template, f"email address,name\nada@example.net,{'x' * 8193}\n")
    (message,) = _messages(checked)
    assert message.startswith("row 2: the 'name' cell is too long (at most 8192 characters")


def test_the_file_itself_is_refused_when_it_cannot_be_a_list(ws, monkeypatch):
    template = factories.template(ws)
    cases = {
        b"": "The file is empty: its first row names the columns.",
        b"email address,name\n": "The file has a header row but no recipients.",
        b"PK\x03\x04rest": "The file is a damaged zip archive, not a spreadsheet we can read.",
        b"\xd0\xcf\x11\xe0rest": "This is an old Excel (.xls) file: save it as .xlsx or CSV.",
        "email address\nad\xe9@example.net\n".encode("latin-1"):
            "The file is not UTF-8 text: save it as CSV (UTF-8).",
        b"email address,Name,name\na@example.net,A,B\n": "Two columns are named 'name'.",
        b"email address,\na@example.net,x\n": "Column 2 has values but no name in row 1.",
    }
    for data, message in cases.items():
        checked, kept = _check(ws, template, data)
        assert (_messages(checked), kept) == ([message], None), data
    monkeypatch.setattr(reading, "MAX_ROWS", 2)
    checked, _ = _check(ws, template, "email address,name\n" + "a@example.net,A\n" * 3)
    assert _messages(checked) == ["The file has more than 2 rows: split it into files of at "
                                  "most that many."]
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 10)
    checked, _ = _check(ws, template, "email address,name\na@example.net,A\n")
    assert _messages(checked)[0].startswith("The file is larger than")


def test_the_monthly_allowance_is_checked_for_the_whole_list(ws):
    template = factories.template(ws)
    Account.update(monthly_limit=2).where(Account.id == ws.account_id).execute()
    ws = ws.__class__.get_by_id(ws.id)
    text = "email address,name\n" + "".join(f"p{i}@example.net,P\n" for i in range(3))
    checked, kept = _check(ws, template, text)
    assert kept is None
    assert _messages(checked) == ["The list has 3 rows; the account's monthly allowance has "
                                  "2 notifications left."]
    Account.update(monthly_limit=None).where(Account.id == ws.account_id).execute()
    ws = ws.__class__.get_by_id(ws.id)
    checked, _ = _check(ws, template, text)
    assert "no monthly allowance configured" in _messages(checked)[0]


def test_what_every_row_shares_is_checked_on_the_first(ws):
    template = factories.template(ws, content={"fromAddress": "hello@unverified.example"})
    checked, kept = _check(ws, template, "email address,name\nada@example.net,Ada\n")
    assert kept is None
    (message,) = _messages(checked)
    assert message.startswith("A send would be refused") and "unverified.example" in message


def test_a_template_without_a_live_version_cannot_be_sent_to_a_list(ws):
    template = factories.template(ws, publish_it=False)
    checked, _ = _check(ws, template, "email address,name\nada@example.net,Ada\n")
    assert _messages(checked) == ["The template has no published version: publish it first."]


def test_column_keys_ignore_case_spaces_underscores_and_hyphens():
    assert {reading.column_key(n) for n in ("Phone_Number", " phone-number", "PHONE  NUMBER")
            } == {"phone number"}
    assert checking.normalise_recipient("sms", " +1 (415) 555-0100 ") == "+14155550100"


def test_each_problem_names_its_cell_and_quotes_the_value_it_refused(ws):
    template = factories.template(ws)
    long_name = "x" * 8193
    checked, _ = _check(ws, template, "name,email address,time zone\n"
                                      "Ada,ada@example.net,\n"
                                      "Grace,grace@,Europe/London\n"
                                      "Alan,alan@example.net,Mars/Olympus\n"
                                      f"{long_name},edsger@example.net,\n")
    assert [(p.row, p.column) for p in checked.problems] == [(3, 1), (4, 2), (5, 0)]
    grace, alan, edsger = _messages(checked)
    assert grace == "row 3: email address is not a valid address: “grace@”"
    assert "'Mars/Olympus'" in alan
    # A long value is quoted cut, never whole.
    assert edsger.endswith(": “" + "x" * checking.QUOTED_CHARS + "…”")


def test_a_refused_file_keeps_its_first_rows_and_every_bad_row_as_a_table(ws):
    from engine.lists import excerpt

    template = factories.template(ws)
    rows = [f"p{n}@example.net,P{n}" for n in range(2, 40)]
    rows[30] = "bad@,Bad"  # row 32: after the first rows, shown because it is bad
    checked, _ = _check(ws, template, "email address,name\n" + "\n".join(rows) + "\n")
    table = checked.table
    assert table["header"] == ["email address", "name"]
    numbers = [number for number, _ in table["rows"]]
    assert numbers == [*range(2, 2 + excerpt.FIRST_ROWS), 32]
    assert table["rows"][-1] == [32, ["bad@", "Bad"]]
    assert table["more"] == 38 - len(numbers)
