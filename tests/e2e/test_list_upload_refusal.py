"""A workspace's third list upload at once is refused by `herald serve` before its body is
read: the answer (the upload page again, 429, saying why) comes while most of the file was
never sent, and the connection closes, so uploads beyond the limit hold no server thread
for the time their bodies take."""

from __future__ import annotations

import http.client
import re
import socket
import time

import pytest
import requests
from redis import Redis

from engine.database.models.lists import RecipientList
from tests import factories
from tests.support.serve_process import herald_serve
from tests.web.conftest import PASSWORD, make_user

pytestmark = pytest.mark.slow
BOUNDARY = "herald-test-boundary"
FIRST_PART = 64 * 1024  # what each upload sends before it waits


@pytest.fixture
def server(settings, tmp_path):
    with herald_serve(settings, tmp_path) as (_, port):
        yield port


def _signed_in(url: str, email: str) -> tuple[str, str]:
    """(the Cookie header, the CSRF token) of a member signed in at ``url``."""
    http = requests.Session()
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"',
                      http.get(url + "/").text).group(1)
    answer = http.post(url + "/", data={"email": email, "password": PASSWORD,
                                        "csrf_token": token}, allow_redirects=False)
    assert answer.status_code == 302, answer.text
    token = re.search(r'"X-CSRFToken": "([^"]+)"', http.get(url + "/workspaces").text).group(1)
    return "; ".join(f"{c.name}={c.value}" for c in http.cookies), token


def _upload(port: int, path: str, cookie: str, token: str, name: str) -> tuple[socket.socket,
                                                                                bytes]:
    """A socket that sent an upload's headers and its body's first part, and the rest."""
    rows = "".join(f"p{i}@example.net,Name {i}\n" for i in range(40_000))
    body = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n"
            f"{token}\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; "
            f"name=\"recipients\"; filename=\"{name}\"\r\nContent-Type: text/csv\r\n\r\n"
            f"email address,name\n{rows}\r\n--{BOUNDARY}--\r\n").encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall(head + body[:FIRST_PART])
    return sock, body[FIRST_PART:]


def _response(sock: socket.socket) -> tuple[http.client.HTTPResponse, str]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response, response.read().decode()


def test_a_third_upload_at_once_is_refused_before_its_body_is_sent(server, settings):
    port = server
    url = f"http://127.0.0.1:{port}"
    ws = factories.workspace()
    template = factories.template(ws)
    make_user("member@example.com", ws, "member")
    cookie, token = _signed_in(url, "member@example.com")
    path = f"/w/{ws.id}/templates/{template.id}/lists"
    held = [_upload(port, path, cookie, token, f"held{i}.csv") for i in range(2)]
    slots = Redis.from_url(settings.redis_url)
    deadline = time.monotonic() + 60
    while int(slots.get(f"herald:lists:checking:{ws.id}") or 0) < 2:
        # Fails where the body is read before the slot is taken (as when flask-wtf's
        # CSRF check read it whole first): these bodies are never all sent.
        assert time.monotonic() < deadline, ("the two uploads, their bodies not all sent, "
                                             "never took their slots")
        time.sleep(0.05)

    third, rest = _upload(port, path, cookie, token, "third.csv")
    # Most of its body was never sent: an answer at all means it was not waited for.
    assert len(rest) > 10 * FIRST_PART
    response, page = _response(third)
    assert response.status == 429
    assert "2 files of this workspace are being uploaded or checked" in page
    assert response.getheader("Connection") == "close"
    third.close()

    for sock, rest in held:  # the two in progress go on and are kept
        sock.sendall(rest)
        response, page = _response(sock)
        assert response.status == 303, re.findall(r'<li id="list-problem-0">(.*?)</li>', page)
        sock.close()
    assert sorted(k.filename for k in RecipientList.select()) == ["held0.csv", "held1.csv"]
