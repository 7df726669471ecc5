"""The SMTP provider's deadline is the message's, not each read's; its pool of connections is
kept across messages, reset between them and bounded; a silent relay is said to be silent."""

from __future__ import annotations

import contextlib
import socket
import threading

import pytest

from engine.plugins.contracts import TransientError
from plugins.smtp import SmtpProvider
from tests.plugins.test_smtp import factories_message


class _Relay:
    """A TCP server that is not a working SMTP server: ``silent`` never sends a byte;
    ``dribbling`` greets, then answers EHLO one byte at a time, each well inside any
    per-read timeout, for as long as the client stays."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.hung_up = threading.Event()  # the client closed its side
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.listener.accept()
            with conn:
                if self.behaviour == "dribbling":
                    conn.sendall(b"220 slow.test ESMTP\r\n250-")  # then EHLO's, a byte a time
                conn.settimeout(0.2)
                while not self.stop.is_set():
                    if self.behaviour == "dribbling":
                        conn.sendall(b"x")
                    try:
                        if conn.recv(1024) == b"":
                            self.hung_up.set()
                            return
                    except TimeoutError:
                        continue

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@pytest.fixture
def relay(request):
    server = _Relay(request.param)
    yield server
    server.close()


@pytest.mark.parametrize("relay", ["silent"], indirect=True)
def test_a_relay_that_never_sent_a_byte_is_recorded_as_no_answer(relay):
    provider = SmtpProvider(f"smtp://127.0.0.1:{relay.port}?tls=none&timeout=1")
    with pytest.raises(TransientError) as raised:
        provider.send(factories_message(to=["ada@example.net"]))
    assert str(raised.value) == (f"no answer came from SMTP server 127.0.0.1:{relay.port} "
                                 "within 1 s")
    assert raised.value.reason == "timed out"
    assert "answered" not in str(raised.value)


@pytest.mark.parametrize("relay", ["dribbling"], indirect=True)
def test_a_relay_that_dribbles_its_answer_is_abandoned_at_the_message_deadline(relay):
    # Each byte comes well inside the timeout, so only a deadline for the whole message
    # ends this; a per-read timeout would wait for the pytest timeout.
    provider = SmtpProvider(f"smtp://127.0.0.1:{relay.port}?tls=none&timeout=1")
    with pytest.raises(TransientError) as raised:
        provider.send(factories_message(to=["ada@example.net"]))
    assert "answered, then not within 1 s" in str(raised.value)
    assert relay.hung_up.wait(10), "the connection was left open"


def test_the_pool_keeps_connections_across_messages_and_resets_between(smtp):
    provider = SmtpProvider(f"smtp://127.0.0.1:{smtp.port}?tls=none&pool=2")
    for to in ("ada@example.net", "bob@example.net", "cy@example.net"):
        provider.send(factories_message(to=[to]))
    assert len(provider._idle) == 1  # one connection, kept throughout
    commands = b"".join(smtp.reads)
    assert commands.count(b"ehlo") + commands.count(b"EHLO") == 1
    assert commands.count(b"RSET\r\nMAIL FROM:") == 2  # each reuse, RSET in the same write
    assert [a.rcpt_tos for a in smtp.received] == [["ada@example.net"], ["bob@example.net"],
                                                   ["cy@example.net"]]
    provider.close()


def test_a_kept_connection_the_server_dropped_is_reopened(smtp):
    provider = SmtpProvider(f"smtp://127.0.0.1:{smtp.port}?tls=none")
    provider.send(factories_message(to=["ada@example.net"]))
    provider._idle[0].sock.shutdown(socket.SHUT_RDWR)  # as a server that timed it out
    provider.send(factories_message(to=["bob@example.net"]))
    assert [a.rcpt_tos for a in smtp.received] == [["ada@example.net"], ["bob@example.net"]]
    provider.close()


def test_the_pool_bounds_the_connections_in_use_at_once(smtp):
    smtp.delay = 0.3
    provider = SmtpProvider(f"smtp://127.0.0.1:{smtp.port}?tls=none&pool=2")
    most = [0]
    in_use = [0]
    lock = threading.Lock()
    real = provider._take

    def counted():
        taken = real()
        with lock:
            in_use[0] += 1
            most[0] = max(most[0], in_use[0])
        return taken

    def give_back(conn):
        with lock:
            in_use[0] -= 1
        SmtpProvider._give_back(provider, conn)

    provider._take = counted
    provider._give_back = give_back
    threads = [threading.Thread(target=provider.send,
                                args=(factories_message(to=[f"r{i}@example.net"]),))
               for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(smtp.received) == 6
    assert most[0] == 2
    assert len(provider._idle) <= 2
    provider.close()


def test_pool_must_be_a_whole_number():
    with pytest.raises(ValueError, match="pool"):
        SmtpProvider("smtp://127.0.0.1:25?pool=many")


class _CountingSocket(socket.socket):
    """A connected socket that counts how often its timeout is set (each time a system
    call that releases the interpreter lock)."""

    settings = 0

    def settimeout(self, value):
        type(self).settings += 1
        super().settimeout(value)


def test_a_stream_sets_its_socket_timeout_when_the_deadline_moved_not_for_each_read(smtp):
    # Each message has its own deadline, and each read and write gets only the time left
    # to it; a stream of messages sent within moments of each other leaves that time all
    # but unchanged, so the socket keeps the timeout it has instead of a system call per
    # read and write (five a message).
    provider = SmtpProvider(f"smtp://127.0.0.1:{smtp.port}?tls=none")

    def connect(host, port, timeout):
        plain = socket.create_connection((host, port), timeout)
        return _CountingSocket(fileno=plain.detach())

    provider._open_socket = connect
    _CountingSocket.settings = 0
    messages = [factories_message(to=[f"r{i}@example.net"]) for i in range(20)]
    results = list(provider.send_many(iter(messages)))
    assert len(results) == 20 and len(smtp.received) == 20
    assert _CountingSocket.settings < 10  # one per read and write before: 102
    provider.close()
