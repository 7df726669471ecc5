"""``SmtpProvider.send_many``: a fan-out's messages as one pipelined stream per connection,
each message's content leading the next message's commands (RFC 2920 3.1)."""

from __future__ import annotations

import datetime as dt
import email
import random
import smtplib
import time
from email import policy

import pytest
from peewee import DatabaseError

from channels.email import EmailChannel
from engine.database.models import DeliveryAttempt, Notification, Suppression, utcnow
from engine.delivery import providers
from engine.delivery.jobs import CHECKPOINT_ROWS, deliver_notification
from engine.delivery.message_lanes import AHEAD_PER_LANE
from engine.delivery.outcomes import UNRECORDED_MOST
from engine.formats.message_bytes import message_bytes
from engine.plugins.contracts import PermanentError, SendResult, SuppressedError, TransientError
from engine.plugins.manager import default_registry
from plugins.smtp.exchange import dot_stuffed
from tests import factories


def message(subject: str = "Hello", **payload):
    return EmailChannel().build(factories.email_payload(subject=subject, **payload))


def dotted(subject: str):
    """A message whose body must be dot-stuffed on the wire (one line is a lone dot)."""
    built = message(subject)
    built.mime = email.message_from_bytes(
        f"From: hello@example.com\r\nSubject: {subject}\r\n\r\n".encode()
        + b".leading dot\r\n.\r\n..\r\nend of body\r\n")
    return built


def greetings(reads: list[bytes]) -> int:
    """How many connections the client opened (one EHLO each)."""
    return sum(read.upper().startswith(b"EHLO") for read in reads)


def test_each_message_s_content_leads_the_next_message_s_commands(smtp, provider):
    messages = [dotted(f"m{i}") for i in range(3)]
    results = list(provider.send_many(iter(messages)))
    assert [type(r) for r in results] == [SendResult] * 3
    assert [r.provider_message_id for r in results] == [m.message_id for m in messages]
    assert [a.content for a in smtp.received] == [message_bytes(m.mime) for m in messages]
    writes = [r for r in smtp.reads if b"DATA\r\n" in r or r.endswith(b"\r\n.\r\n")]
    first, second, third, last = writes
    assert first.startswith(b"MAIL FROM:") and first.endswith(b"DATA\r\n")
    for number, write in enumerate((second, third, last)):
        # The previous message's content, stuffed and ended, then MAIL, RCPT and DATA.
        content = message_bytes(messages[number].mime)
        assert write.startswith(content.replace(b"\r\n.", b"\r\n..") + b".\r\n")
        assert write.endswith(b"DATA\r\n") is (write is not last)
    assert b"MAIL FROM:" not in last
    assert greetings(smtp.reads) == 1


def test_refused_messages_in_a_stream_leave_the_others_delivered(smtp, provider):
    smtp.refuse.update({"gone@example.net": "550 5.1.1 mailbox unavailable",
                        "busy@example.net": "451 4.3.0 try later",
                        "bad@example.com": "553 5.7.1 sender not allowed"})
    messages = [message("first"), message("bounced", to=["gone@example.net"]),
                message("deferred", to=["busy@example.net"]),
                message("partial", to=["gone@example.net", "ok@example.net"]),
                message("sender", **{"from": {"address": "bad@example.com", "name": None}}),
                message("last")]
    first, bounced, deferred, partial, sender, last = provider.send_many(messages)
    assert isinstance(first, SendResult) and isinstance(last, SendResult)
    assert isinstance(bounced, SuppressedError) and bounced.recipients == ["gone@example.net"]
    assert isinstance(deferred, TransientError) and deferred.status_code == 451
    assert partial.rejected == {"gone@example.net": "550 5.1.1 mailbox unavailable"}
    assert partial.bounced == ["gone@example.net"]
    assert isinstance(sender, PermanentError) and str(sender) == (
        "SMTP 553: 5.7.1 sender not allowed")
    assert [a.rcpt_tos for a in smtp.received] == [
        ["ada@example.net"], ["ok@example.net"], ["ada@example.net"]]
    assert greetings(smtp.reads) == 1  # every refusal left the connection in step


