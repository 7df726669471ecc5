"""SMTP provider: one kept-alive connection per worker, DSN, and clear outcome classes."""

from __future__ import annotations

import contextlib
import os
import smtplib
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import parse_qs, unquote, urlsplit

from channels.email import message_bytes
from engine.contracts import (
    DeliveryError,
    OutboundEmail,
    PermanentError,
    ProviderContext,
    SendResult,
    SuppressedError,
    TransientError,
)
from engine.hookspecs import hookimpl

TLS_MODES = ("none", "starttls", "ssl")


class SmtpProvider:
    """``smtp://[user:password@]host:port?tls=none|starttls|ssl[&timeout=S][&connections=N]``.

    ``connections`` (default 4) bounds the messages of one fan-out in flight at once.
    """

    channel = "email"

    def __init__(self, url: str, context: ProviderContext | None = None) -> None:
        parts = urlsplit(url)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        self.tls = query.get("tls", "none")
        if self.tls not in TLS_MODES:
            raise ValueError(f"smtp provider: tls must be one of {', '.join(TLS_MODES)}")
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (465 if self.tls == "ssl" else 25)
        self.user = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.timeout = float(query.get("timeout", 30))
        self.max_concurrency = max(1, int(query.get("connections", 4)))
        # One kept connection per sending thread (a fan-out sends from several at once).
        self._local = threading.local()
        self._all: list[smtplib.SMTP] = []
        self._lock = threading.Lock()

    @property
    def _connection(self) -> smtplib.SMTP | None:
        return getattr(self._local, "connection", None)

    def _tls_context(self) -> ssl.SSLContext:
        # Outbound TLS honours REQUESTS_CA_BUNDLE (operator contract), else the system CAs.
        return ssl.create_default_context(cafile=os.environ.get("REQUESTS_CA_BUNDLE") or None)

    def _connect(self) -> smtplib.SMTP:
        try:
            if self.tls == "ssl":
                conn: smtplib.SMTP = smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout,
                                                      context=self._tls_context())
            else:
                conn = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
                if self.tls == "starttls":
                    conn.starttls(context=self._tls_context())
            conn.ehlo_or_helo_if_needed()
            if self.user:
                conn.login(self.user, self.password or "")
        except smtplib.SMTPAuthenticationError as err:
            raise PermanentError(f"SMTP authentication failed: {err.smtp_code}",
                                 status_code=err.smtp_code) from None
        except (OSError, smtplib.SMTPException) as err:
            raise TransientError(
                f"cannot reach SMTP server {self.host}:{self.port}: {err}") from None
        return conn

    def _live_connection(self) -> smtplib.SMTP:
        connection = self._connection
        if connection is None:
            connection = self._local.connection = self._connect()
            with self._lock:
                self._all.append(connection)
        return connection

    def _forget(self) -> None:
        """Drop this thread's connection (closed by us or by the server)."""
        connection = self._connection
        self._local.connection = None
        if connection is not None:
            with self._lock:
                if connection in self._all:
                    self._all.remove(connection)
            with contextlib.suppress(OSError, smtplib.SMTPException):
                connection.quit()

    def close(self) -> None:
        """Close every kept connection (worker shutdown, tests)."""
        with self._lock:
            connections, self._all = self._all, []
        for connection in connections:
            with contextlib.suppress(OSError, smtplib.SMTPException):
                connection.quit()
        self._local = threading.local()

    def send(self, message: OutboundEmail) -> SendResult:
        reused = self._connection is not None
        try:
            return self._send(message)
        except _Dropped:
            if not reused:
                raise TransientError("SMTP server closed the connection") from None
        # A kept connection the server had timed out: reconnect once, then send.
        try:
            return self._send(message)
        except _Dropped:
            raise TransientError("SMTP server closed the connection") from None

    def send_many(self, messages: Iterable[OutboundEmail],
                  ) -> Iterator[SendResult | DeliveryError]:
        """Each message's result, or its DeliveryError, in order (a fan-out's messages).

        With PIPELINING a message's content leaves in the same write as the next message's
        MAIL, RCPT and DATA (RFC 2920 3.1 lets the content lead a group): one round trip a
        message instead of two. A message off that path goes through ``send``, as does any
        message whose connection was lost before its outcome was read.
        """
        held: _Envelope | None = None  # DATA answered 354: its content leads the next write
        for message in messages:
            try:
                conn = self._live_connection()
            except DeliveryError as err:  # nothing is held without a live connection
                yield err
                continue
            try:
                envelope = _Envelope.of(conn, message)
            except smtplib.SMTPNotSupportedError as err:  # this one never goes on the wire
                if held is not None:  # outcomes keep their order
                    yield self._flushed(conn, held)
                    held = None
                yield _classified(err)
                continue
            if envelope is None:  # the server does not pipeline: nothing is ever held
                yield _outcome(self.send, message)
                continue
            finished: SendResult | DeliveryError | None = None
            try:
                conn.send((held.stuffed() if held else b"") + envelope.commands)
                if held is not None:
                    finished = _settled(held.message, held.finish, conn)
                    if conn.sock is None:  # closed on a 421: the commands behind were not read
                        raise smtplib.SMTPServerDisconnected("closed on a 421")
                opened = _settled(envelope.message, envelope.open, conn)
            except (OSError, smtplib.SMTPServerDisconnected):
                self._forget()
                if finished is not None:
                    yield finished
                elif held is not None:
                    yield _outcome(self.send, held.message)
                held = None
                yield _outcome(self.send, message)
                continue
            if finished is not None:
                yield finished
            held = None
            if isinstance(opened, DeliveryError):
                yield opened
            else:
                held = envelope
        if held is not None:
            yield self._flushed(conn, held)

    def _flushed(self, conn: smtplib.SMTP, held: _Envelope) -> SendResult | DeliveryError:
        """The held message's content on its own, and its outcome."""
        try:
            conn.send(held.stuffed())
            return _settled(held.message, held.finish, conn)
        except (OSError, smtplib.SMTPServerDisconnected):
            self._forget()
            return _outcome(self.send, held.message)

    def _send(self, message: OutboundEmail) -> SendResult:
        conn = self._live_connection()
        try:
            envelope = _Envelope.of(conn, message)
            if envelope is not None:
                conn.send(envelope.commands)
                envelope.open(conn)
                conn.send(envelope.stuffed())
                refused = envelope.finish(conn)
            else:  # one command a round trip; smtplib refuses SMTPUTF8 unless offered
                mail_options, rcpt_options = _dsn_options(conn, message)
                refused = conn.sendmail(message.sender, message.recipients,
                                        message_bytes(message.mime),
                                        mail_options=mail_options + _utf8_option(message),
                                        rcpt_options=rcpt_options)
        except smtplib.SMTPServerDisconnected:
            self._forget()
            raise _Dropped() from None
        except (smtplib.SMTPRecipientsRefused, smtplib.SMTPNotSupportedError) as err:
            raise _classified(err) from None  # the connection is still in step
        except (OSError, smtplib.SMTPException) as err:
            self._forget()
            raise _classified(err) from None
        return _result(message, refused)


