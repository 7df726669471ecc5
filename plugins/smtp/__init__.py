"""SMTP provider: a pool of kept-alive connections per worker process, a deadline per
message, DSN, and clear outcome classes."""

from __future__ import annotations

import contextlib
import os
import smtplib
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import parse_qs, unquote, urlsplit

from engine.plugin_api import (
    DeliveryError,
    OutboundEmail,
    PermanentError,
    ProviderContext,
    SendResult,
    TransientError,
    hookimpl,
)
from plugins.smtp.clients import (
    OutOfTime,
    Smtp,
    SmtpSsl,
    failure_reason,
    message_deadline,
    plain_connect,
    quit_and_close,
)
from plugins.smtp.exchange import (
    Envelope,
    accepted,
    classified,
    dsn_options,
    for_one,
    merged,
    settled,
    utf8_option,
)
from plugins.smtp.signing import wire_bytes

TLS_MODES = ("none", "starttls", "ssl")
MAX_TIMEOUT = 30.0  # one slow server holds a delivery slot at most this long a message
DEFAULT_POOL = 32  # connections per provider and worker process: the worker's concurrency

class SmtpProvider:
    """``smtp://[user:password@]host:port?tls=none|starttls|ssl[&timeout=S][&connections=N]
    [&pool=N]``.

    ``timeout`` (default and most 30 s) is each message's deadline, its whole exchange;
    ``connections`` (default 4) bounds the messages of one fan-out in flight at once;
    ``pool`` (default 32) the connections open to the server from one worker process, kept
    across notifications (a message waits, within its deadline, for one to come free).
    """

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
        refused = ValueError("smtp provider: timeout must be a positive number of seconds "
                             f"(at most {MAX_TIMEOUT:g}) and connections and pool whole "
                             "numbers")
        try:
            self.timeout = float(query.get("timeout", 30))
            self.max_concurrency = max(1, int(query.get("connections", 4)))
            self.pool = max(1, int(query.get("pool", DEFAULT_POOL)))
        except ValueError:
            raise refused from None
        if not 0 < self.timeout <= MAX_TIMEOUT:  # nan too: a socket refuses it at the first send
            raise refused
        egress = context.egress if context is not None else None
        self._open_socket = egress.connect if egress is not None else plain_connect
        # Kept connections not in use, the most recent last: a message or a fan-out's lane
        # takes one for as long as it sends, then gives it back while it is in step. At most
        # ``connections`` are kept (a fan-out's lanes come and go; their connections stay).
        self._idle: list[smtplib.SMTP] = []
        self._lock = threading.Lock()
        self._in_use = threading.BoundedSemaphore(self.pool)  # a send or a fan-out's lane
        self._holding = threading.local()  # this thread holds one already (a lane's send)

    @property
    def _connection(self) -> smtplib.SMTP | None:
        """The kept connection the next message takes, if any."""
        with self._lock:
            return self._idle[-1] if self._idle else None

    def _tls_context(self) -> ssl.SSLContext:
        # Outbound TLS honours REQUESTS_CA_BUNDLE (operator contract), else the system CAs.
        return ssl.create_default_context(cafile=os.environ.get("REQUESTS_CA_BUNDLE") or None)

    def _connect(self) -> smtplib.SMTP:
        conn: Smtp | SmtpSsl
        if self.tls == "ssl":
            conn = SmtpSsl(self.timeout, self._tls_context(), self._open_socket)
        else:
            conn = Smtp(self.timeout, self._open_socket)
        conn._host = self.host  # for the TLS handshake's server name, as smtplib sets it
        try:
            code, greeting = conn.connect(self.host, self.port)
            if code != 220:
                conn.close()
                raise smtplib.SMTPConnectError(code, greeting)
            if self.tls == "starttls":
                conn.starttls(context=self._tls_context())
            conn.ehlo_or_helo_if_needed()
            if self.user:
                conn.login(self.user, self.password or "")
        except DeliveryError:
            raise  # the engine refused the host (a workspace's own provider)
        except OutOfTime:
            conn.close()
            raise self._no_answer(conn.heard) from None
        except smtplib.SMTPAuthenticationError as err:
            raise PermanentError(f"SMTP authentication failed: {err.smtp_code}",
                                 status_code=err.smtp_code, reason="authentication") from None
        except (OSError, smtplib.SMTPException) as err:
            # A server that answered (a greeting, a refusal, a TLS handshake) was reached:
            # saying otherwise sends the reader to check a network that works.
            answered = isinstance(err, smtplib.SMTPException | ssl.SSLError)
            where = f"SMTP server {self.host}:{self.port}"
            what = (f"{where} answered, but the session failed" if answered
                    else f"cannot reach {where}")
            raise TransientError(f"{what}: {err}", reason=failure_reason(err)) from None
        return conn

    def _no_answer(self, heard: bool) -> TransientError:
        """A server that let the message's deadline pass: silent from the start (a tarpit,
        a firewall that drops), or answering and then no more."""
        where = f"SMTP server {self.host}:{self.port}"
        if not heard:
            return TransientError(f"no answer came from {where} within {self.timeout:g} s",
                                  reason="timed out")
        return TransientError(f"{where} answered, then not within {self.timeout:g} s: the "
                              "message was abandoned, to be tried again", reason="timed out")

    @contextlib.contextmanager
    def _connection_slot(self) -> Iterator[None]:
        """One of the ``pool`` connections this process may have in use (a thread that holds
        one already, a fan-out's lane sending one message on its own, takes no other)."""
        if getattr(self._holding, "depth", 0):
            self._holding.depth += 1
            try:
                yield
            finally:
                self._holding.depth -= 1
            return
        if not self._in_use.acquire(timeout=self._wait_left()):
            raise TransientError(f"every one of the {self.pool} connections to SMTP server "
                                 f"{self.host}:{self.port} stayed busy", reason="timed out")
        self._holding.depth = 1
        try:
            yield
        finally:
            self._holding.depth = 0
            self._in_use.release()

    def _wait_left(self) -> float:
        deadline = message_deadline.get()
        return self.timeout if deadline is None else max(0.0, deadline - time.monotonic())

    def _take(self) -> tuple[smtplib.SMTP, bool]:
        """A kept connection (True) or a new one (False); raises a DeliveryError."""
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._connect(), False

    def _give_back(self, conn: smtplib.SMTP) -> None:
        """Keep a connection that is in step for the next message; close any other."""
        if conn.sock is not None:
            with self._lock:
                if len(self._idle) < self.pool:
                    self._idle.append(conn)
                    return
        quit_and_close(conn)

    def close(self) -> None:
        """Close every kept connection (worker shutdown, tests)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            quit_and_close(conn)

    def send(self, message: OutboundEmail) -> SendResult:
        """Send ``message`` within its deadline; with one envelope sender per recipient
        (VERP), one transaction per recipient on the same connection, the outcomes merged
        as one message's."""
        token = message_deadline.set(time.monotonic() + self.timeout)
        try:
            with self._connection_slot():
                if message.envelope_senders and len(message.recipients) > 1:
                    return merged([(to, _outcome(self._send_one, for_one(message, to)))
                                    for to in message.recipients])
                return self._send_one(message)
        finally:
            message_deadline.reset(token)

    def _send_one(self, message: OutboundEmail) -> SendResult:
        conn, reused = self._take()
        try:
            return self._sent(conn, message, reset=reused)
        except _Dropped:
            if not reused:
                raise TransientError("SMTP server closed the connection") from None
        # A kept connection the server had timed out: a new one, once.
        try:
            return self._sent(self._connect(), message)
        except _Dropped:
            raise TransientError("SMTP server closed the connection") from None

    def send_many(self, messages: Iterable[OutboundEmail],
                  ) -> Iterator[SendResult | DeliveryError]:
        """Each message's result, or its DeliveryError, in order (a fan-out's lane).

        With PIPELINING a message's content leaves in the same write as the next message's
        MAIL, RCPT and DATA (RFC 2920 3.1 lets the content lead a group): one round trip a
        message instead of two, on one connection. A message whose connection was lost
        before its outcome was read goes through ``send``, as does every message when the
        server does not pipeline.
        """
        with self._connection_slot():
            yield from self._stream(messages)

    def _stream(self, messages: Iterable[OutboundEmail],
                ) -> Iterator[SendResult | DeliveryError]:
        conn: smtplib.SMTP | None = None
        held: Envelope | None = None  # DATA answered 354: its content leads the next write
        try:
            for message in messages:
                message_deadline.set(time.monotonic() + self.timeout)  # this message's own
                if message.envelope_senders and len(message.recipients) > 1:
                    if held is not None and conn is not None:  # outcomes keep their order
                        yield self._flushed(conn, held)
                        held = None
                    yield _outcome(self.send, message)
                    continue
                if conn is None:
                    try:
                        conn, _ = self._take()
                    except DeliveryError as err:
                        yield err
                        continue
                try:
                    envelope = Envelope.of(conn, message)
                except smtplib.SMTPNotSupportedError as err:  # it never goes on the wire
                    if held is not None:  # outcomes keep their order
                        yield self._flushed(conn, held)
                        held = None
                    yield classified(err)
                    continue
                if envelope is None:  # the server does not pipeline: nothing is ever held
                    self._give_back(conn)  # for ``send`` to take
                    conn = None
                    yield _outcome(self.send, message)
                    continue
                finished: SendResult | DeliveryError | None = None
                try:
                    conn.send((held.stuffed() if held else b"") + envelope.commands)
                    if held is not None:
                        finished = held.outcome(settled(held.finish, conn))
                        if conn.sock is None:  # closed on a 421: the commands behind were lost
                            raise smtplib.SMTPServerDisconnected("closed on a 421")
                    opened = settled(envelope.open, conn)
                except (OSError, smtplib.SMTPServerDisconnected):
                    conn.close()
                    conn = None
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
            if held is not None and conn is not None:
                yield self._flushed(conn, held)
                held = None
        finally:
            if conn is not None:
                if held is None:
                    self._give_back(conn)
                else:  # abandoned with a content due: a QUIT would be read as content
                    conn.close()

    def _flushed(self, conn: smtplib.SMTP, held: Envelope) -> SendResult | DeliveryError:
        """The held message's content on its own, and its outcome."""
        try:
            conn.send(held.stuffed())
            return held.outcome(settled(held.finish, conn))
        except (OSError, smtplib.SMTPServerDisconnected):
            conn.close()
            return _outcome(self.send, held.message)

    def _sent(self, conn: smtplib.SMTP, message: OutboundEmail,
              reset: bool = False) -> SendResult:
        """Send on ``conn``, given back when it is still in step; _Dropped when the server
        had closed it. ``reset``: a kept connection, RSET first (in the same write when
        the server pipelines), so a server that dropped it is found before the message."""
        try:
            envelope = Envelope.of(conn, message, reset=reset)
            if envelope is None and reset and conn.rset()[0] != 250:
                raise smtplib.SMTPServerDisconnected("RSET refused")
            if envelope is not None:
                conn.send(envelope.commands)
                envelope.open(conn)
                conn.send(envelope.stuffed())
                refused = envelope.finish(conn)
            else:  # one command a round trip; smtplib refuses SMTPUTF8 unless offered
                mail_options, rcpt_options = dsn_options(conn, message)
                refused = conn.sendmail(message.envelope_sender or message.sender,
                                        message.recipients, wire_bytes(message),
                                        mail_options=mail_options + utf8_option(message),
                                        rcpt_options=rcpt_options)
        except OutOfTime:
            conn.close()
            raise self._no_answer(getattr(conn, "heard", True)) from None
        except smtplib.SMTPServerDisconnected:
            conn.close()
            raise _Dropped() from None
        except (smtplib.SMTPRecipientsRefused, smtplib.SMTPNotSupportedError) as err:
            self._give_back(conn)  # still in step
            raise classified(err) from None
        except smtplib.SMTPResponseException as err:
            quit_and_close(conn)  # refused at the server's word: leave politely
            raise classified(err) from None
        except (OSError, smtplib.SMTPException) as err:
            conn.close()
            raise classified(err) from None
        self._give_back(conn)
        return accepted(message, refused)


def _outcome(send: Callable[[OutboundEmail], SendResult],
             message: OutboundEmail) -> SendResult | DeliveryError:
    try:
        return send(message)
    except DeliveryError as err:
        return err


class _Dropped(Exception):
    """The kept connection was gone before the message could be sent."""


@hookimpl
def register_providers(register) -> None:
    register("smtp", SmtpProvider)
