"""Group commit: concurrent rows share a write, each caller returns once its row is written."""

from __future__ import annotations

import threading
import time

import pytest

from engine.group_commit import GroupWriteError, GroupWriter


def _wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.001)


def test_alone_a_row_is_written_at_once_in_a_group_of_one() -> None:
    groups: list[list] = []
    writer = GroupWriter(groups.append)
    writer.add((1,))
    writer.add((2,))
    assert groups == [[(1,)], [(2,)]]


def test_rows_offered_during_a_write_share_the_next_one() -> None:
    groups: list[list] = []
    release = threading.Event()

    def write(rows):
        if not groups:
            release.wait(10)
        groups.append(list(rows))

    writer = GroupWriter(write)
    first = threading.Thread(target=writer.add, args=(("first",),))
    first.start()
    _wait_for(lambda: writer._writing)
    others = [threading.Thread(target=writer.add, args=((n,),)) for n in range(5)]
    for thread in others:
        thread.start()
    _wait_for(lambda: len(writer._waiting) == 5)
    release.set()
    for thread in [first, *others]:
        thread.join(10)
        assert not thread.is_alive()
    assert groups[0] == [("first",)]
    assert sorted(groups[1]) == [(n,) for n in range(5)] and len(groups) == 2


def test_a_bad_row_fails_only_its_own_caller() -> None:
    written: list = []
    release = threading.Event()

    def write(rows):
        if rows == [("hold",)]:
            release.wait(10)
        if ("bad",) in rows:
            raise ValueError("bad row")
        written.extend(rows)

    writer = GroupWriter(write)
    holder = threading.Thread(target=writer.add, args=(("hold",),))
    holder.start()
    _wait_for(lambda: writer._writing)
    outcomes: dict = {}

    def offer(value):
        try:
            writer.add((value,))
            outcomes[value] = "ok"
        except GroupWriteError as err:
            outcomes[value] = type(err.__cause__).__name__

    threads = [threading.Thread(target=offer, args=(v,)) for v in ("a", "bad", "b")]
    for thread in threads:
        thread.start()
    _wait_for(lambda: len(writer._waiting) == 3)
    release.set()
    for thread in [holder, *threads]:
        thread.join(10)
    assert outcomes == {"a": "ok", "bad": "ValueError", "b": "ok"}
    assert sorted(written) == [("a",), ("b",), ("hold",)]


def test_a_failed_single_write_raises_to_its_caller() -> None:
    def write(rows):
        raise RuntimeError("database down")

    with pytest.raises(GroupWriteError) as info:
        GroupWriter(write).add((1,))
    assert isinstance(info.value.__cause__, RuntimeError)
