"""SMTP provider: one kept-alive connection per worker, DSN, and clear outcome classes."""

from __future__ import annotations

import contextlib
import os
import smtplib
import ssl
import threading
from urllib.parse import parse_qs, unquote, urlsplit

from channels.email import message_bytes
from engine.contracts import (
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

    def _send(self, message: OutboundEmail) -> SendResult:
        conn = self._live_connection()
        mail_options: list[str] = []
        rcpt_options: list[str] = []
        if message.request_delivery_receipt and conn.has_extn("dsn"):
            mail_options = ["RET=HDRS", f"ENVID={_envid(message.message_id)}"]
            rcpt_options = ["NOTIFY=SUCCESS,FAILURE,DELAY"]
        envelope = [message.sender, *message.recipients]
        try:
            if all(address.isascii() for address in envelope):
                content = message_bytes(message.mime)
                if conn.has_extn("pipelining"):
                    refused = _pipelined_sendmail(conn, message.sender, message.recipients,
                                                  content, mail_options, rcpt_options)
                else:
                    refused = conn.sendmail(message.sender, message.recipients, content,
                                            mail_options=mail_options, rcpt_options=rcpt_options)
            else:  # smtplib negotiates SMTPUTF8 for an international address
                refused = conn.send_message(message.mime, from_addr=message.sender,
                                            to_addrs=message.recipients,
                                            mail_options=mail_options,
                                            rcpt_options=rcpt_options)
        except smtplib.SMTPServerDisconnected:
            self._forget()
            raise _Dropped() from None
        except smtplib.SMTPRecipientsRefused as err:
            return self._all_refused(err.recipients)
        except smtplib.SMTPResponseException as err:
            self._forget()
            if 400 <= err.smtp_code < 500:
                raise TransientError(f"SMTP {err.smtp_code}: {_text(err.smtp_error)}",
                                     status_code=err.smtp_code) from None
            raise PermanentError(f"SMTP {err.smtp_code}: {_text(err.smtp_error)}",
                                 status_code=err.smtp_code) from None
        except (OSError, smtplib.SMTPException) as err:
            self._forget()
            raise TransientError(f"SMTP connection failed: {err}") from None
        result = SendResult(provider_message_id=message.message_id)
        for address, (code, text) in refused.items():
            if code >= 500:
                result.rejected[address] = f"{code} {_text(text)}"
                if _hard_bounce(code, text):
                    result.bounced.append(address)
            else:
                result.rejected[address] = f"{code} {_text(text)} (transient)"
        return result

    def _all_refused(self, recipients: dict[str, tuple[int, bytes]]) -> SendResult:
        codes = {code for code, _ in recipients.values()}
        detail = "; ".join(f"{a}: {c} {_text(t)}" for a, (c, t) in recipients.items())
        if all(code < 500 for code in codes):
            raise TransientError(f"every recipient deferred: {detail}", status_code=min(codes))
        bounced = [a for a, (c, t) in recipients.items() if _hard_bounce(c, t)]
        if bounced and len(bounced) == len(recipients):
            raise SuppressedError(f"every recipient bounced: {detail}", bounced,
                                  status_code=max(codes))
        raise PermanentError(f"every recipient refused: {detail}", status_code=max(codes))


class _Dropped(Exception):
    """The kept connection was gone before the message could be sent."""


def _pipelined_sendmail(conn: smtplib.SMTP, sender: str, recipients: list[str], data: bytes,
                        mail_options: list[str], rcpt_options: list[str],
                        ) -> dict[str, tuple[int, bytes]]:
    """``SMTP.sendmail`` with MAIL, every RCPT and DATA in one write (RFC 2920 PIPELINING):
    two round trips per message instead of four, same return value and exceptions."""
    size = [f"SIZE={len(data)}"] if conn.has_extn("size") else []
    commands = [_command(f"MAIL FROM:{smtplib.quoteaddr(sender)}", *size, *mail_options),
                *(_command(f"RCPT TO:{smtplib.quoteaddr(to)}", *rcpt_options)
                  for to in recipients),
                _command("DATA")]
    conn.send("".join(commands))
    replies = [conn.getreply()]  # one per command, in order, so the stream stays in sync
    while len(replies) < len(commands) and replies[-1][0] != 421:  # 421: server closing
        replies.append(conn.getreply())
    (mail_code, mail_text), *rcpt_replies = replies
    refused = {to: reply for to, reply in zip(recipients, rcpt_replies, strict=False)
               if reply[0] not in (250, 251)}
    deliverable = (mail_code == 250 and len(replies) == len(commands)
                   and len(refused) < len(recipients))
    code, text = replies[-1]  # DATA's reply, or the 421 that cut the replies short
    if code == 354:  # with nobody to deliver to, a lone dot ends the DATA (RFC 2920 3.1)
        conn.send(_dot_stuffed(data) if deliverable else b".\r\n")
        code, text = conn.getreply()
        if code == 250 and deliverable:
            return refused
    if code == 421:
        conn.close()
    else:
        conn._rset()
    if mail_code != 250:
        raise smtplib.SMTPSenderRefused(mail_code, mail_text, sender)
    if not deliverable:
        raise smtplib.SMTPRecipientsRefused(refused)
    raise smtplib.SMTPDataError(code, text)


def _command(*words: str) -> str:
    line = " ".join(words)
    if "\r" in line or "\n" in line:  # as SMTP.putcmd: no command smuggled in an address
        raise ValueError(f"SMTP command contains a line break: {line!r}")
    return f"{line}\r\n"


def _dot_stuffed(data: bytes) -> bytes:
    """The content as ``SMTP.data`` sends bytes: leading dots doubled, then CRLF.CRLF."""
    quoted = smtplib._quote_periods(data)
    return (quoted if quoted.endswith(b"\r\n") else quoted + b"\r\n") + b".\r\n"


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
