"""Herald's core: models, rendering, the send pipeline, queueing and plugin loading."""
