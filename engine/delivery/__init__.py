"""The worker side of a send: the RQ worker and its hand-off thread, planning the messages of
a notification, sending them through providers, recording outcomes, retries, the reconciler that
re-enqueues what Redis forgot, and tracking links."""
