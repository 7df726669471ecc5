"""HERALD_LOG_FORMAT, HERALD_METRICS_TOKEN and HERALD_WORKER_METRICS_PORT, checked at start."""

from __future__ import annotations

import pytest

from config.settings import ConfigError, load_settings

TOKEN = "a-metrics-token-0123456789"


def test_defaults_are_text_logs_and_no_metrics():
    settings = load_settings({})
    assert (settings.log_format, settings.metrics_token, settings.worker_metrics_port) == \
        ("text", None, None)


def test_values_are_read():
    settings = load_settings({"HERALD_LOG_FORMAT": " JSON ", "HERALD_METRICS_TOKEN": TOKEN,
                              "HERALD_WORKER_METRICS_PORT": "9102"})
    assert (settings.log_format, settings.metrics_token, settings.worker_metrics_port) == \
        ("json", TOKEN, 9102)


@pytest.mark.parametrize(("environ", "setting"), [
    ({"HERALD_LOG_FORMAT": "xml"}, "HERALD_LOG_FORMAT"),
    ({"HERALD_METRICS_TOKEN": "short-secret"}, "HERALD_METRICS_TOKEN"),
    ({"HERALD_WORKER_METRICS_PORT": "9102"}, "HERALD_WORKER_METRICS_PORT"),
    ({"HERALD_METRICS_TOKEN": TOKEN, "HERALD_WORKER_METRICS_PORT": "70000"},
     "HERALD_WORKER_METRICS_PORT"),
])
def test_bad_values_name_their_setting_and_never_echo_the_token(environ, setting):
    with pytest.raises(ConfigError) as refused:
        load_settings(environ)
    assert refused.value.setting == setting
    assert "short-secret" not in str(refused.value)
