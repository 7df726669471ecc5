"""The email channel's MIME parts are what the standard library's classes would build."""

from __future__ import annotations

import os
from email.base64mime import body_encode

import pytest

from channels.email.mime import base64_lines


@pytest.mark.parametrize("size", [0, 1, 56, 57, 58, 114, 1000, 13_000])
def test_a_body_is_base64_in_the_lines_the_standard_library_writes(size):
    data = os.urandom(size)
    assert base64_lines(data) == body_encode(data)
