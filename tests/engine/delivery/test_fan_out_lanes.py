"""A fan-out handed to a provider's ``send_many`` as streams, one per lane: each message
built when its stream asks for it, every outcome back at its own recipient, reported as it
settles."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator

import pytest

from channels.email import EmailChannel
from engine.delivery.message_lanes import (
    AHEAD_PER_LANE,
    UNREAD_PER_LANE,
    UNREAD_WHILE_RECORDING,
    Planned,
    _Lanes,
    send_all,
)
from engine.plugins.contracts import DeliveryError, OutboundEmail, PermanentError, SendResult
from tests import factories


class CountingChannel(EmailChannel):
    """The email channel, counting the messages built so far."""

    def __init__(self) -> None:
        self.built = 0
        self.lock = threading.Lock()

    def build(self, payload):
        with self.lock:
            self.built += 1
        return super().build(payload)


class StreamingProvider:
    """Refuses every recipient whose name ends in an odd digit; notes what it saw."""

    channel = "email"

    def __init__(self, lanes: int, channel: CountingChannel, stop_after: int | None = None,
                 fail_on: str | None = None) -> None:
        self.max_concurrency = lanes
        self.channel = channel
        self.stop_after, self.fail_on = stop_after, fail_on
        self.threads: set[str] = set()
        self.started = threading.Barrier(lanes, timeout=10)  # every lane streams at once
        self.built_when_taken: list[int] = []
        self.taken: list[str] = []

    def send(self, message: OutboundEmail) -> SendResult:  # pragma: no cover - not called
        raise AssertionError("a fan-out goes through send_many")

    def send_many(self, messages: Iterable[OutboundEmail],
                  ) -> Iterator[SendResult | DeliveryError]:
        lane = threading.current_thread().name
        if lane not in self.threads:  # a lane's first stream (after an error it starts again)
            self.threads.add(lane)
            self.started.wait()
        for count, message in enumerate(messages):
            (address,) = message.to
            self.built_when_taken.append(self.channel.built)
            self.taken.append(address)
            if address == self.fail_on:
                raise RuntimeError("provider bug")
            if self.stop_after is not None and count == self.stop_after:
                return
            if int(address.split("@")[0][-1]) % 2:
                yield PermanentError(f"refused {address}")
            else:
                yield SendResult(provider_message_id=f"<{address}>")


def planned(count: int) -> list[Planned]:
    addresses = [f"user{i}@example.net" for i in range(count)]
    return [(a, lambda a=a: factories.email_payload(to=[a], suppressionKeys=[a]))
            for a in addresses]


@pytest.mark.parametrize("lanes", [1, 3])
def test_every_outcome_lands_at_its_own_recipient(lanes):
    channel = CountingChannel()
    provider = StreamingProvider(lanes, channel)
    messages = planned(30)
    sent = list(send_all(channel, provider, messages))
    assert sorted(row[0] for row in sent) == sorted(recipient for recipient, _ in messages)
    for recipient, _started, result, error in sent:
        if int(recipient.split("@")[0][-1]) % 2:
            assert result is None and str(error) == f"refused {recipient}"
        else:
            assert error is None and result.provider_message_id == f"<{recipient}>"
    assert sorted(provider.taken) == sorted(r for r, _ in messages)
    assert len(provider.threads) == lanes
    # Built as the streams ask: never more than one message ahead per lane.
    assert all(built <= taken + lanes
               for taken, built in enumerate(provider.built_when_taken, start=1))


def test_a_stream_that_ends_early_fails_only_the_messages_it_left_unanswered():
    channel = CountingChannel()
    sent = list(send_all(channel, StreamingProvider(2, channel, stop_after=3), planned(10)))
    answered = [row for row in sent if not isinstance(row[3], RuntimeError)]
    assert len(answered) == 6  # three a lane; the fourth it took, and the rest, unanswered
    assert all(row[2] is not None or isinstance(row[3], PermanentError) for row in answered)
    assert {str(row[3]) for row in sent if row not in answered} == {
        "provider.send_many gave no outcome for this message"}


@pytest.mark.parametrize("lanes", [1, 2])
def test_an_exception_out_of_a_stream_fails_its_message_and_the_lane_goes_on(lanes):
    channel = CountingChannel()
    provider = StreamingProvider(lanes, channel, fail_on="user4@example.net")
    messages = planned(10)
    sent = list(send_all(channel, provider, messages))
    assert sorted(row[0] for row in sent) == sorted(recipient for recipient, _ in messages)
    errors = {row[0]: row[3] for row in sent}
    assert isinstance(errors.pop("user4@example.net"), RuntimeError)
    assert all(error is None or isinstance(error, PermanentError) for error in errors.values())
    assert sorted(provider.taken) == sorted(r for r, _ in messages), "each one taken once"


def test_a_message_that_cannot_be_built_fails_alone():
    channel = CountingChannel()
    messages = planned(6)
    messages[2] = ("bob@example.net", lambda: factories.email_payload(
        to=["B\udcffob <bob@example.net>"]))  # a lone surrogate: no UTF-8 for its name
    sent = {row[0]: row for row in send_all(channel, StreamingProvider(2, channel), messages)}
    assert len(sent) == 6
    assert isinstance(sent.pop("bob@example.net")[3], UnicodeEncodeError)
    assert all(row[3] is None or isinstance(row[3], PermanentError) for row in sent.values())


def test_a_single_message_goes_through_send():
    channel = CountingChannel()
    ((_recipient, _started, _result, error),) = send_all(
        channel, StreamingProvider(4, channel), planned(1))
    assert isinstance(error, AssertionError) and "through send_many" in str(error)


class HoldingProvider(StreamingProvider):
    """Answers the first ``answered`` messages it takes at once; holds the rest until
    ``release`` is set."""

    def __init__(self, lanes: int, channel: CountingChannel, answered: int) -> None:
        super().__init__(lanes, channel)
        self.answered = answered
        self.release = threading.Event()
        self.lock = threading.Lock()

    def send_many(self, messages):
        for message in messages:
            with self.lock:
                self.taken.append(message.to[0])
                held = len(self.taken) > self.answered
            if held:
                assert self.release.wait(10)
            yield SendResult(provider_message_id=f"<{message.to[0]}>")


@pytest.mark.parametrize("lanes", [1, 3])
def test_closing_the_outcomes_early_stops_the_lanes_taking_messages(lanes):
    channel = CountingChannel()
    provider = HoldingProvider(lanes, channel, answered=5)
    running = _Lanes(channel, provider, planned(200))
    outcomes = running.run(lanes, streamed=True)
    first = [next(outcomes) for _ in range(5)]
    closing = threading.Thread(target=outcomes.close)
    closing.start()
    assert running.closed.wait(10), "closing the outcomes did not stop the lanes"
    provider.release.set()  # each lane finishes the message it holds, and takes no other
    closing.join(10)
    assert not closing.is_alive()
    assert len(first) == 5
    assert len(provider.taken) <= 5 + lanes


def test_outcomes_arrive_while_the_other_messages_are_still_sending():
    channel = CountingChannel()
    release = threading.Event()

    class HeldProvider(StreamingProvider):
        """Answers user0 at once, then holds every other message until released."""

        def send_many(self, messages):
            for message in messages:
                if message.to != ["user0@example.net"]:
                    assert release.wait(10)
                yield SendResult(provider_message_id=f"<{message.to[0]}>")

    outcomes = send_all(channel, HeldProvider(2, channel), planned(6))
    recipient, _started, result, error = next(outcomes)  # before any other is answered
    assert (recipient, error, result.provider_message_id) == (
        "user0@example.net", None, "<user0@example.net>")
    release.set()
    assert sorted(row[0] for row in outcomes) == [f"user{i}@example.net" for i in range(1, 6)]


def test_a_provider_answering_in_batches_is_not_held_back_by_the_reader_s_window():
    """The lanes wait while the reader has outcomes to read, never for outcomes a provider
    has not given yet: one that takes ten messages before it answers any still gets them."""
    channel = CountingChannel()

    class BatchingProvider(StreamingProvider):
        def send_many(self, messages):
            batch = []
            for message in messages:
                batch.append(message)
                if len(batch) == 10:
                    yield from (SendResult(provider_message_id=f"<{m.to[0]}>") for m in batch)
                    batch = []
            yield from (SendResult(provider_message_id=f"<{m.to[0]}>") for m in batch)

    got: list[str] = []
    reading = threading.Thread(target=lambda: got.extend(
        row[0] for row in send_all(channel, BatchingProvider(2, channel), planned(45))))
    reading.start()
    reading.join(30)
    assert not reading.is_alive(), "the lanes and the reader waited for each other"
    assert sorted(got) == sorted(f"user{i}@example.net" for i in range(45))


def test_the_lanes_send_on_while_the_reader_is_away_then_wait_for_it():
    """While the reader commits a checkpoint the lanes go on, up to a bound: a fan-out no
    longer stands still for each commit, and a crash still leaves only so many messages
    sent and unrecorded (docs/delivery.md, "Checkpoints")."""
    channel = CountingChannel()
    provider = StreamingProvider(2, channel)
    running = _Lanes(channel, provider, planned(200))
    outcomes = running.run(2, streamed=True)
    next(outcomes)  # then the reader is away, as while it commits a checkpoint
    most = UNREAD_PER_LANE * 2 + UNREAD_WHILE_RECORDING
    deadline = time.monotonic() + 10
    while running.unread < most and time.monotonic() < deadline:
        time.sleep(0.01)  # a poll for the lanes to fill the window, bounded
    assert running.unread == most
    # and no further: the outcome read, the unread ones, and what each lane may hold
    assert len(provider.taken) <= 1 + UNREAD_WHILE_RECORDING + AHEAD_PER_LANE * 2
    assert sum(1 for _ in outcomes) == 199
