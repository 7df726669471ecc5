"""The `herald` operator command (contract: docs/operations.md, docs/apply.md)."""
