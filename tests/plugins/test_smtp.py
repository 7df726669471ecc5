"""The SMTP provider against a real aiosmtpd server: MIME, DSN, pipelining, reuse and error
mapping."""

from __future__ import annotations

import base64
import email
import re
from email import policy

import pytest

from engine import sending
from engine.catalog import suppression_cache
from engine.database.models import DeliveryAttempt, Notification, Suppression
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.formats.message_bytes import message_bytes
from engine.plugins.manager import default_registry
from plugins.smtp import SmtpProvider
from tests import factories

PDF = base64.b64encode(b"%PDF-1.4 test").decode()
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


def test_everything_the_payload_asks_for_arrives(smtp_settings, smtp):
    ws = factories.workspace()
    payload = factories.email_payload(
        to=["Ada <ada@example.net>"], cc=["bob@example.net"], bcc=["audit@example.net"],
        replyTo="support@example.com", headers={"X-Campaign": "spring"},
        priority="High", sensitivity="Confidential", requestReadReceipt=True,
        requestDeliveryReceipt=True,
        html='<html><body><p>Hi</p><img src="cid:logo"></body></html>', text="Hi",
        attachments=[{"name": "invoice.pdf", "contentType": "application/pdf", "content": PDF,
                      "cid": None},
                     {"name": "logo.png", "contentType": "image/png", "content": PNG,
                      "cid": "logo"}])
    n = factories.notification(ws, payload)
    assert deliver_notification(str(n.id)) == "delivered"
    (arrived,) = smtp.received
    assert arrived.mail_from == "hello@example.com"
    assert sorted(arrived.rcpt_tos) == ["ada@example.net", "audit@example.net", "bob@example.net"]
    assert "RET=HDRS" in arrived.mail_options
    assert "NOTIFY=SUCCESS,FAILURE,DELAY" in arrived.rcpt_options
    msg = email.message_from_bytes(arrived.content, policy=policy.default)
    assert msg["Subject"] == "Hello Ada"
    assert msg["Reply-To"] == "support@example.com"
    assert msg["X-Priority"] == "1 (Highest)" and msg["Importance"] == "high"
    assert msg["Sensitivity"] == "Company-Confidential"
    assert msg["Disposition-Notification-To"] == "hello@example.com"
    assert msg["X-Campaign"] == "spring"
    assert msg["Bcc"] is None
    assert msg["Message-ID"].endswith("@example.com>")
    assert msg.get_content_type() == "multipart/mixed"
    parts = {p.get_content_type(): p for p in msg.walk()}
    assert "multipart/alternative" in parts and "multipart/related" in parts
    assert parts["text/plain"].get_content().strip() == "Hi"
    assert parts["image/png"]["Content-ID"] == "<logo>"
    assert parts["application/pdf"].get_filename() == "invoice.pdf"
    assert parts["application/pdf"].get_content() == b"%PDF-1.4 test"
    row = DeliveryAttempt.get()
    assert row.outcome == "delivered" and row.provider_message_id == msg["Message-ID"]


def test_a_from_address_given_with_a_name_arrives_as_one_mailbox(smtp_settings, smtp):
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": [],
            "emailOptions": {"fromAddress": '"Ops, Team" <ops@example.com>'}}
    sending.send(body, factories.api_key(ws), "127.0.0.1", "corr")
    assert deliver_notification(str(Notification.get().id)) == "delivered"
    (arrived,) = smtp.received
    assert arrived.mail_from == "ops@example.com"
    msg = email.message_from_bytes(arrived.content, policy=policy.default)
    assert msg["From"] == '"Ops, Team" <ops@example.com>'
    assert msg["From"].addresses[0].addr_spec == "ops@example.com"
    assert msg["Message-ID"].endswith("@example.com>")


LINE_ENDS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x00\x7f"


def _header_names(content: bytes) -> list[str]:
    """The name of every line that starts a header in any header block of the message, as
    a lenient reader splits lines (at every line end Python knows, space before the colon
    allowed); the bodies are base64, so a header block is all a line can start from."""
    names = []
    for line in content.decode("utf-8").splitlines():
        match = re.match(r"([!-9;-~]+)[ \t]*:", line)
        if match:
            names.append(match[1].lower())
    return names


