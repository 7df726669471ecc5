"""engine/lists/uploads.py and expiry.py: a file saved to disk and checked in the pool, at
most IN_PROGRESS of a workspace at once, too large refused while it streams; unsent lists
removed after their time."""

from __future__ import annotations

import datetime as dt
import io
import tempfile
from pathlib import Path

import pytest

from engine.database.models import utcnow
from engine.database.models.lists import RecipientList
from engine.lists import background, expiry, reading, uploads
from tests import factories

CSV = b"email address,name\nada@example.net,Ada\ngrace@example.net,Grace\n"


@pytest.fixture
def held(monkeypatch, tmp_path):
    """The pool holds its tasks: each is run when the test says."""
    tasks: list[tuple] = []
    monkeypatch.setattr(background, "submit", lambda task, *args: tasks.append((task, args)))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tasks


def _begin(ws, template, name: str, data: bytes):
    uploads.take_slot(ws)
    return uploads.begin(ws, template, name, io.BytesIO(data), None)


def test_a_workspace_has_at_most_two_files_in_check(settings, held, tmp_path):
    ws = factories.workspace()
    template = factories.template(ws)
    first = _begin(ws, template, "a.csv", CSV)
    _begin(ws, template, "b.csv", CSV)
    assert first.status == "checking" and len(list(tmp_path.glob("herald-list-*"))) == 2
    with pytest.raises(uploads.Busy, match="2 files of this workspace are being uploaded"):
        uploads.take_slot(ws)
    other = factories.workspace()  # another workspace is not held by this one's checks
    _begin(other, factories.template(other), "d.csv", CSV)
    task, args = held[0]
    task(*args)  # the first check ends: its slot and its file are freed
    kept = RecipientList.get_by_id(first.id)
    assert (kept.status, kept.row_count, kept.rows[1][1]) == ("checked", 2, "grace@example.net")
    assert len(list(tmp_path.glob("herald-list-*"))) == 2
    _begin(ws, template, "c.csv", CSV)


def test_a_slot_given_back_before_the_upload_began_is_free_again(settings, held):
    ws = factories.workspace()
    for _ in range(3):
        uploads.take_slot(ws)
        uploads.free_slot(ws)
    _begin(ws, factories.template(ws), "a.csv", CSV)
    uploads.take_slot(ws)
    with pytest.raises(uploads.Busy):
        uploads.take_slot(ws)


def test_a_file_too_large_is_refused_as_it_streams(settings, held, monkeypatch, tmp_path):
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 100)
    ws = factories.workspace()
    template = factories.template(ws)
    for _ in range(3):  # each refusal gives its slot back
        with pytest.raises(reading.FileRefused, match="larger than"):
            _begin(ws, template, "big.csv", CSV * 10)
    assert not list(tmp_path.glob("herald-list-*")) and RecipientList.select().count() == 0


def test_a_refused_file_keeps_its_problems_until_shown(settings, held):
    ws = factories.workspace()
    template = factories.template(ws)
    kept = _begin(ws, template, "bad.csv", b"email address,name\ngrace@,Grace\n")
    task, args = held[0]
    task(*args)
    checked = uploads.refusal(RecipientList.get_by_id(kept.id))
    assert [str(p) for p in checked.problems] == [
        "row 2: email address is not a valid address: “grace@”"]
    assert checked.bad_rows == 1


def test_a_check_that_never_ended_says_so(settings, held):
    ws = factories.workspace()
    kept = _begin(ws, factories.template(ws), "a.csv", CSV)
    RecipientList.update(created_at=utcnow() - dt.timedelta(hours=1)).execute()
    checked = uploads.refusal(RecipientList.get_by_id(kept.id))
    assert "did not finish" in str(checked.problems[0])


def test_unsent_lists_expire_and_a_workspace_keeps_at_most_twenty(settings, monkeypatch):
    ws = factories.workspace()
    template = factories.template(ws)
    lists = [uploads.upload(ws, template, f"{n}.csv", CSV, None)[1] for n in range(4)]
    week_ago = utcnow() - dt.timedelta(days=8)
    RecipientList.update(created_at=week_ago).where(RecipientList.id.in_(
        [lists[0].id, lists[1].id])).execute()
    RecipientList.update(status="sent").where(RecipientList.id == lists[1].id).execute()
    assert expiry.expire() == 1  # the week-old unsent one; the sent one stays
    assert {k.id for k in RecipientList.select()} == {k.id for k in lists[1:]}
    monkeypatch.setattr(expiry, "MAX_UNSENT", 2)
    assert expiry.expire(ws.id) == 1  # room for one more beside the newest unsent one
    assert {k.id for k in RecipientList.select()} == {lists[1].id, lists[3].id}


def test_the_saved_file_is_read_as_it_streams(settings, tmp_path):
    path = Path(tmp_path) / "list.csv"
    path.write_bytes(b"\xef\xbb\xbfEmail Address,name\r\nada@example.net,Ada\r\n\r\n")
    with path.open("rb") as binary:
        sheet = reading.read_stream(binary, "list.csv")
    assert sheet.header == ["Email Address", "name"] and sheet.rows == [
        (2, ["ada@example.net", "Ada"])]
    path.write_bytes(b"email address\n\xff\xfe\n")
    with path.open("rb") as binary, pytest.raises(reading.FileRefused, match="UTF-8"):
        reading.read_stream(binary, "list.csv")
