"""What a delivery job does: plan the messages of a notification, send them through providers
(failover, circuit breaker, send lanes), record outcomes and attempts, decide retries, yield a
long fan-out, deliver a webhook, and the tracking links. The process that runs the jobs is
engine/worker/."""
