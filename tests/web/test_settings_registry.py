"""The settings navigation and each page's guard come from one registry of pages
(web/settings/pages.py): a member sees the links of the pages its role may open, and
exactly those pages open for it."""

from __future__ import annotations

import pytest
from flask import url_for

from cli.app import create_app
from engine.people import roles
from tests import factories
from tests.web.conftest import make_user
from tests.web.test_authoring_requests import Client
from web.settings.pages import PAGES


@pytest.mark.parametrize("role", ["member", "admin", "owner"])
def test_the_navigation_and_the_guards_read_one_registry(settings, role):
    app = create_app(settings)
    ws = factories.workspace()
    make_user(f"{role}@example.com", ws, role, role.title())
    client = Client(app, f"{role}@example.com")
    nav = client.get(f"/w/{ws.id}/settings/").text.split('aria-label="Settings"')[1] \
        .split("</nav>")[0]
    with app.test_request_context():
        for page in PAGES:
            href = url_for(page.endpoint, workspace_id=ws.id)
            allowed = roles.at_least(role, page.role)
            assert (f'href="{href}"' in nav) == allowed, (role, page)
            assert client.get(href).status_code == (200 if allowed else 403), (role, page)
