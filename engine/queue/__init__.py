"""Redis and the queue: the one client factory (one server, or Sentinel's primary), the
worker's patient client, the request path's script calls, the hand-off of jobs to RQ and
each workspace's lane, the embedded server for dev and tests, and the marks of sends
answered 503 whose commit went unheard."""
