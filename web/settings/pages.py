"""The settings pages, in one registry: each page's view, its label in the navigation and
the role a member needs to see it. The navigation (core/settings_layout.html) lists the
pages the signed-in member's role may see, and each page's view is guarded by the same
role (``settings_page``), so the two never disagree.

A new settings page: a module in web/settings/ whose main view is decorated with
``@settings_page("its_endpoint")``, and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from web.permissions import workspace_view


@dataclass(frozen=True)
class SettingsPage:
    view: str       # the view function's name in the settings blueprint
    label: str      # its link in the navigation; the page passes it as ``page``
    role: str       # the least role that sees the page (and its link)

    @property
    def endpoint(self) -> str:
        return f"settings.{self.view}"


PAGES: tuple[SettingsPage, ...] = (
    SettingsPage("api_keys", "API keys", "admin"),
    SettingsPage("webhooks", "Webhooks", "member"),
    SettingsPage("suppressions", "Suppressions", "admin"),
    SettingsPage("senders", "Senders", "admin"),
    SettingsPage("members", "Members", "member"),
    SettingsPage("email_provider", "Email provider", "admin"),
    SettingsPage("callbacks", "Callbacks", "admin"),
    SettingsPage("data", "Data", "admin"),
    SettingsPage("topics", "Topics", "admin"),
    SettingsPage("audit_log", "Audit log", "admin"),
)
_BY_VIEW = {page.view: page for page in PAGES}


def settings_page(view: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The page's main view, guarded by the role the registry declares for it."""
    return workspace_view(_BY_VIEW[view].role)
