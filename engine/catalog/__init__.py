"""What a workspace has, read on the hot path: API keys and their cache, per-process template
snapshots, version lifecycle (publish, restore, lock), and the suppression list with its cache."""
