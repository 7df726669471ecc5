"""smtplib's clients as the SMTP provider uses them: the socket opened by the engine's egress,
and every step of a message's exchange given only the time left to its deadline."""

from __future__ import annotations

import contextlib
import io
import smtplib
import socket
import ssl
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

# When the message being sent must be finished (time.monotonic()): every read and write
# of its exchange gets only the time left, so a server that sends a byte now and then, or
# nothing at all, holds a delivery slot for the provider's timeout, not for ever.
message_deadline: ContextVar[float | None] = ContextVar("smtp_message_deadline", default=None)


class OutOfTime(TimeoutError):
    """The message's deadline passed while waiting for the server."""


def _timed_out(err: BaseException) -> bool:
    cause: BaseException | None = err
    while cause is not None:  # smtplib wraps a read that timed out as a disconnection
        if isinstance(cause, TimeoutError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


# How far a socket's timeout may be from the time left to the message before it is set
# again, as a share of the provider's timeout: setting it is a system call that releases
# the interpreter lock, and a fan-out's stream, a message every few milliseconds each with
# its own deadline, would otherwise make five a message for a time left that moved by
# milliseconds. A read or write thus ends at most this much past (or before) the deadline.
ARM_SLACK = 0.01


class _Deadlined:
    """Mixed into smtplib's clients: each step armed with the time left to the message, and
    whether the server ever said anything (``heard``)."""

    heard = False
    sock: socket.socket | None
    file: Any
    timeout: float
    _armed: tuple[socket.socket, float] | None = None  # the socket and the timeout it has

    def _left(self) -> float:
        deadline = message_deadline.get()
        if deadline is None:
            return self.timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise OutOfTime("the message ran out of time")
        return min(left, self.timeout)

    def _arm(self) -> None:
        if self.sock is not None:
            self._arm_socket(self.sock)

    def _arm_socket(self, sock: socket.socket) -> None:
        """Give ``sock`` the time left to the message, unless it has about that already."""
        left = self._left()
        armed = self._armed
        if armed is None or armed[0] is not sock or \
                abs(armed[1] - left) > ARM_SLACK * self.timeout:
            sock.settimeout(left)
            self._armed = (sock, left)

    def send(self, s) -> None:
        self._arm()
        super().send(s)  # type: ignore[misc]

    def getreply(self) -> tuple[int, bytes]:
        if self.file is None and self.sock is not None:  # smtplib would make a plain one
            self.file = io.BufferedReader(_DeadlineReader(self))
        try:
            reply = super().getreply()  # type: ignore[misc]
        except smtplib.SMTPServerDisconnected as err:
            if _timed_out(err):
                raise OutOfTime(str(err)) from err
            raise
        self.heard = True
        return reply


class _DeadlineReader(io.RawIOBase):
    """The replies' reader: every receive gets only the time left to the message, so a
    server that sends a byte now and then cannot stretch one reply past the deadline."""

    def __init__(self, conn: _Deadlined) -> None:
        self.conn = conn

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        sock = self.conn.sock
        if sock is None:
            raise OSError("the connection is closed")
        self.conn._arm_socket(sock)
        return sock.recv_into(buffer)


class Smtp(_Deadlined, smtplib.SMTP):
    """smtplib's client, its socket opened by ``connect`` (the engine's egress: a
    workspace's own provider reaches only allowed addresses, pinned)."""

    def __init__(self, timeout: float,
                 connect: Callable[[str, int, float | None], socket.socket]) -> None:
        self._herald_connect = connect
        super().__init__(timeout=timeout)  # no host: ``connect`` opens it, its deadline armed

    def _get_socket(self, host, port, timeout):
        return self._herald_connect(host, port, self._left())


class SmtpSsl(_Deadlined, smtplib.SMTP_SSL):
    """As _Smtp, over implicit TLS (the certificate checked for the host name)."""

    def __init__(self, timeout: float, context: ssl.SSLContext,
                 connect: Callable[[str, int, float | None], socket.socket]) -> None:
        self._herald_connect = connect
        super().__init__(timeout=timeout, context=context)

    def _get_socket(self, host, port, timeout):
        sock = self._herald_connect(host, port, self._left())
        return self.context.wrap_socket(sock, server_hostname=self._host)


def plain_connect(host: str, port: int, timeout: float | None) -> socket.socket:
    """The operator's own setting: trusted, connected as smtplib would."""
    return socket.create_connection((host, port), timeout)


def failure_reason(err: BaseException) -> str:
    """A short fixed phrase for a failed connection: what a page may show (never the
    server's words, which may be any service's banner)."""
    if isinstance(err, ssl.SSLError):
        return "TLS"
    cause: BaseException | None = err
    while cause is not None:  # smtplib wraps a read that timed out as a disconnection
        if isinstance(cause, TimeoutError):
            return "timed out"
        cause = cause.__cause__ or cause.__context__
    if isinstance(err, TimeoutError):
        return "timed out"
    if isinstance(err, ConnectionRefusedError):
        return "connection refused"
    if isinstance(err, smtplib.SMTPException):
        return "not an SMTP server, or it refused the session"
    return "network error"


def quit_and_close(conn: smtplib.SMTP) -> None:
    """QUIT, then close (smtplib skips the close when the QUIT fails)."""
    with contextlib.suppress(OSError, smtplib.SMTPException):
        conn.quit()
    conn.close()