class _Dropped(Exception):
    """The kept connection was gone before the message could be sent."""


Refused = dict[str, tuple[int, bytes]]


class _Envelope:
    """One message's exchange with PIPELINING (RFC 2920): MAIL, every RCPT and DATA in one
    write, their replies read in order, then the content and its final reply."""

    def __init__(self, conn: smtplib.SMTP, message: OutboundEmail, content: bytes) -> None:
        self.message = message
        self.content = content
        mail_options, rcpt_options = _dsn_options(conn, message)
        size = [f"SIZE={len(content)}"] if conn.has_extn("size") else []
        utf8 = _utf8_option(message)
        self.commands = "".join([
            _command(f"MAIL FROM:{smtplib.quoteaddr(message.sender)}", *size, *utf8,
                     *mail_options),
            *(_command(f"RCPT TO:{smtplib.quoteaddr(to)}", *rcpt_options)
              for to in message.recipients),
            _command("DATA")]).encode("utf-8" if utf8 else "ascii")
        self.refused: Refused = {}

    @classmethod
    def of(cls, conn: smtplib.SMTP, message: OutboundEmail) -> _Envelope | None:
        """None when the server does not pipeline (smtplib's own exchange then); raises
        SMTPNotSupportedError for an address that needs SMTPUTF8 the server lacks."""
        if not conn.has_extn("pipelining"):
            return None
        if _utf8_option(message) and not conn.has_extn("smtputf8"):
            raise smtplib.SMTPNotSupportedError("SMTPUTF8 not supported by server")
        return cls(conn, message, message_bytes(message.mime))

    def open(self, conn: smtplib.SMTP) -> Refused:
        """Read the commands' replies: the refused recipients when DATA answered 354 with a
        recipient accepted; otherwise end the transaction and raise as ``SMTP.sendmail``."""
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
            raise smtplib.SMTPSenderRefused(mail_code, mail_text, self.message.sender)
        if not deliverable:
            raise smtplib.SMTPRecipientsRefused(self.refused)
        raise smtplib.SMTPDataError(code, text)

    def stuffed(self) -> bytes:
        """The content as ``SMTP.data`` sends bytes: leading dots doubled, then CRLF.CRLF."""
        quoted = smtplib._quote_periods(self.content)
        return (quoted if quoted.endswith(b"\r\n") else quoted + b"\r\n") + b".\r\n"

    def finish(self, conn: smtplib.SMTP) -> Refused:
        """Read the content's final reply: the refused recipients, or SMTPDataError."""
        code, text = conn.getreply()
        if code == 250:
            return self.refused
        if code == 421:
            conn.close()
        raise smtplib.SMTPDataError(code, text)


def _settled(message: OutboundEmail, step: Callable[[smtplib.SMTP], Refused],
             conn: smtplib.SMTP) -> SendResult | DeliveryError:
    """What ``step`` read, as the message's outcome; a lost connection is raised. A refused
    message leaves the connection usable (or closed, after a 421)."""
    try:
        return _result(message, step(conn))
    except smtplib.SMTPServerDisconnected:
        raise
    except smtplib.SMTPException as err:
        return _classified(err)


def _utf8_option(message: OutboundEmail) -> list[str]:
    """SMTPUTF8 (RFC 6531) for a non-ASCII local part; a domain is sent in its ASCII form."""
    ascii_only = all(a.isascii() for a in [message.sender, *message.recipients])
    return [] if ascii_only else ["SMTPUTF8"]


def _dsn_options(conn: smtplib.SMTP, message: OutboundEmail) -> tuple[list[str], list[str]]:
    if message.request_delivery_receipt and conn.has_extn("dsn"):
        return (["RET=HDRS", f"ENVID={_envid(message.message_id)}"],
                ["NOTIFY=SUCCESS,FAILURE,DELAY"])
    return [], []


def _result(message: OutboundEmail, refused: Refused) -> SendResult:
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


def _classified(err: OSError | smtplib.SMTPException) -> DeliveryError:
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


def _outcome(send: Callable[[OutboundEmail], SendResult],
             message: OutboundEmail) -> SendResult | DeliveryError:
    try:
        return send(message)
    except DeliveryError as err:
        return err


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


@hookimpl
def register_providers(register) -> None:
    register("smtp", SmtpProvider)
