"""One message's SMTP exchange with PIPELINING (RFC 2920), and what the server's replies
mean as the engine's outcomes. Used by the SMTP provider (plugins/smtp); not a plugin."""

from __future__ import annotations

import dataclasses
import smtplib
from collections.abc import Callable

from engine.plugin_api import (
    PLAIN_ADDRESS,
    DeliveryError,
    OutboundEmail,
    PermanentError,
    SendResult,
    SuppressedError,
    TransientError,
)
from plugins.smtp.signing import wire_bytes

Refused = dict[str, tuple[int, bytes]]

def dot_stuffed(content: bytes) -> bytes:
    """A dot doubled at the start of every line, as ``smtplib._quote_periods`` does with a
    multi-line regular expression, which tries every position of the content: 10 ms of CPU
    for a message with a 1 MiB attachment, against a fraction of that for ``replace``."""
    quoted = content.replace(b"\n.", b"\n..")
    return b"." + quoted if quoted.startswith(b".") else quoted


def angle_address(address: str) -> str:
    """``<address>`` for MAIL FROM and RCPT TO, as ``smtplib.quoteaddr`` writes it: a plain
    address directly, since quoteaddr would run email.utils.parseaddr (pure Python, a tenth
    of a delivery's CPU) on it only to give it back unchanged."""
    if PLAIN_ADDRESS.fullmatch(address):
        return f"<{address}>"
    return smtplib.quoteaddr(address)


class Envelope:
    """One message's exchange with PIPELINING (RFC 2920): MAIL, every RCPT and DATA in one
    write, their replies read in order, then the content and its final reply."""

    def __init__(self, conn: smtplib.SMTP, message: OutboundEmail, content: bytes,
                 reset: bool = False) -> None:
        self.message = message
        self.reset = reset  # RSET leads the commands (a kept connection taken again)
        self.content = content
        mail_options, rcpt_options = dsn_options(conn, message)
        size = [f"SIZE={len(content)}"] if conn.has_extn("size") else []
        utf8 = utf8_option(message)
        mail_from = message.envelope_sender or message.sender
        self.commands = "".join([
            *([_command("RSET")] if reset else []),
            _command(f"MAIL FROM:{angle_address(mail_from)}", *size, *utf8,
                     *mail_options),
            *(_command(f"RCPT TO:{angle_address(to)}", *rcpt_options)
              for to in message.recipients),
            _command("DATA")]).encode("utf-8" if utf8 else "ascii")
        self.refused: Refused = {}

    @classmethod
    def of(cls, conn: smtplib.SMTP, message: OutboundEmail,
           reset: bool = False) -> Envelope | None:
        """None when the server does not pipeline (smtplib's own exchange then); raises
        SMTPNotSupportedError for an address that needs SMTPUTF8 the server lacks."""
        if not conn.has_extn("pipelining"):
            return None
        if utf8_option(message) and not conn.has_extn("smtputf8"):
            raise smtplib.SMTPNotSupportedError("SMTPUTF8 not supported by server")
        return cls(conn, message, wire_bytes(message), reset)

    def open(self, conn: smtplib.SMTP) -> Refused:
        """Read the commands' replies: the refused recipients when DATA answered 354 with a
        recipient accepted; otherwise end the transaction and raise as ``SMTP.sendmail``."""
        if self.reset and conn.getreply()[0] != 250:  # the kept connection is not in step
            conn.close()
            raise smtplib.SMTPServerDisconnected("RSET refused")
        count = 2 + len(self.message.recipients)
        replies = [conn.getreply()]  # one per command, in order, so the stream stays in sync
        while len(replies) < count and replies[-1][0] != 421:  # 421: server closing
            replies.append(conn.getreply())
        (mail_code, mail_text), *rcpt_replies = replies
        recipients = self.message.recipients
        self.refused = {to: reply for to, reply in zip(recipients, rcpt_replies, strict=False)
                        if reply[0] not in (250, 251)}
        deliverable = (mail_code == 250 and len(replies) == count
                       and len(self.refused) < len(recipients))
        code, text = replies[-1]  # DATA's reply, or the 421 that cut the replies short
        if code == 354 and deliverable:
            return self.refused
        if code == 354:  # with nobody to deliver to, a lone dot ends the DATA (RFC 2920 3.1)
            conn.send(b".\r\n")
            code, text = conn.getreply()
        if code == 421:
            conn.close()
        else:
            conn._rset()
        if mail_code != 250:
            raise smtplib.SMTPSenderRefused(mail_code, mail_text,
                                            self.message.envelope_sender or self.message.sender)
        if not deliverable:
            raise smtplib.SMTPRecipientsRefused(self.refused)
        raise smtplib.SMTPDataError(code, text)

    def stuffed(self) -> bytes:
        """The content as ``SMTP.data`` sends bytes: leading dots doubled, then CRLF.CRLF."""
        quoted = dot_stuffed(self.content)
        return (quoted if quoted.endswith(b"\r\n") else quoted + b"\r\n") + b".\r\n"

    def outcome(self, read: Refused | DeliveryError) -> SendResult | DeliveryError:
        """The message's outcome from what its final reply said (``settled(self.finish)``)."""
        return read if isinstance(read, DeliveryError) else accepted(self.message, read)

    def finish(self, conn: smtplib.SMTP) -> Refused:
        """Read the content's final reply: the refused recipients, or SMTPDataError."""
        code, text = conn.getreply()
        if code == 250:
            return self.refused
        if code == 421:
            conn.close()
        raise smtplib.SMTPDataError(code, text)


