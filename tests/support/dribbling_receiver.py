"""A real HTTPS receiver that answers one byte at a time: in its TLS handshake, its headers
or its body, each byte well inside any per-read timeout, for as long as it is let."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time

import trustme

HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"


class DribblingReceiver:
    """``phase`` is "handshake", "headers" or "body"; ``ran_out`` is set only when the
    receiver itself stopped, after ``limit`` seconds, and not because the client hung up."""

    def __init__(self, ca: trustme.CA, phase: str, *, interval: float = 0.05,
                 limit: float = 4.0, names: tuple[str, ...] = ("hook.test", "localhost")):
        self.phase, self.interval, self.limit = phase, interval, limit
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert(*names).configure_cert(self.context)
        self.ran_out = threading.Event()
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        accepting = threading.Thread(target=self._accept, daemon=True)
        accepting.start()
        self._threads.append(accepting)

    def url(self, path: str = "/hook", host: str = "hook.test") -> str:
        return f"https://{host}:{self.port}{path}"

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):  # shutdown wakes accept(); close() alone does not
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for thread in list(self._threads):
            thread.join(timeout=self.limit + 5)

    def __enter__(self) -> DribblingReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _dribble(self, conn: socket.socket | ssl.SSLSocket, data: bytes | None) -> None:
        """Send ``data`` (or "a" forever) one byte per interval until the limit runs out."""
        end = time.monotonic() + self.limit
        index = 0
        while not self._stop.is_set():
            if time.monotonic() >= end:
                self.ran_out.set()
                return
            byte = data[index:index + 1] if data is not None else b"a"
            if not byte:
                return
            conn.sendall(byte)
            index += 1
            self._stop.wait(self.interval)

    def _serve(self, raw: socket.socket) -> None:
        try:
            with raw:
                if self.phase == "handshake":
                    self._slow_handshake(raw)
                    return
                with self.context.wrap_socket(raw, server_side=True) as conn:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        chunk = conn.recv(65536)
                        if not chunk:
                            return
                        request += chunk
                    if self.phase == "headers":
                        conn.sendall(HEADERS + b"X-Slow: ")
                    else:
                        conn.sendall(HEADERS + b"Content-Length: 1000000\r\n\r\n")
                    self._dribble(conn, None)
        except OSError:
            pass  # the client hung up: what a deadline does

    def _slow_handshake(self, raw: socket.socket) -> None:
        """The server's TLS flight, byte by byte: the handshake itself never ends in time."""
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = self.context.wrap_bio(incoming, outgoing, server_side=True)
        while True:
            try:
                tls.do_handshake()
                return
            except ssl.SSLWantReadError:
                flight = outgoing.read()
                if flight:
                    self._dribble(raw, flight)
                    return
                chunk = raw.recv(65536)
                if not chunk:
                    return
                incoming.write(chunk)
