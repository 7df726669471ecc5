"""Retention and erasure: what a notification keeps once its workspace's retention has
passed, and the erasure of one person's data (docs/operations.md, "Data retention")."""
