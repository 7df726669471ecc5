"""Settings from ``HERALD_*`` environment variables, checked once at start-up."""

from config.settings import ConfigError, Settings, load_settings

__all__ = ["ConfigError", "Settings", "load_settings"]
