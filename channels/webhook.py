"""The webhook channel: one HTTPS POST, pinned to an address the engine has just checked.

Pinned: connecting to the checked IP (with SNI and certificate checks for the host name)
closes the DNS-rebinding gap between checking a name and connecting to it. The policy
(which addresses are allowed, signing, retry classes) is the engine's; this module only
speaks HTTP, as a channel should.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

import requests
from requests.adapters import HTTPAdapter

from engine.hookspecs import hookimpl

EXCERPT_BYTES = 4096
USER_AGENT = "Herald-Webhooks/1"
MAX_SESSIONS = 64


@dataclass
class HttpAnswer:
    """What the receiver said, or why nothing was said (``failure``)."""

    status_code: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    excerpt: str = ""
    failure: str | None = None  # "timeout", "tls" or "network"
    detail: str | None = None


class _PinnedAdapter(HTTPAdapter):
    """Connects to an IP literal while TLS speaks (SNI) and verifies the original host name."""

    def __init__(self, hostname: str) -> None:
        self.hostname = hostname
        super().__init__(max_retries=0)

    def init_poolmanager(self, connections, maxsize, block=False, **pool_kwargs):
        pool_kwargs["server_hostname"] = self.hostname
        pool_kwargs["assert_hostname"] = self.hostname
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)


_sessions: OrderedDict[tuple, requests.Session] = OrderedDict()
_sessions_lock = threading.Lock()


def _session(host: str, address: str, port: int, verify: str | bool) -> requests.Session:
    """A kept-alive session per checked (host, address): TLS is set up once, not per attempt.

    Keyed by the address too, so a host that now resolves elsewhere gets a new connection.
    """
    key = (host, address, port, verify)
    with _sessions_lock:
        session = _sessions.get(key)
        if session is not None:
            _sessions.move_to_end(key)
            return session
        session = requests.Session()
        session.trust_env = False  # no proxy, .netrc or CA bundle taken from the environment
        session.mount("https://", _PinnedAdapter(host))
        _sessions[key] = session
        if len(_sessions) > MAX_SESSIONS:
            _, oldest = _sessions.popitem(last=False)
            oldest.close()
        return session


def _read_capped(response: requests.Response, deadline: float) -> str:
    data = b""
    for chunk in response.iter_content(1024):
        data += chunk
        if len(data) >= EXCERPT_BYTES or time.monotonic() > deadline:
            break
    return data[:EXCERPT_BYTES].decode("utf-8", "replace")


def post_pinned(host: str, address: str, port: int, target: str, body: bytes,
                headers: Mapping[str, str], *, timeout: float,
                verify: str | bool) -> HttpAnswer:
    """POST ``body`` to https://host:port/target over a connection to ``address``.

    Redirects are never followed; at most EXCERPT_BYTES of the answer are read.
    """
    ip = ipaddress.ip_address(address)
    literal = f"[{ip}]" if ip.version == 6 else str(ip)
    host_header = host if port == 443 else f"{host}:{port}"
    session = _session(host, str(ip), port, verify)
    deadline = time.monotonic() + timeout
    try:
        with session.post(f"https://{literal}:{port}{target}", data=body,
                          headers={**headers, "Host": host_header}, timeout=(5.0, timeout),
                          allow_redirects=False, stream=True, verify=verify) as response:
            return HttpAnswer(response.status_code, dict(response.headers),
                              _read_capped(response, deadline))
    except requests.exceptions.SSLError as err:
        return HttpAnswer(failure="tls", detail=err.__class__.__name__)
    except requests.Timeout:
        return HttpAnswer(failure="timeout")
    except requests.RequestException as err:
        return HttpAnswer(failure="network", detail=err.__class__.__name__)


class WebhookChannel:
    """Registered like any channel; it needs no provider (the receiver is the destination)."""

    name = "webhook"
    needs_provider = False


@hookimpl
def register_channels(register) -> None:
    register("webhook", WebhookChannel())
