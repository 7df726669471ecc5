"""Which requests `herald serve` answers on the thread that accepts: a whole /healthz head
with no body, and nothing that could make that thread wait."""

from __future__ import annotations

import pytest

from cli.health_worker import answers_here

HEAD = b"GET /healthz HTTP/1.1\r\nHost: herald\r\n\r\n"


@pytest.mark.parametrize("head", [
    HEAD,
    b"HEAD /healthz HTTP/1.1\r\nHost: herald\r\n\r\n",
    b"GET /healthz?probe=1 HTTP/1.0\r\n\r\n",
    HEAD + b"GET /healthz HTTP/1.1\r\n",  # more behind it: still one answer, then a close
])
def test_a_whole_healthz_head_is_answered_here(head):
    assert answers_here(head)


@pytest.mark.parametrize("head", [
    b"GET /healthz HTTP/1.1\r\nHost: herald\r\n",  # not all of it yet
    b"GET /healthz HTTP/1.1\r\nContent-Length: 10\r\n\r\n",  # a body to drain
    b"GET /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nUpgrade: h2c\r\n\r\n",
    b"POST /healthz HTTP/1.1\r\n\r\n",
    b"GET /healthzx HTTP/1.1\r\n\r\n",
    b"GET /readyz HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nX-Path: /healthz\r\n\r\n",
    b"\x16\x03\x01\x02\x00",  # a TLS ClientHello
    b"",
])
def test_anything_else_goes_to_the_request_threads(head):
    assert not answers_here(head)