def test_no_tag_or_stored_value_adds_a_header_line(smtp_settings, smtp):
    """A tag brings anything into a subject; a payload from an older release or a plugin
    anything anywhere: each stays inside its own header."""
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
    tags = [{"key": "name", "value": "".join(f"{c}Reply-To : phish@attacker.example"
                                             for c in LINE_ENDS)}]
    sending.send({"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": tags},
                 factories.api_key(ws), "127.0.0.1", "corr")
    sent = Notification.get()
    stored = factories.notification(ws, factories.email_payload(
        to=[f'"Bob{c}Bcc : spy@attacker.example" <bob@example.org>' for c in LINE_ENDS],
        headers={"X-Campaign": "".join(f"q{c}From : ceo@bank.example" for c in LINE_ENDS)},
        attachments=[{"name": f"a{c}X-Pad : 1.pdf", "contentType": f"application/pdf{c}X-Pad : 1",
                      "content": PDF, "cid": None} for c in LINE_ENDS]))
    for n in (sent, stored):
        assert deliver_notification(str(n.id)) == "delivered"
    for arrived in smtp.received:
        names = _header_names(arrived.content)
        assert not {"reply-to", "bcc", "x-pad"} & set(names), names
        assert names.count("from") == 1, names
    subject = email.message_from_bytes(smtp.received[0].content, policy=policy.default)["Subject"]
    assert subject.startswith("Hi  Reply-To : phish@attacker.example")


def test_the_connection_is_reused_across_messages(smtp_settings, smtp):
    ws = factories.workspace()
    first = factories.notification(ws, factories.email_payload())
    second = factories.notification(ws, factories.email_payload())
    deliver_notification(str(first.id))
    provider = providers.provider_for(default_registry().channel("email"), ws.id)
    connection = provider._connection
    deliver_notification(str(second.id))
    assert provider._connection is connection and connection is not None
    assert len(smtp.received) == 2


def pipelined(reads: list[bytes]) -> list[bytes]:
    """The client writes that carried MAIL FROM, every RCPT TO and DATA at once (after the
    RSET that leads them on a kept connection)."""
    return [r for r in reads
            if r.removeprefix(b"RSET\r\n").startswith(b"MAIL FROM:") and r.endswith(b"DATA\r\n")]


@pytest.fixture(params=[True, False], ids=["pipelined", "not-pipelined"])
def pipelining(request, smtp) -> bool:
    """Each outcome is checked through both paths: pipelined, and sendmail for a server
    that does not offer PIPELINING (the server is set up for the path)."""
    smtp.pipelining = request.param
    return request.param


def test_hard_bounce_suppresses_and_fails(smtp_settings, smtp, pipelining):
    smtp.refuse["gone@example.net"] = "550 5.1.1 mailbox unavailable"
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(to=["gone@example.net"]))
    assert suppression_cache.suppressed(ws.id, ["gone@example.net"]) == set()  # a preview's
    assert deliver_notification(str(n.id)) == "suppressed"
    assert Suppression.get(Suppression.address == "gone@example.net").reason == "bounce"
    # The bounce is this process's own write: its previews see it at once.
    assert suppression_cache.suppressed(ws.id, ["gone@example.net"]) == {"gone@example.net"}
    assert smtp.received == []
    assert bool(pipelined(smtp.reads)) is pipelining


def test_partial_refusal_still_delivers_to_the_others(smtp_settings, smtp, pipelining):
    smtp.refuse["gone@example.net"] = "550 5.1.1 mailbox unavailable"
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(
        to=["ok@example.net", "gone@example.net"]))
    assert deliver_notification(str(n.id)) == "delivered"
    assert smtp.received[0].rcpt_tos == ["ok@example.net"]
    assert Suppression.select().where(Suppression.address == "gone@example.net").exists()
    assert "gone@example.net" in DeliveryAttempt.get().error
    assert bool(pipelined(smtp.reads)) is pipelining


def test_deferral_is_transient_and_rescheduled(smtp_settings, smtp, pipelining):
    smtp.refuse["busy@example.net"] = "451 4.3.0 try later"
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(to=["busy@example.net"]))
    assert deliver_notification(str(n.id)) == "queued"
    n = Notification.get_by_id(n.id)
    assert n.next_attempt_at is not None and "451" in n.last_error
    assert bool(pipelined(smtp.reads)) is pipelining


