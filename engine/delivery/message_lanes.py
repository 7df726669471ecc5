"""Send a delivery's planned messages and report each one's outcome the moment it is known.

Reported as they settle, a fan-out's outcomes can be committed while it runs
(engine/delivery/outcomes.py checkpoints them), so a worker killed in the middle re-sends
only what it had not recorded.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from queue import SimpleQueue
from typing import Any

from engine.plugins.channel_contract import Planned
from engine.plugins.contracts import DeliveryError

# A Planned message's payload is made when a lane asks for it: a fan-out's per-recipient
# work (signed tracking and unsubscribe links) runs then, beside the other lanes' network
# waits, instead of for every recipient before the first message leaves.

# A message's outcome: its recipient, when it started (perf_counter; 0 when never sent),
# the provider's result, and the error instead of a result.
Sent = tuple[str | None, float, Any, Exception | None]

# The lanes take no message while the reader has this many outcomes a lane to read, and
# UNREAD_WHILE_RECORDING more. The reader commits a fan-out's outcomes as it goes (a
# checkpoint); while it is away doing so the lanes send on until that many are unread,
# then wait, however long the database takes, so a crash leaves a bounded number of
# messages sent and unrecorded (docs/delivery.md, "Checkpoints"). Without the extra ones
# every lane stood still for each checkpoint's commit: tens of messages at a fan-out's pace.
UNREAD_PER_LANE = 1
UNREAD_WHILE_RECORDING = 10
# That bound, per lane, beyond the outcomes the reader has read and the
# UNREAD_WHILE_RECORDING: the unread outcome, one
# more whose lane took it just before the others settled theirs, and one whose content a
# pipelined stream (SMTP) sends as the stream ends.
AHEAD_PER_LANE = UNREAD_PER_LANE + 2


def send_all(channel: Any, provider: Any, messages: list[Planned],
             stop: threading.Event | None = None) -> Iterator[Sent]:
    """Send every planned message; yield each one's outcome once, in the order they settle.

    Whatever one message raises (a DeliveryError, or any other exception while it is built or
    sent) is that message's error: the others go on. A fan-out is latency-bound (SMTP round
    trips), so a provider that declares ``max_concurrency`` gets that many lanes of messages
    in flight at once; one that has ``send_many`` is handed each lane's messages as a
    stream, built as it asks for them. Closing the iterator early stops the lanes from
    taking more messages and waits for those in flight.

    ``stop``, once set, ends the send gracefully: no message is taken after it, those in
    flight still report their outcome, and a message never taken reports none (a fan-out
    that yields the worker, engine/delivery/fair_share.py, sends those later).
    """
    stop = stop or threading.Event()
    width = min(getattr(provider, "max_concurrency", 1), len(messages))
    streamed = len(messages) > 1 and hasattr(provider, "send_many")
    if width <= 1 and not streamed:
        for recipient, make in messages:
            if stop.is_set():
                return
            yield _one(channel, provider, recipient, make)
        return
    yield from _Lanes(channel, provider, messages, stop).run(max(width, 1), streamed)


def _one(channel: Any, provider: Any, recipient: str | None,
         make: Callable[[], dict[str, Any]]) -> Sent:
    started = time.perf_counter()
    try:
        return recipient, started, provider.send(channel.build(make())), None
    except Exception as err:
        return recipient, started, None, err


class _Lanes:
    """Lanes taking the next message from one shared queue (a slow lane takes fewer), each
    reporting its outcomes to the thread that iterates ``run``."""

    def __init__(self, channel: Any, provider: Any, messages: list[Planned],
                 stop: threading.Event | None = None) -> None:
        self.channel, self.provider, self.messages = channel, provider, messages
        self.stop = stop or threading.Event()  # set: take no more, report those in flight
        self.waiting = deque(enumerate(messages))
        self.lock = threading.Lock()
        self.closed = threading.Event()  # the reader stopped: take no more messages
        self.settled: SimpleQueue[tuple[int, Sent] | None] = SimpleQueue()  # None: a lane ended
        self.unread = 0  # outcomes in ``settled`` the reader has not taken yet
        self.ahead = 1  # how many of them the lanes may leave before taking another message
        self.room = threading.Condition(self.lock)  # the reader took one (or stopped)
        self.refusals: list[Exception] = []  # a send_many that raised before it took any message

    def run(self, width: int, streamed: bool) -> Iterator[Sent]:
        lane = self._stream_lane if streamed else self._plain_lane

        def run_lane() -> None:
            try:
                lane()
            finally:
                self.settled.put(None)

        answered = [False] * len(self.messages)
        self.ahead = UNREAD_PER_LANE * width + UNREAD_WHILE_RECORDING
        pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="herald-send")
        try:
            lanes = [pool.submit(run_lane) for _ in range(width)]
            running = width
            while running:
                item = self.settled.get()
                if item is None:
                    running -= 1
                    continue
                with self.lock:
                    self.unread -= 1
                    # Every waiting lane looks again (a handful): plainer to be sure of
                    # than a count of wake-ups against lanes that end without a message.
                    self.room.notify_all()
                answered[item[0]] = True
                yield item[1]
            for done in lanes:
                done.result()  # a lane's own bug is raised here, not lost
            never_taken = {index for index, _ in self.waiting} if self.stop.is_set() else set()
            for index, done_already in enumerate(answered):
                if not done_already and index not in never_taken:
                    # left by lanes that all stopped, or never answered
                    yield (self.messages[index][0], 0.0, None, self.refusals[0] if
                           self.refusals else RuntimeError(
                               "provider.send_many gave no outcome for this message"))
        finally:
            with self.lock:
                self.closed.set()
                self.room.notify_all()
            pool.shutdown(wait=True)

    def _next(self) -> tuple[int, Planned] | None:
        """The next message, once the reader has read enough of the outcomes; None when
        there is none or the reader stopped."""
        with self.lock:
            # Woken by each outcome read and by the reader stopping (``stop`` is set by the
            # reader, which reads on until every lane has ended).
            while self.unread >= self.ahead and not self.closed.is_set():
                self.room.wait()
            if self.closed.is_set() or self.stop.is_set() or not self.waiting:
                return None
            return self.waiting.popleft()

    def _settle(self, index: int, sent: Sent) -> None:
        """Report one message's outcome to the reader."""
        with self.lock:
            self.unread += 1
        self.settled.put((index, sent))

    def _plain_lane(self) -> None:
        while (item := self._next()) is not None:
            index, (recipient, make) = item
            self._settle(index, _one(self.channel, self.provider, recipient, make))

    def _stream_lane(self) -> None:
        """One lane through ``provider.send_many``."""
        taken: deque[tuple[int, str | None, float]] = deque()

        def stream() -> Iterator[Any]:
            while (item := self._next()) is not None:
                index, (recipient, make) = item
                started = time.perf_counter()
                try:
                    message = self.channel.build(make())
                except Exception as err:  # this message's outcome; the stream goes on
                    self._settle(index, (recipient, started, None, err))
                    continue
                taken.append((index, recipient, started))
                yield message

        while True:
            try:
                for outcome in self.provider.send_many(stream()):
                    index, recipient, started = taken.popleft()
                    failed = isinstance(outcome, DeliveryError)
                    self._settle(index, (recipient, started, None if failed else outcome,
                                         outcome if failed else None))
                return
            except Exception as err:
                if not taken:
                    self.refusals.append(err)
                    return
                # It raised on the message it took last: that one fails. Those it held
                # before it have no answer (the SMTP provider had not sent their content):
                # they go back to the queue for a new stream, as a message whose connection
                # was lost is sent again. Each time one message fails, so this ends.
                index, recipient, started = taken.pop()
                self._settle(index, (recipient, started, None, err))
                with self.lock:
                    self.waiting.extendleft((i, self.messages[i]) for i, _, _ in reversed(taken))
                taken.clear()
