"""The `herald` operator command (contract: ARCHITECTURE.md section 4)."""