def test_a_refused_sender_fails_the_notification(smtp_settings, smtp, pipelining):
    smtp.refuse["hello@example.com"] = "553 5.7.1 sender not allowed"
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(n.id)) == "failed"
    assert Notification.get_by_id(n.id).last_error == "SMTP 553: 5.7.1 sender not allowed"
    assert smtp.received == []
    assert not Suppression.select().exists()
    assert bool(pipelined(smtp.reads)) is pipelining


def test_a_421_closes_the_connection_and_the_next_message_reconnects(smtp_settings, smtp,
                                                                      pipelining):
    smtp.refuse["busy@example.net"] = "421 4.3.2 shutting down"
    ws = factories.workspace()
    first = factories.notification(ws, factories.email_payload(
        to=["ok@example.net", "busy@example.net"]))
    assert deliver_notification(str(first.id)) == "queued"
    assert "421" in Notification.get_by_id(first.id).last_error
    provider = providers.provider_for(default_registry().channel("email"), ws.id)
    assert provider._connection is None  # closed by the client, as smtplib does: not kept
    second = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(second.id)) == "delivered"
    assert [a.rcpt_tos for a in smtp.received] == [["ada@example.net"]]
    assert sum(read.upper().startswith(b"EHLO") for read in smtp.reads) == 2


def dotted_message(**payload):
    """A message with body lines that must be dot-stuffed on the wire (one is a lone dot)."""
    message = factories_message(**payload)
    message.mime = email.message_from_bytes(
        b"From: hello@example.com\r\nSubject: dots\r\n\r\n"
        b".leading dot\r\n.\r\n..\r\nend of body\r\n")
    assert b"\r\n.\r\n" in message_bytes(message.mime)
    return message


def test_a_message_to_several_recipients_arrives_byte_for_byte(smtp, provider, pipelining):
    message = dotted_message(to=["ada@example.net", "bob@example.net"], cc=["cy@example.net"],
                             bcc=["audit@example.net"])
    result = provider.send(message)
    (arrived,) = smtp.received
    assert arrived.content == message_bytes(message.mime)
    assert arrived.rcpt_tos == ["ada@example.net", "bob@example.net", "cy@example.net",
                                "audit@example.net"]
    assert f"SIZE={len(arrived.content)}" in arrived.mail_options
    assert result.rejected == {}
    if pipelining:  # one write for MAIL, the four RCPTs and DATA; the content in a second
        (commands,) = pipelined(smtp.reads)
        assert commands.count(b"RCPT TO:") == 4
    else:
        assert pipelined(smtp.reads) == []


def test_after_refused_messages_the_same_connection_delivers_the_next(smtp, provider):
    from engine.plugins.contracts import SuppressedError

    smtp.refuse["gone@example.net"] = "550 5.1.1 mailbox unavailable"
    with pytest.raises(SuppressedError):  # every recipient refused
        provider.send(dotted_message(to=["gone@example.net"]))
    connection = provider._connection
    partial = provider.send(dotted_message(to=["gone@example.net", "ok@example.net"]))
    assert list(partial.rejected) == ["gone@example.net"]
    provider.send(dotted_message(to=["ada@example.net"]))
    assert provider._connection is connection
    assert [a.rcpt_tos for a in smtp.received] == [["ok@example.net"], ["ada@example.net"]]
    assert len(pipelined(smtp.reads)) == 3


def test_a_data_accepted_after_every_recipient_was_refused_is_ended_cleanly(smtp, provider):
    from engine.plugins.contracts import SuppressedError

    async def refuse_but_keep(server, session, envelope, address, rcpt_options):
        envelope.rcpt_tos.append(address)  # so DATA still answers 354 (RFC 2920 3.1)
        return "550 5.1.1 mailbox unavailable" if address == "gone@example.net" else "250 OK"

    smtp.handle_RCPT = refuse_but_keep
    with pytest.raises(SuppressedError):
        provider.send(dotted_message(to=["gone@example.net"]))
    connection = provider._connection
    message = dotted_message(to=["ada@example.net"])
    provider.send(message)
    assert provider._connection is connection
    # A lone dot ended the refused transaction: its content was never sent.
    assert [a.content for a in smtp.received] == [b"", message_bytes(message.mime)]


