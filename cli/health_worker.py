"""gunicorn's threaded worker, with `/healthz` answered on the thread that accepts.

gthread hands every connection to a pool of ``threads`` request threads (4 in `herald
serve`) and queues the rest: a tenant's requests that each take a thread for a while
(hostile previews, 10 MB list uploads, a slow client's body) filled the pool, and an
orchestrator's /healthz waited in the queue behind them, so its answer took as long as
the attack's slowest request. This worker reads nothing and waits for nothing on its main
thread, which only accepts and polls: it peeks at a connection's first bytes (MSG_PEEK,
left on the socket) when they arrive, and a complete ``GET /healthz`` head with no body
is run through the app right there, answered and closed. Any other request goes to the
pool as before. A connection whose first bytes have not come yet waits in the poller
(the keep-alive timeout at most), not on a pool thread.

What bounds /healthz then is the interpreter lock the main thread shares with the pool's
threads: a few handovers (poll, peek, read, write, close), each within the switch
interval `herald serve` sets (serve.SWITCH_INTERVAL_SECONDS), never a queue of requests.
Only what cannot block the main thread runs on it: a head that arrived whole, no body
to drain, a small answer a fresh socket's send buffer takes at once, and a close that
lingers for nothing (a connection with bytes behind the head is closed by a pool thread).
"""

from __future__ import annotations

import errno
import selectors
import socket
import threading
import time
from functools import partial
from typing import Any

from gunicorn.workers.gthread import TConn, ThreadWorker

PEEK_BYTES = 4096  # a probe's head is a few hundred bytes; a longer one goes to the pool
_BODY_HEADERS = (b"\r\ncontent-length:", b"\r\ntransfer-encoding:", b"\r\nexpect:",
                 b"\r\nupgrade:")


def answers_here(head: bytes) -> bool:
    """Whether ``head`` (a connection's first bytes) is a whole /healthz request without a
    body: nothing of it is left to wait for, so answering it cannot block."""
    end = head.find(b"\r\n\r\n")
    method, _, rest = head[:head.find(b"\r\n") + 1].partition(b" ")
    target = rest.split(b" ", 1)[0]
    if end < 0 or method not in (b"GET", b"HEAD") or target.split(b"?")[0] != b"/healthz":
        return False
    fields = head[:end + 2].lower()
    return not any(name in fields for name in _BODY_HEADERS)


def _more_behind(sock: socket.socket) -> bool:
    """Whether bytes the request's handling did not read are still on the socket."""
    try:
        return len(sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)) > 0
    except OSError:
        return False


class HealthFirstWorker(ThreadWorker):
    """gthread, except that /healthz never waits for a pool thread (module docstring)."""

    def accept(self, listener: socket.socket) -> None:
        try:
            client_sock, client_addr = listener.accept()
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        self._route(TConn(self.cfg, client_sock, client_addr, listener.getsockname()))

    def on_client_socket_readable(self, conn: TConn, client: socket.socket) -> None:
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self._route(conn)

    def on_pending_socket_readable(self, conn: TConn, client: socket.socket) -> None:
        self.poller.unregister(client)
        self.pending_conns.remove(conn)
        self._route(conn)

    def _route(self, conn: TConn) -> None:
        """Answer a /healthz here, wait in the poller for a request not yet sent, or hand
        the connection to the pool (TLS: its bytes cannot be read here)."""
        if self.cfg.is_ssl:
            self.enqueue_req(conn)
            return
        try:
            head = conn.sock.recv(PEEK_BYTES, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            conn.timeout = time.monotonic() + self.cfg.keepalive
            self.pending_conns.append(conn)
            self.poller.register(conn.sock, selectors.EVENT_READ,
                                 partial(self.on_pending_socket_readable, conn))
            return
        except OSError:
            head = b""
        conn.data_ready = True
        if answers_here(head):
            self._answer_here(conn)
        else:
            self.enqueue_req(conn)

    def _answer_here(self, conn: TConn) -> None:
        """Run the request on this thread; the answer closes the connection."""
        self.handle(conn)
        self.nr_conns -= 1
        if _more_behind(conn.sock):
            # A graceful close drains those bytes for up to 2 s: a pool thread's wait.
            self.tpool.submit(conn.close, True)
        else:
            conn.close()

    def handle_request(self, req: Any, conn: TConn) -> bool:
        if threading.current_thread() is threading.main_thread():
            req.must_close = True  # one answer a connection on this thread, then close
        return super().handle_request(req, conn)
