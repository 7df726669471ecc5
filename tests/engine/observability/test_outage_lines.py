"""A lost dependency logged by a periodic loop or by RQ is one line per incident, without
its traceback; any other error keeps its traceback. Real errors from a real refused port."""

from __future__ import annotations

import functools
import io
import logging

import pytest
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.retry import Retry

from engine.observability.log_format import TextFormatter
from engine.observability.outages import OutageFilter
from engine.queue.embedded_redis import free_port


@pytest.fixture
def stream():
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(TextFormatter())
    handler.addFilter(OutageFilter())
    log = logging.getLogger("herald.test-outages")
    log.addHandler(handler)
    log.propagate = False
    yield log, out
    log.removeHandler(handler)


@functools.cache
def _refused() -> RedisConnectionError:
    try:
        Redis(port=free_port(), socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)).ping()
    except RedisConnectionError as err:
        return err
    raise AssertionError("nothing should listen on a free port")


def test_repeated_outage_errors_are_one_line_without_traceback(stream):
    log, out = stream
    error = _refused()
    for _ in range(5):
        try:
            raise error
        except RedisConnectionError:
            log.exception("reconciler pass failed")
    lines = out.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert "reconciler pass failed: redis unreachable (" in lines[0]
    assert "setting=HERALD_REDIS_URL" in lines[0] and "Traceback" not in out.getvalue()


def test_rq_s_formatted_traceback_of_an_outage_is_cut_to_one_line(stream):
    log, out = stream
    rq_log = logging.getLogger("rq.worker")
    rq_log.handlers, saved = log.handlers, rq_log.handlers
    rq_log.propagate, kept = False, rq_log.propagate
    try:
        try:
            raise _refused()
        except RedisConnectionError:
            rq_log.error("Worker %s: job %s: exception raised while executing (%s)\n%s", "w",
                         "j", "f", "Traceback (most recent call last):\n  ...")
    finally:
        rq_log.handlers, rq_log.propagate = saved, kept
    assert out.getvalue().count("\n") == 1 and "Traceback" not in out.getvalue()
    assert "job j: exception raised while executing (f): redis unreachable" in out.getvalue()


def test_a_bug_keeps_its_traceback(stream):
    log, out = stream
    try:
        {}["missing"]
    except KeyError:
        log.exception("reconciler pass failed")
    assert "Traceback" in out.getvalue() and "KeyError" in out.getvalue()
