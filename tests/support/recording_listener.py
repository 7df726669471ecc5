"""A TCP listener on loopback that records every connection it accepts and answers each
with a banner: the witness that Herald connected somewhere it must not (an SSRF test
passes only when ``connections`` stays empty)."""

from __future__ import annotations

import contextlib
import socket
import threading

BANNER = b"SSH-2.0-OpenSSH_9.2 INTERNAL-SECRET-token=s3cr3t\r\n"


class RecordingListener:
    def __init__(self, family: int = socket.AF_INET, banner: bytes = BANNER,
                 hold: bool = False) -> None:
        """``hold``: a tarpit: say nothing and keep each connection open until closed."""
        self.banner = banner
        self.hold = hold
        self._held: list[socket.socket] = []
        self.connections: list[tuple] = []
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, peer = self._sock.accept()
            except OSError:
                return
            self.connections.append(peer)
            if self.hold:
                self._held.append(conn)
                continue
            with contextlib.suppress(OSError):
                conn.sendall(self.banner)
            conn.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(5)
        for conn in self._held:
            conn.close()