def answer_content(smtp, subject: str, reply: str) -> None:
    """The server answers ``reply`` to the content of a message with this subject."""
    accept = type(smtp).handle_DATA

    async def handle_DATA(server, session, envelope):
        if f"Subject: {subject}\r\n".encode() in envelope.original_content:
            return reply
        return await accept(smtp, server, session, envelope)

    smtp.handle_DATA = handle_DATA


def test_a_refused_content_fails_only_its_message(smtp, provider):
    answer_content(smtp, "spam", "554 5.6.0 content rejected")
    outcomes = list(provider.send_many([message("a"), message("spam"), message("b")]))
    assert [type(o) for o in outcomes] == [SendResult, PermanentError, SendResult]
    assert outcomes[1].status_code == 554
    assert len(smtp.received) == 2 and greetings(smtp.reads) == 1


def test_a_421_for_a_content_reopens_the_connection_for_the_rest(smtp, provider):
    answer_content(smtp, "last straw", "421 4.3.2 shutting down")
    outcomes = list(provider.send_many(
        [message("a"), message("last straw"), message("b"), message("c")]))
    assert [type(o) for o in outcomes] == [SendResult, TransientError, SendResult, SendResult]
    assert [email.message_from_bytes(a.content)["Subject"] for a in smtp.received] == [
        "a", "b", "c"]
    assert greetings(smtp.reads) == 2


def test_a_connection_lost_mid_stream_resends_what_was_not_settled(smtp, provider):
    accept = type(smtp).handle_DATA
    dropped: list[str] = []

    async def hang_up_once(server, session, envelope):
        if b"Subject: b" in envelope.original_content and not dropped:
            dropped.append("b")
            server.transport.close()  # before any reply: the client cannot know its fate
            return "250 never sent"
        return await accept(smtp, server, session, envelope)

    smtp.handle_DATA = hang_up_once
    outcomes = list(provider.send_many([message(s) for s in "abcd"]))
    assert [type(o) for o in outcomes] == [SendResult] * 4
    # b's content and c's commands were on the lost connection: both sent again, once each.
    assert [email.message_from_bytes(a.content)["Subject"] for a in smtp.received] == [
        "a", "b", "c", "d"]
    assert dropped == ["b"] and greetings(smtp.reads) == 2


def test_a_server_without_pipelining_gets_each_message_through_sendmail(smtp, provider):
    smtp.pipelining = False
    smtp.refuse["gone@example.net"] = "550 5.1.1 mailbox unavailable"
    outcomes = list(provider.send_many(
        [message("a"), message("gone", to=["gone@example.net"]), message("b")]))
    assert [type(o) for o in outcomes] == [SendResult, SuppressedError, SendResult]
    assert len(smtp.received) == 2
    assert not [r for r in smtp.reads if r.startswith(b"MAIL FROM:") and b"RCPT" in r]


@pytest.mark.parametrize("pipelining", [True, False], ids=["pipelined", "not-pipelined"])
def test_an_international_address_goes_with_smtputf8_and_an_idn_in_ascii(smtp, provider,
                                                                        pipelining):
    smtp.pipelining = pipelining
    outcomes = list(provider.send_many([
        message("a"), message("utf8", to=["jörg@example.net", "Zoë <zoe@bücher.example>"]),
        message("idn", to=["ada@bücher.example"]), message("b")]))
    assert [type(o) for o in outcomes] == [SendResult] * 4
    _, utf8, idn, _ = smtp.received
    assert utf8.rcpt_tos == ["jörg@example.net", "zoe@xn--bcher-kva.example"]
    assert idn.rcpt_tos == ["ada@xn--bcher-kva.example"]
    headers = email.message_from_string(utf8.content.decode(), policy=policy.SMTPUTF8)
    assert [str(a) for a in headers["To"].addresses] == [
        "jörg@example.net", "Zoë <zoe@xn--bcher-kva.example>"]
    assert b"To: j\xc3\xb6rg@example.net,\r\n =?utf-8?" in utf8.content  # raw UTF-8, folded
    assert email.message_from_bytes(idn.content)["To"] == "ada@xn--bcher-kva.example"
    assert greetings(smtp.reads) == 1