def settled(step: Callable[[smtplib.SMTP], Refused],
            conn: smtplib.SMTP) -> Refused | DeliveryError:
    """What ``step`` read, or the refusal as the engine's outcome; a lost connection is
    raised. A refused message leaves the connection usable (or closed, after a 421)."""
    try:
        return step(conn)
    except smtplib.SMTPServerDisconnected:
        raise
    except smtplib.SMTPException as err:
        return classified(err)


def utf8_option(message: OutboundEmail) -> list[str]:
    """SMTPUTF8 (RFC 6531) for a non-ASCII local part; a domain is sent in its ASCII form."""
    ascii_only = all(a.isascii() for a in [message.sender, *message.recipients])
    return [] if ascii_only else ["SMTPUTF8"]


def dsn_options(conn: smtplib.SMTP, message: OutboundEmail) -> tuple[list[str], list[str]]:
    if message.request_delivery_receipt and conn.has_extn("dsn"):
        return (["RET=HDRS", f"ENVID={_envid(message.message_id)}"],
                ["NOTIFY=SUCCESS,FAILURE,DELAY"])
    return [], []


def accepted(message: OutboundEmail, refused: Refused) -> SendResult:
    """Accepted for some recipients at least; the others are rejected (a 5xx may bounce)."""
    result = SendResult(provider_message_id=message.message_id)
    for address, (code, text) in refused.items():
        if code >= 500:
            result.rejected[address] = f"{code} {_text(text)}"
            if _hard_bounce(code, text):
                result.bounced.append(address)
        else:
            result.rejected[address] = f"{code} {_text(text)} (transient)"
    return result


def classified(err: OSError | smtplib.SMTPException) -> DeliveryError:
    """A refused message or a failed exchange as one of the engine's outcomes."""
    if isinstance(err, smtplib.SMTPRecipientsRefused):
        return _all_refused(err.recipients)
    if isinstance(err, smtplib.SMTPNotSupportedError):  # no SMTPUTF8: the same every time
        return PermanentError(f"SMTP server cannot take this address: {err}")
    if isinstance(err, smtplib.SMTPResponseException):
        kind = TransientError if 400 <= err.smtp_code < 500 else PermanentError
        return kind(f"SMTP {err.smtp_code}: {_text(err.smtp_error)}", status_code=err.smtp_code)
    return TransientError(f"SMTP connection failed: {err}")


def _all_refused(recipients: Refused) -> DeliveryError:
    codes = {code for code, _ in recipients.values()}
    detail = "; ".join(f"{a}: {c} {_text(t)}" for a, (c, t) in recipients.items())
    if all(code < 500 for code in codes):
        return TransientError(f"every recipient deferred: {detail}", status_code=min(codes))
    bounced = [a for a, (c, t) in recipients.items() if _hard_bounce(c, t)]
    if bounced and len(bounced) == len(recipients):
        return SuppressedError(f"every recipient bounced: {detail}", bounced,
                               status_code=max(codes))
    return PermanentError(f"every recipient refused: {detail}", status_code=max(codes))


def _command(*words: str) -> str:
    line = " ".join(words)
    if "\r" in line or "\n" in line:  # as SMTP.putcmd: no command smuggled in an address
        raise ValueError(f"SMTP command contains a line break: {line!r}")
    return f"{line}\r\n"


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _hard_bounce(code: int, text: bytes | str) -> bool:
    """550/551/553 and enhanced 5.1.x (bad mailbox) mean the address will never work."""
    message = _text(text)
    return code in (550, 551, 553) or message.startswith(("5.1.1", "5.1.2", "5.1.10"))


def _envid(message_id: str | None) -> str:
    return (message_id or "").strip("<>").replace("+", "2B").replace("=", "3D")[:100] or "herald"


def for_one(message: OutboundEmail, to: str) -> OutboundEmail:
    """``message`` as the transaction to ``to`` alone, with that recipient's MAIL FROM."""
    senders = message.envelope_senders or {}
    return dataclasses.replace(message, envelope_sender=senders.get(to, message.envelope_sender),
                               envelope_senders=None, envelope_recipients=[to])


def merged(outcomes: list[tuple[str, SendResult | DeliveryError]]) -> SendResult:
    """One message's result from its per-recipient transactions: accepted when any
    recipient was; the others rejected (a hard bounce listed to be suppressed). When none
    was, the error: a transient one if any (the message is tried again), else the first."""
    results = [o for _, o in outcomes if isinstance(o, SendResult)]
    errors = [(to, o) for to, o in outcomes if isinstance(o, DeliveryError)]
    if not results:
        transient = [e for _, e in errors if isinstance(e, TransientError)]
        raise (transient or [errors[0][1]])[0]
    merged = SendResult(provider_message_id=results[0].provider_message_id)
    for result in results:
        merged.rejected.update(result.rejected)
        merged.bounced.extend(result.bounced)
    for to, err in errors:
        transient = " (transient)" if isinstance(err, TransientError) else ""
        merged.rejected[to] = f"{err}{transient}"
        if isinstance(err, SuppressedError):
            merged.bounced.append(to)
    return merged
