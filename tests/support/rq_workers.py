"""RQ's own SimpleWorker for tests that run RQ as it is, made to return promptly.

RQ's worker subscribes to its command channel on a thread that reads with a 60 s timeout,
and its teardown waits for that thread to end (redis-py 8's stop() joins it without a
bound): a burst that ran in a second could take a minute to return. This one's thread
reads a second at a time, as `herald worker`'s does (engine/worker/worker_class.py);
nothing else of RQ's is changed.
"""

from __future__ import annotations

from rq import SimpleWorker

WAKE_SECONDS = 1.0


class PromptSimpleWorker(SimpleWorker):
    """RQ's SimpleWorker whose command-channel thread wakes every ``WAKE_SECONDS``."""

    def subscribe(self) -> None:
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(
            sleep_time=WAKE_SECONDS, daemon=True,
            exception_handler=self._pubsub_exception_handler)