@pytest.mark.parametrize("pipelining", [True, False], ids=["pipelined", "not-pipelined"])
def test_a_server_without_smtputf8_fails_only_the_international_message(smtp, provider,
                                                                        pipelining):
    smtp.pipelining, smtp.smtputf8 = pipelining, False
    outcomes = list(provider.send_many(
        [message("a"), message("utf8", to=["jörg@example.net"]), message("b")]))
    assert [type(o) for o in outcomes] == [SendResult, PermanentError, SendResult]
    assert "SMTPUTF8" in str(outcomes[1])
    assert [email.message_from_bytes(a.content)["Subject"] for a in smtp.received] == ["a", "b"]
    assert greetings(smtp.reads) == 1


@pytest.fixture
def smtp_settings(settings, smtp):
    from engine import runtime

    runtime.configure(settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{smtp.port}?tls=none&connections=3"))
    providers.close_all()
    yield
    providers.close_all()
    runtime.configure(settings)


def test_a_marketing_fan_out_streams_one_message_per_recipient(smtp_settings, smtp):
    smtp.refuse["gone@example.net"] = "550 5.1.1 mailbox unavailable"
    recipients = [f"user{i}@example.net" for i in range(20)] + ["gone@example.net"]
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(
        emailType="Marketing", to=recipients, trackOpens=True))
    assert deliver_notification(str(n.id)) == "delivered"
    assert sorted(a.rcpt_tos[0] for a in smtp.received) == sorted(recipients[:-1])
    assert all(len(a.rcpt_tos) == 1 for a in smtp.received)
    assert 1 < greetings(smtp.reads) <= 3  # lanes, each one pipelined connection
    assert any(b"\r\n.\r\nMAIL FROM:" in r for r in smtp.reads)
    rows = {a.recipient: a for a in DeliveryAttempt.select()}
    assert set(rows) == set(recipients)
    assert {a.outcome for r, a in rows.items() if r != "gone@example.net"} == {"delivered"}
    assert rows["gone@example.net"].outcome == "suppressed"
    ids = {email.message_from_bytes(a.content)["Message-ID"] for a in smtp.received}
    assert {rows[r].provider_message_id for r in recipients[:-1]} == ids
    assert Suppression.get(Suppression.address == "gone@example.net").reason == "bounce"


def test_fan_outs_one_after_another_reuse_the_kept_connections(smtp_settings, smtp):
    ws = factories.workspace()
    for number in range(3):
        n = factories.notification(ws, factories.email_payload(
            emailType="Marketing", to=[f"u{number}.{i}@example.net" for i in range(12)]))
        assert deliver_notification(str(n.id)) == "delivered"
    assert len(smtp.received) == 36
    # Never more connections than lanes, however many fan-outs: none is left open behind.
    assert greetings(smtp.reads) <= 3
    provider = providers.provider_for(default_registry().channel("email"), ws.id)
    assert 1 <= len(provider._idle) <= 3
    assert all(conn.sock is not None for conn in provider._idle)


def test_a_fan_out_retried_sends_only_to_the_recipients_not_reached(smtp_settings, smtp):
    smtp.refuse["busy@example.net"] = "451 4.3.0 try later"
    recipients = [f"user{i}@example.net" for i in range(6)] + ["busy@example.net"]
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(
        emailType="Marketing", to=recipients))
    assert deliver_notification(str(n.id)) == "queued"  # the 451 waits for a retry
    assert sorted(a.rcpt_tos[0] for a in smtp.received) == sorted(recipients[:-1])
    del smtp.refuse["busy@example.net"]
    Notification.update(next_attempt_at=None).where(Notification.id == n.id).execute()
    assert deliver_notification(str(n.id)) == "delivered"
    assert [a.rcpt_tos[0] for a in smtp.received[6:]] == ["busy@example.net"]
    second = DeliveryAttempt.select().where(DeliveryAttempt.number == 2)
    assert [(a.recipient, a.outcome) for a in second] == [("busy@example.net", "delivered")]


# How long the refusing database takes to answer: as one going away does (a connection
# that times out), long enough for lanes that do not wait for it to send the whole fan-out.
REFUSAL_SECONDS = 1.0


