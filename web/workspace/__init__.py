"""A workspace's own pages: templates and reports (both to be replaced by their editors)."""
