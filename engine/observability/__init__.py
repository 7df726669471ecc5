"""What operators see of a running Herald: health, readiness, structured logs and metrics
(docs/operations.md, "Observing Herald")."""
