from __future__ import annotations

import pytest

from engine.embedded_redis import free_port
from tests.support.smtp_server import start_smtp


@pytest.fixture
def smtp():
    controller, handler = start_smtp(free_port())
    handler.port = controller.port
    handler.reads = []
    yield handler
    controller.stop()
