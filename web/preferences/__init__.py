"""The recipient's Email preferences page, reached by the unsubscribe link of a Marketing
email without signing in (docs/web.md): the workspace's topics as checkboxes, and
unsubscribing from all Marketing email. Views over engine/inbound/preferences.py."""

from web.preferences.views import blueprint

__all__ = ["blueprint"]
