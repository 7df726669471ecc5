"""A webhook attempt over plain http://, which the destination policy allows only to
loopback with private destinations allowed (development and test: a local receiver, the
dev inbox's webhook catcher).

The same promises as the HTTPS transport (engine/webhooks/transport.py): pinned to the
checked address, one deadline for the whole exchange rather than a per-read timeout, at
most ANSWER_BYTES of the answer read, redirects never followed. One connection per
attempt: nothing here is on a path that needs it kept.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import time
from collections.abc import Mapping

from engine.webhooks.transport import (
    ANSWER_BYTES,
    CONNECT_TIMEOUT,
    EXCERPT_BYTES,
    AnswerTooLarge,
    HttpAnswer,
)


class _DeadlineSocket(socket.socket):
    """A socket whose every blocking call gets only the time left to the attempt, and which
    refuses to read past the answer's allowance."""

    deadline: float = 0.0
    unread: int = ANSWER_BYTES

    def _arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the webhook attempt ran out of time")
        self.settimeout(left)

    def recv_into(self, buffer, nbytes: int = 0, flags: int = 0) -> int:  # type: ignore[override]
        self._arm()
        if self.unread <= 0:
            raise AnswerTooLarge(f"answer over {ANSWER_BYTES} bytes")
        got = super().recv_into(buffer, min(nbytes or len(buffer), self.unread), flags)
        self.unread -= got
        return got

    def sendall(self, data, flags: int = 0) -> None:  # type: ignore[override]
        self._arm()
        super().sendall(data, flags)


class _Connection(http.client.HTTPConnection):
    """Connects to the checked address, whatever the Host header names."""

    def __init__(self, address: str, port: int, deadline: float) -> None:
        super().__init__(address, port)
        self.deadline = deadline

    def connect(self) -> None:
        left = self.deadline - time.monotonic()
        raw = socket.create_connection((self.host, self.port),
                                       timeout=max(0.001, min(CONNECT_TIMEOUT, left)))
        sock = _DeadlineSocket(raw.family, raw.type, raw.proto, fileno=raw.detach())
        sock.deadline = self.deadline
        self.sock = sock


def post_plain(host: str, address: str, port: int, target: str, body: bytes,
               headers: Mapping[str, str], *, timeout: float) -> HttpAnswer:
    """POST ``body`` to http://host:port/target over a connection to ``address``."""
    deadline = time.monotonic() + timeout
    conn = _Connection(str(ipaddress.ip_address(address)), port, deadline)
    try:
        conn.request("POST", target, body=body,
                     headers={**headers, "Host": host if port == 80 else f"{host}:{port}"})
        response = conn.getresponse()
        excerpt = response.read(EXCERPT_BYTES)
        answer_headers = {name.lower(): value for name, value in response.getheaders()}
        return HttpAnswer(response.status, answer_headers, excerpt.decode("utf-8", "replace"))
    except AnswerTooLarge:
        return HttpAnswer(failure="too_large", detail=f"over {ANSWER_BYTES // 1024} KiB")
    except (OSError, http.client.HTTPException) as err:
        if isinstance(err, TimeoutError) or time.monotonic() >= deadline:
            return HttpAnswer(failure="timeout")
        return HttpAnswer(failure="network", detail=err.__class__.__name__)
    finally:
        conn.close()
