"""The `herald worker` process: the supervising parent, the RQ worker class and its delivery
thread (the hand-off), the scheduler bound to its worker, the lifeline to the parent, the
waits for a lost database or Redis, the reconciler and its watch for a Redis that lost its
jobs, the process's logging and `herald queue`'s view of the backlog. What a job does is
engine/delivery/."""
