"""Reading DSNs and ARF reports; the soft-bounce rule; reports that name strangers."""

from __future__ import annotations

import pytest

from engine.database.models import Suppression
from engine.database.models.reports import NotificationEvent
from engine.inbound.mail_reports import MalformedReport, parse
from engine.reports import events
from tests import factories
from tests.engine.inbound.reports_mail import QMAIL, arf, dsn


def test_a_dsn_gives_each_recipients_action_status_and_the_original_message_id():
    report = parse(dsn("ada@example.net", "<abc.123@example.com>"))
    (bounce,) = report.reports
    assert (bounce.kind, bounce.recipient, bounce.source) == ("bounced", "ada@example.net",
                                                              "dsn")
    assert bounce.detail.startswith("5.1.1 smtp; 550 5.1.1")
    assert report.message_ids == {"abc.123@example.com"}


@pytest.mark.parametrize(("action", "status", "kind"), [
    ("failed", "4.2.2", "soft_bounced"), ("delayed", "4.4.7", "deferred"),
    ("delivered", "2.0.0", "delivered")])
def test_dsn_actions_and_classes(action, status, kind):
    (report,) = parse(dsn("ada@example.net", "<m@x>", action=action, status=status)).reports
    assert report.kind == kind


def test_an_arf_report_is_a_complaint_by_its_original_recipient():
    report = parse(arf("ada@example.net", "<abc@example.com>"))
    assert [(r.kind, r.recipient) for r in report.reports] == [("complained", "ada@example.net")]
    assert report.message_ids == {"abc@example.com"}


def test_a_bounce_that_is_no_dsn_is_read_by_flufl_bounces_detectors():
    report = parse(QMAIL)
    assert [(r.kind, r.recipient) for r in report.reports] == [("bounced", "bob@example.net")]


@pytest.mark.parametrize("raw", [
    b"", b"hello", b"Content-Type: multipart/report; boundary=x\r\n\r\n--x\r\n",
    b"Content-Type: message/delivery-status\r\n\r\n",
    b"Content-Type: multipart/report; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: "
    b"message/delivery-status\r\n\r\nReporting-MTA: x\r\n\r\nAction: failed\r\n--b--\r\n",
    b"\xff\xfe\x00" * 1000, b"x" * (1024 * 1024 + 1)])
def test_what_is_no_report_is_malformed_never_an_other_error(raw):
    with pytest.raises(MalformedReport):
        parse(raw)


def test_three_soft_bounces_in_seven_days_suppress_the_address(settings):
    ws = factories.workspace()
    for i in range(3):
        n = factories.notification(ws, factories.email_payload(to=["ada@example.net"]))
        events.record(n, events.Reported("soft_bounced", "ada@example.net", "dsn", "4.2.2"))
        suppressed = Suppression.select().where(Suppression.workspace == ws.id).count()
        assert suppressed == (1 if i == 2 else 0)
    assert Suppression.get(Suppression.workspace == ws.id).reason == "soft-bounces"


def test_soft_bounces_older_than_the_window_do_not_count(settings):
    import datetime as dt

    from engine.database.models import utcnow

    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(to=["ada@example.net"]))
    for days in (8, 9):
        events.record(n, events.Reported("soft_bounced", "ada@example.net", "dsn",
                                         occurred_at=utcnow() - dt.timedelta(days=days)))
    events.record(n, events.Reported("soft_bounced", "ada@example.net", "dsn"))
    assert Suppression.select().count() == 0


def test_a_report_about_someone_else_records_nothing(settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(to=["ada@example.net"]))
    assert not events.record(n, events.Reported("bounced", "ceo@example.net", "dsn"))
    assert NotificationEvent.select().count() == 0 and Suppression.select().count() == 0
