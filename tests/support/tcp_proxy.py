"""A TCP proxy on loopback that a test can cut and restore: every connection through it
drops at once, and new ones are refused until it listens again (a database going away).

It can also lose one answer: the next request that holds a given marker reaches the server
and is carried out, and the connection is cut before its answer gets back (a database that
committed a statement whose client never heard so)."""

from __future__ import annotations

import contextlib
import socket
import threading

from engine.queue.embedded_redis import free_port


class TcpProxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = free_port()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._marker: bytes | None = None
        self.lost = threading.Event()  # set once an answer was lost
        self.start()

    def start(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        """Refuse new connections and cut every open one."""
        listener, self._listener = self._listener, None
        with self._lock:
            doomed, self._sockets = [*self._sockets, *([listener] if listener else [])], []
        for sock in doomed:
            _cut(sock)

    def lose_answer_to(self, marker: bytes) -> None:
        """The next request holding ``marker`` is carried out; its answer is thrown away and
        its connection cut (``lost`` is set then)."""
        self.lost.clear()
        self._marker = marker

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._sockets += [client, server]
            doomed = threading.Event()  # this connection's next answer is to be lost
            threading.Thread(target=self._requests, args=(client, server, doomed),
                             daemon=True).start()
            threading.Thread(target=self._answers, args=(server, client, doomed),
                             daemon=True).start()

    def _requests(self, client: socket.socket, server: socket.socket,
                  doomed: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                marker = self._marker
                if marker is not None and marker in data:
                    self._marker = None
                    doomed.set()
                server.sendall(data)
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_WR)

    def _answers(self, server: socket.socket, client: socket.socket,
                 doomed: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if doomed.is_set():  # the server answered: it has carried the request out
                    self.lost.set()  # before the cut, which the client may see at once
                    _cut(client)
                    _cut(server)
                    return
                client.sendall(data)
        with contextlib.suppress(OSError):
            client.shutdown(socket.SHUT_WR)


def _cut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