def test_unreachable_server_is_transient():
    from engine.plugins.contracts import TransientError
    from engine.queue.embedded_redis import free_port

    provider = SmtpProvider(f"smtp://127.0.0.1:{free_port()}?tls=none&timeout=2")
    with pytest.raises(TransientError, match="cannot reach SMTP server"):
        provider.send(factories_message())


def test_a_server_that_answered_is_not_said_to_be_unreachable(smtp):
    from engine.plugins.contracts import TransientError

    # The test server offers no STARTTLS: it answers, and the session cannot go on.
    provider = SmtpProvider(f"smtp://127.0.0.1:{smtp.port}?tls=starttls&timeout=5")
    try:
        with pytest.raises(TransientError) as raised:
            provider.send(factories_message())
    finally:
        provider.close()
    assert "cannot reach" not in str(raised.value)
    assert f"SMTP server 127.0.0.1:{smtp.port} answered, but the session failed" in \
        str(raised.value)


def factories_message(**payload):
    from channels.email import EmailChannel

    return EmailChannel().build(factories.email_payload(**payload))


def test_tls_mode_is_checked():
    with pytest.raises(ValueError):
        SmtpProvider("smtp://h:25?tls=maybe")


def test_a_connection_dropped_by_the_server_is_reopened_once(smtp_settings, smtp):
    ws = factories.workspace()
    first = factories.notification(ws, factories.email_payload())
    deliver_notification(str(first.id))
    provider = providers.provider_for(default_registry().channel("email"), ws.id)
    provider._connection.docmd("QUIT")  # the server hangs up, as idle timeouts do
    second = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(second.id)) == "delivered"
    assert len(smtp.received) == 2


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    import ssl

    import trustme

    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(context)
    path = tmp_path_factory.mktemp("smtp-ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return context, str(path)


@pytest.mark.parametrize("mode", ["starttls", "ssl"])
def test_tls_modes_with_authentication(mode, tls, monkeypatch):
    from engine.queue.embedded_redis import free_port
    from tests.support.smtp_server import start_smtp

    context, ca_file = tls
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    port = free_port()
    options = {"starttls": context} if mode == "starttls" else {"implicit_tls": context}
    controller, handler = start_smtp(port, auth=("mailer", "s3cret"), **options)
    try:
        good = SmtpProvider(f"smtp://mailer:s3cret@localhost:{port}?tls={mode}&timeout=5")
        good.send(factories_message())
        assert len(handler.received) == 1
        good.close()
        from engine.plugins.contracts import DeliveryError

        bad = SmtpProvider(f"smtp://mailer:wrong@localhost:{port}?tls={mode}&timeout=5")
        with pytest.raises(DeliveryError):
            bad.send(factories_message())
        # Credentials are never offered in clear: without TLS the server offers no AUTH.
        plain = SmtpProvider(f"smtp://mailer:s3cret@localhost:{port}?tls=none&timeout=1")
        with pytest.raises(DeliveryError):
            plain.send(factories_message())
        assert len(handler.received) == 1
    finally:
        controller.stop()


def test_no_header_line_passes_rfc_5322s_998_octets(smtp_settings, smtp):
    """A 3,000-character tag in the subject and a long custom header value are folded or
    encoded, so the relay takes the message instead of answering "Line too long"."""
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
    word = "x" * 3000
    sending.send({"tenantId": str(ws.id), "templateId": str(tpl.id),
                  "tags": [{"key": "name", "value": word}]},
                 factories.api_key(ws), "127.0.0.1", "corr")
    stored = factories.notification(ws, factories.email_payload(
        headers={"X-Campaign": "y" * 3000, "X-Spaced": " ".join(["z" * 990] * 3)}))
    for n in (Notification.get(Notification.id != stored.id), stored):
        assert deliver_notification(str(n.id)) == "delivered"
    assert len(smtp.received) == 2
    for arrived in smtp.received:
        longest = max(len(line) for line in arrived.content.split(b"\r\n"))
        assert longest <= 998, longest
    first, second = (email.message_from_bytes(a.content, policy=policy.default)
                     for a in smtp.received)
    assert first["Subject"] == f"Hi {word}"
    assert second["X-Campaign"] == "y" * 3000
    assert second["X-Spaced"] == " ".join(["z" * 990] * 3)
