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

    def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        connection = thread_connection(self._pool)
        try:
            # hiredis packs in C what redis-py's serializer would first copy arg by arg.
            connection.send_packed_command(
                [hiredis.pack_command(("EVALSHA", self._script.sha, len(keys), *keys, *args))],
                check_health=False)
            return connection.read_response()
        except (RedisError, OSError):
            # Never reuse a connection in an unknown state; redis-py's path does the rest.
            _local.connections.pop(self._pool, None)
            connection.disconnect()
            return self._script(keys=keys, args=args)

    def call_each(self, calls: Sequence[tuple[Sequence[Any], Sequence[Any]]]) -> list[Any]:
        """The script once per (keys, args), every call in one round trip. Anything
        unexpected runs each call again through redis-py's own way: for the enqueue, which
        is the caller, a job enqueued twice is harmless (its claim decides)."""
        connection = thread_connection(self._pool)
        try:
            connection.send_packed_command(
                [hiredis.pack_command(("EVALSHA", self._script.sha, len(keys), *keys, *args))
                 for keys, args in calls], check_health=False)
            return [connection.read_response() for _ in calls]
        except (RedisError, OSError):
            # Answers may be left unread: the connection goes; redis-py's path, call by call.
            _local.connections.pop(self._pool, None)
            connection.disconnect()
            return [self._script(keys=keys, args=args) for keys, args in calls]


def commands(redis: Redis, *calls: Sequence[Any]) -> list[Any]:
    """Each command of ``calls`` (``("INCR", key)``, ...) in one round trip on this thread's
    connection, as DirectScript sends a script; their answers in order. Anything unexpected
    sends them all again through a redis-py pipeline, which reconnects and retries: only for
    commands that may run twice (a SET, a count that may then count one more)."""
    connection = thread_connection(redis.connection_pool)
    try:
        connection.send_packed_command([hiredis.pack_command(tuple(call)) for call in calls],
                                       check_health=False)
        return [connection.read_response() for _ in calls]
    except (RedisError, OSError):
        _local.connections.pop(redis.connection_pool, None)
        connection.disconnect()
        pipe = redis.pipeline(transaction=False)
        for call in calls:
            pipe.execute_command(*call)
        return pipe.execute()


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
