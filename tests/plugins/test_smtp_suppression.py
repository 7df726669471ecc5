"""Suppressions through the SMTP provider: a suppressed address is found whatever the
spelling of its domain, keyed by the ASCII form mail is sent to."""

from __future__ import annotations

import pytest

from engine.catalog import suppressions
from engine.database.models import Suppression
from engine.delivery.jobs import deliver_notification
from engine.formats.addresses import suppression_key
from tests import factories


def test_a_suppressed_domain_spelt_another_way_is_still_suppressed(smtp_settings, smtp):
    # Fullwidth letters and an ideographic full stop reach the same mailbox (the channel
    # sends to the domain's ASCII form), so they are the same suppression key.
    ws = factories.workspace()
    suppressions.add(ws.id, ["bob@example.net"], "manual")
    for spelling in ("bob@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.net", "bob@example\u3002net",
                     "Bob <BOB@EXAMPLE.NET>"):
        n = factories.notification(ws, factories.email_payload(to=[spelling, "ok@example.net"]))
        assert deliver_notification(str(n.id)) == "delivered"
    assert [m.rcpt_tos for m in smtp.received] == [["ok@example.net"]] * 3


def test_a_bounce_of_an_internationalised_domain_suppresses_its_unicode_spelling(
        smtp_settings, smtp):
    # The server sees (and refuses) the ASCII form; the next send names the Unicode one.
    smtp.refuse["gone@xn--bcher-kva.example"] = "550 5.1.1 mailbox unavailable"
    ws = factories.workspace()
    first = factories.notification(ws, factories.email_payload(to=["gone@b\u00fccher.example"]))
    assert deliver_notification(str(first.id)) == "suppressed"
    assert Suppression.get().address == "gone@xn--bcher-kva.example"
    again = factories.notification(ws, factories.email_payload(
        to=["gone@b\u00fccher.example", "ok@example.net"]))
    assert deliver_notification(str(again.id)) == "delivered"
    assert [m.rcpt_tos for m in smtp.received] == [["ok@example.net"]]


@pytest.mark.parametrize(("spelling", "key"), [
    ("gone@B\u00dcCHER.example", "gone@xn--bcher-kva.example"),
    ("Gone <gone@b\u00fccher\u3002example>", "gone@xn--bcher-kva.example"),
    ("gone@xn--bcher-kva.example", "gone@xn--bcher-kva.example"),
    ("J\u00f6rg@example.net", "j\u00f6rg@example.net"),  # a local part has no ASCII form
    ("+14155550100", "+14155550100"),
    ("bad@-\u00fc-.example", "bad@-\u00fc-.example"),  # no IDNA form: kept as it is
])
def test_a_suppression_key_is_the_domain_mail_is_sent_to(spelling, key):
    assert suppression_key(spelling) == key


def test_a_row_queued_with_the_older_keys_is_checked_against_the_list_itself(smtp_settings,
                                                                             smtp):
    # Queued before suppression keys carried the ASCII domain: its payload lists the
    # Unicode key, which the claim's own lookup cannot find.
    ws = factories.workspace()
    suppressions.add(ws.id, ["gone@b\u00fccher.example"], "manual")
    n = factories.notification(ws, factories.email_payload(
        to=["gone@b\u00fccher.example", "ok@example.net"],
        suppressionKeys=["gone@b\u00fccher.example", "ok@example.net"]))
    assert deliver_notification(str(n.id)) == "delivered"
    assert [m.rcpt_tos for m in smtp.received] == [["ok@example.net"]]
