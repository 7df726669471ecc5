"""The workspace provider form refuses the dev inbox in production, as the setting and
`herald apply` do (issue #28, point 7)."""

from __future__ import annotations

import pytest

from engine import runtime
from web.settings.provider import _problems


@pytest.mark.parametrize("url", ["inbox://", " INBOX://", "Inbox://x"])
def test_production_refuses_the_inbox_and_test_mode_takes_it(settings, url):
    assert _problems([url]) == []
    runtime.configure(settings.with_changes(env="production"))
    try:
        assert _problems([url]) == ["Inbox:// is for development and test only."]
        assert _problems(["smtp://mx.example:25", url]) == [
            "Provider 2: inbox:// is for development and test only."]
    finally:
        runtime.configure(settings)
