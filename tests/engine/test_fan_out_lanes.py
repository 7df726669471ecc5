"""A fan-out handed to a provider's ``send_many`` as streams, one per lane: each message
built when its stream asks for it, every outcome back at its own recipient."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator

import pytest

from channels.email import EmailChannel
from engine.contracts import DeliveryError, OutboundEmail, PermanentError, SendResult
from engine.jobs import Planned, _send_all
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
    sent = _send_all(channel, provider, messages)
    assert [row[0] for row in sent] == [recipient for recipient, _ in messages]
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
    sent = _send_all(channel, StreamingProvider(2, channel, stop_after=3), planned(10))
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
    sent = _send_all(channel, provider, messages)
    assert [row[0] for row in sent] == [recipient for recipient, _ in messages]
    errors = {row[0]: row[3] for row in sent}
    assert isinstance(errors.pop("user4@example.net"), RuntimeError)
    assert all(error is None or isinstance(error, PermanentError) for error in errors.values())
    assert sorted(provider.taken) == sorted(r for r, _ in messages), "each one taken once"


def test_a_message_that_cannot_be_built_fails_alone():
    channel = CountingChannel()
    messages = planned(6)
    messages[2] = ("bob@example.net", lambda: factories.email_payload(
        to=["B\udcffob <bob@example.net>"]))  # a lone surrogate: no UTF-8 for its name
    sent = _send_all(channel, StreamingProvider(2, channel), messages)
    assert isinstance(sent[2][3], UnicodeEncodeError)
    assert all(row[3] is None or isinstance(row[3], PermanentError)
               for index, row in enumerate(sent) if index != 2)


def test_a_single_message_goes_through_send():
    channel = CountingChannel()
    ((_recipient, _started, _result, error),) = _send_all(
        channel, StreamingProvider(4, channel), planned(1))
    assert isinstance(error, AssertionError) and "through send_many" in str(error)
