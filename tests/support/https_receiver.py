"""A real HTTPS receiver with a test CA (trustme), scripted per path, recording raw requests."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import trustme


@dataclass
class Scripted:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b"ok"
    delay: float = 0.0
    hold: threading.Event | None = None  # answer only once the test sets it (or 30 s)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    peer: tuple[str, int] = ("", 0)  # the client's address and port: one per connection


class HttpsReceiver:
    def __init__(self, ca: trustme.CA, names: tuple[str, ...] = ("hook.test", "localhost")):
        self.script: dict[str, list[Scripted]] = {}
        self.received: list[Received] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def setup(self):
                super().setup()
                # Headers and body go out in two writes; without this, Nagle and delayed
                # ACKs add 40 ms to every kept-alive request, which no real receiver has.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                receiver.received.append(Received(self.path, dict(self.headers), body,
                                                   tuple(self.client_address)))
                queue = receiver.script.get(self.path.split("?")[0]) or [Scripted()]
                answer = queue.pop(0) if len(queue) > 1 else queue[0]
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.hold is not None:
                    answer.hold.wait(30)
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert(*names).configure_cert(context)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook", host: str = "hook.test") -> str:
        return f"https://{host}:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
