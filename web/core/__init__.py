"""The layout, static files, error pages and the workspace switcher."""
