"""An HTTP vendor's timeout bounds the whole exchange, not each read: a vendor that sends a
byte now and then is cut off at the deadline and the message is tried again later."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from engine.plugins.contracts import TransientError
from engine.plugins.http_vendor import HttpVendorProvider


@contextlib.contextmanager
def _dribbler():
    """Answers a status line, then a header byte every 0.1 s until the client leaves."""
    listener = socket.create_server(("127.0.0.1", 0))
    left = threading.Event()

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Filler: ")
                while True:
                    conn.sendall(b"a")
                    conn.settimeout(0.1)
                    try:
                        if conn.recv(1) == b"":
                            break
                    except TimeoutError:
                        continue
        left.set()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1], left
    finally:
        listener.close()


def test_a_vendor_that_dribbles_its_answer_is_cut_off_at_the_deadline():
    provider = HttpVendorProvider()
    provider.timeout = 1.0
    with _dribbler() as (port, left):
        with pytest.raises(TransientError) as raised:
            provider.post(f"http://127.0.0.1:{port}/send", json={"to": "+15550100"})
        assert str(raised.value) == "provider did not answer within 1 s"
        assert raised.value.reason == "timed out"
        assert left.wait(10), "the connection was left open"
    provider.close()


def test_a_vendor_that_answers_keeps_its_connection_for_the_next_message():
    peers: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            peers.append(self.client_address[1])
            body = json.dumps({"id": "m1"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    provider = HttpVendorProvider()
    try:
        for _ in range(3):
            _, data = provider.post(f"http://127.0.0.1:{server.server_address[1]}/send",
                                    json={"to": "+15550100"})
            assert data == {"id": "m1"}
    finally:
        provider.close()
        server.shutdown()
        server.server_close()
    assert len(peers) == 3 and len(set(peers)) == 1  # one kept-alive connection
