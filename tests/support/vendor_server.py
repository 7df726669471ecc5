"""A local HTTP server standing in for a vendor API: it checks requests as the vendor documents."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Check = Callable[[str, dict[str, str], bytes], tuple[int, dict[str, str], Any]]


class VendorServer:
    def __init__(self, check: Check) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = dict(self.headers)
                server.requests.append((self.path, headers, body))
                status, extra, payload = check(self.path, headers, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **extra}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
