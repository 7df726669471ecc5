"""The request path's Redis calls, each sent as one command on a connection of the thread's own.

A send makes two script calls (the admission, the enqueue); the editor's preview makes two
plain round trips (its person's count, the frame's stash), sent the same way by
``commands``. Through redis-py's ``Script`` or its pipeline each goes the client's general
way: a pool checkout that polls the socket, a retry wrapper, the arguments encoded one by
one, the release: about twice the CPU of packing, sending and reading the same command on a
connection directly (docs/performance.md, "Measurements behind the code's shape"). Anything
unexpected (a dropped connection, the server's script cache flushed) goes to redis-py's own
call, which reconnects, retries and loads the script as before.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import hiredis
from redis import Redis
from redis.connection import AbstractConnection, ConnectionPool
from redis.exceptions import RedisError


class DirectScript:
    """A registered script, called on this thread's connection to the client's server."""

    def __init__(self, redis: Redis, source: str) -> None:
        self._script = redis.register_script(source)
        self._pool = redis.connection_pool

    def _evalsha(self, keys: Sequence[Any], args: Sequence[Any]) -> tuple:
        return ("EVALSHA", self._script.sha, len(keys), *keys, *args)

    def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        answers = _on_own_connection(self._pool, [self._evalsha(keys, args)])
        return self._script(keys=keys, args=args) if answers is None else answers[0]

    def call_each(self, calls: Sequence[tuple[Sequence[Any], Sequence[Any]]]) -> list[Any]:
        """The script once per (keys, args), every call in one round trip."""
        return call_each([(self, keys, args) for keys, args in calls])


def call_each(calls: Sequence[tuple[DirectScript, Sequence[Any], Sequence[Any]]]) -> list[Any]:
    """Each (script, keys, args), scripts of one client, in one round trip. Anything
    unexpected runs each call again through redis-py's own way: for the enqueue, which is
    the caller, a job enqueued twice is harmless (its claim decides)."""
    if not calls:
        return []
    answers = _on_own_connection(calls[0][0]._pool, [
        script._evalsha(keys, args) for script, keys, args in calls])
    if answers is None:
        return [script._script(keys=keys, args=args) for script, keys, args in calls]
    return answers


def commands(redis: Redis, *calls: Sequence[Any]) -> list[Any]:
    """Each command of ``calls`` (``("INCR", key)``, ...) in one round trip on this thread's
    connection, as DirectScript sends a script; their answers in order. Anything unexpected
    sends them all again through a redis-py pipeline, which reconnects and retries: only for
    commands that may run twice (a SET, a count that may then count one more)."""
    answers = _on_own_connection(redis.connection_pool, [tuple(call) for call in calls])
    if answers is None:
        pipe = redis.pipeline(transaction=False)
        for call in calls:
            pipe.execute_command(*call)
        answers = pipe.execute()
    return answers


def _on_own_connection(pool: ConnectionPool, packed: Sequence[tuple]) -> list[Any] | None:
    """Each command sent in one round trip on this thread's connection to ``pool``'s server,
    and their answers; None when the connection cannot be trusted (a dropped connection, an
    error reply such as NOSCRIPT): it is then closed, answers perhaps unread, and the
    caller goes redis-py's way, which reconnects, retries and loads scripts."""
    connection = thread_connection(pool)
    try:
        # hiredis packs in C what redis-py's serializer would first copy arg by arg.
        connection.send_packed_command([hiredis.pack_command(c) for c in packed],
                                       check_health=False)
        return [connection.read_response() for _ in packed]
    except (RedisError, OSError):
        _local.connections.pop(pool, None)
        connection.disconnect()
        return None


_local = threading.local()


def thread_connection(pool: ConnectionPool) -> AbstractConnection:
    """This thread's own connection to ``pool``'s server, outside the pool, shared by every
    script; a forked child makes its own and never touches its parent's socket."""
    if getattr(_local, "pid", None) != os.getpid():
        _local.pid = os.getpid()
        _local.connections = weakref.WeakKeyDictionary()  # dropped with the client's pool
    connection = _local.connections.get(pool)
    if connection is None:
        connection = _local.connections[pool] = pool.connection_class(**pool.connection_kwargs)
    return connection
