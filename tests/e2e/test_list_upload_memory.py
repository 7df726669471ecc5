"""A Member's list uploads cannot exhaust the API's memory: four 10 MB, 50,000-row files
posted at once to `herald serve` are saved to disk and checked one at a time off the request
threads, so the server process's peak memory grows by about one check's rows, not four.

The measure is the kernel's own high-water mark of the process (VmHWM), read after every
check ended: no sampling, no timing."""

from __future__ import annotations

import os
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from engine.database.models import Account
from engine.database.models.lists import RecipientList
from tests import factories
from tests.support.serve_process import herald_serve
from tests.web.conftest import PASSWORD, make_user

pytestmark = pytest.mark.slow
ROWS = 50_000
# One check of such a file holds about 60 MB of rows; four at once, as before, held 300+.
MOST_GROWTH_MIB = 160


def _status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(rf"^{field}:\s+(\d+) kB", status.read(), re.M).group(1))


def _worker_pid(master: int) -> int:
    deadline = time.monotonic() + 60
    while True:
        with open(f"/proc/{master}/task/{master}/children") as children:
            pids = children.read().split()
        if pids:
            return int(pids[0])
        assert time.monotonic() < deadline, "gunicorn started no worker"
        time.sleep(0.1)


@pytest.fixture
def server(settings, tmp_path):
    with herald_serve(settings, tmp_path) as (proc, port):
        yield f"http://127.0.0.1:{port}", _worker_pid(proc.pid), tmp_path


def _signed_in(url: str, email: str) -> tuple[requests.Session, str]:
    http = requests.Session()
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"',
                      http.get(url + "/").text).group(1)
    answer = http.post(url + "/", data={"email": email, "password": PASSWORD,
                                        "csrf_token": token}, allow_redirects=False)
    assert answer.status_code == 302, answer.text
    page = http.get(url + "/workspaces").text
    return http, re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)


def _file(seed: int) -> bytes:
    rows = "".join(f"p{seed}-{i}@example.net,Name {i},{os.urandom(16).hex()},"
                   f"{os.urandom(64).hex()}\n" for i in range(ROWS))
    return ("email address,name,code,note\n" + rows).encode()


def test_four_large_uploads_at_once_are_checked_one_at_a_time(server):
    url, worker, tmp = server
    Account.update(monthly_limit=10**6).execute()
    posts = []
    for n in range(2):  # two workspaces, two files each: within each one's limit
        ws = factories.workspace()
        Account.update(monthly_limit=10**6).where(Account.id == ws.account_id).execute()
        template = factories.template(ws)
        make_user(f"member{n}@example.com", ws, "member")
        http, token = _signed_in(url, f"member{n}@example.com")
        posts += [(http, token, f"{url}/w/{ws.id}/templates/{template.id}/lists")] * 2
    files = [_file(n) for n in range(4)]
    assert all(9_500_000 < len(f) <= 10 * 1024 * 1024 for f in files)
    http, token, target = posts[0]
    small = http.post(target, data={"csrf_token": token}, allow_redirects=False, files={
        "recipients": ("one.csv", b"email address,name\nada@example.net,Ada\n")})
    assert small.status_code == 303  # the server warmed up: its pool and imports are there
    RecipientList.delete().execute()
    before = _status_kib(worker, "VmRSS")

    def post(i: int) -> int:
        http, token, target = posts[i]
        return http.post(target, data={"csrf_token": token}, allow_redirects=False,
                         files={"recipients": (f"big{i}.csv", files[i])}).status_code

    with ThreadPoolExecutor(4) as pool:
        assert sorted(pool.map(post, range(4))) == [303] * 4
    deadline = time.monotonic() + 600
    while RecipientList.select().where(RecipientList.status == "checking").count() \
            or RecipientList.select().count() < 4:
        assert time.monotonic() < deadline, "the checks never ended"
        time.sleep(0.5)
    assert sorted(k.row_count for k in RecipientList.select()) == [ROWS] * 4
    grown = (_status_kib(worker, "VmHWM") - before) / 1024
    assert grown < MOST_GROWTH_MIB, f"the server's peak memory grew by {grown:.0f} MiB"
    assert not list(tmp.glob("herald-list-*"))  # every saved file removed after its check
