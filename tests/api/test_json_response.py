"""The API's JSON answers are the Response werkzeug makes of the same text."""

from __future__ import annotations

import pytest
from flask import Response

from api.notifications import json_response


@pytest.mark.parametrize(("text", "status"), [('{"a": 1}', 200), ('{"b": "é"}', 202),
                                              ("", 200)])
def test_a_json_answer_is_the_response_werkzeug_makes(text: str, status: int) -> None:
    made, usual = json_response(text, status), Response(text, status=status,
                                                        mimetype="application/json")
    assert made.headers.to_wsgi_list() == usual.headers.to_wsgi_list()
    assert (made.status, made.status_code) == (usual.status, usual.status_code)
    assert made.get_data() == usual.get_data() == text.encode()
    assert vars(made).keys() == vars(usual).keys()
    made.headers["X-Correlation-Id"] = "x"  # the API's hooks add to them as to any
    assert made.headers.to_wsgi_list()[-1] == ("X-Correlation-Id", "x")