@pytest.fixture
def refused_after_a_checkpoint(db):
    """A trigger that refuses attempt rows once one checkpoint's worth is stored, slowly: the
    database failing in the middle of a fan-out, with a real database error. Yields the
    function that lifts it."""
    table = f'"{DeliveryAttempt._meta.table_name}"'
    full = f"(SELECT COUNT(*) FROM {table}) >= {CHECKPOINT_ROWS}"
    if db.__class__.__name__ == "SqliteDatabase":
        db.register_function(lambda: time.sleep(REFUSAL_SECONDS), "herald_test_pause", 0)
        db.execute_sql(f"CREATE TRIGGER refuse_attempts BEFORE INSERT ON {table} WHEN {full} "
                       "BEGIN SELECT herald_test_pause(); "
                       "SELECT RAISE(ABORT, 'attempts refused'); END")

        def lift() -> None:
            db.execute_sql("DROP TRIGGER IF EXISTS refuse_attempts")
    else:
        db.execute_sql(f"CREATE FUNCTION refuse_attempts() RETURNS trigger AS $$ BEGIN IF {full} "
                       f"THEN PERFORM pg_sleep({REFUSAL_SECONDS}); "
                       "RAISE EXCEPTION 'attempts refused'; END IF; RETURN NEW; END $$ "
                       "LANGUAGE plpgsql")
        db.execute_sql(f"CREATE TRIGGER refuse_attempts BEFORE INSERT ON {table} "
                       "FOR EACH ROW EXECUTE FUNCTION refuse_attempts()")

        def lift() -> None:
            db.execute_sql(f"DROP TRIGGER IF EXISTS refuse_attempts ON {table}")
            db.execute_sql("DROP FUNCTION IF EXISTS refuse_attempts()")
    yield lift
    lift()


def test_a_fan_out_stops_sending_when_its_checkpoint_fails_and_resumes_after_it(
        smtp_settings, smtp, refused_after_a_checkpoint):
    recipients = [f"reader{i}@example.net" for i in range(300)]
    n = factories.notification(factories.workspace(), factories.email_payload(
        emailType="Marketing", to=recipients))
    with pytest.raises(DatabaseError):  # as a crash: the worker logs it, the row waits
        deliver_notification(str(n.id))
    assert Notification.get_by_id(n.id).status == "sending"
    assert DeliveryAttempt.select().count() == CHECKPOINT_ROWS
    sent_before = len(smtp.received)
    # Nothing more could be recorded, so nothing more was sent while the database took its
    # time to refuse: the second checkpoint's messages and those the lanes may hold ahead of
    # the reader, not the 300.
    lanes = providers.provider_for(default_registry().channel("email"), n.workspace_id)
    assert sent_before - CHECKPOINT_ROWS <= UNRECORDED_MOST + AHEAD_PER_LANE * lanes.max_concurrency
    refused_after_a_checkpoint()  # the database is back
    Notification.update(updated_at=utcnow() - dt.timedelta(hours=1)).where(
        Notification.id == n.id).execute()  # stale: the reconciler would hand it out again
    assert deliver_notification(str(n.id)) == "delivered"
    reached = [a.rcpt_tos[0] for a in smtp.received]
    assert sorted(set(reached)) == sorted(recipients)
    # The checkpointed recipients were not sent again; the others sent before may have been.
    again = reached[sent_before:]
    recorded = {a.recipient for a in DeliveryAttempt.select().where(DeliveryAttempt.number == 1)}
    assert len(recorded) == CHECKPOINT_ROWS and not recorded & set(again)


@pytest.mark.parametrize("content", [
    b"", b".", b"..\r\n", b".start\r\nmid\r\n.\r\n..x\r\nend.", b"a\n.b\r.c\r\n.",
    b"\r\n.\r\n" * 3, bytes(range(256)) * 4])
def test_dot_stuffing_is_smtplibs(content):
    assert dot_stuffed(content) == smtplib._quote_periods(content)


def test_random_contents_are_dot_stuffed_as_smtplib_does():
    rng = random.Random(30)
    for _ in range(500):
        content = bytes(rng.choice(b".\r\nab") for _ in range(rng.randrange(40)))
        assert dot_stuffed(content) == smtplib._quote_periods(content)
