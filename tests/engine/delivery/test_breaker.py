"""The provider circuit breaker: shared through Redis by threads and processes, one probe."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from config.settings import ConfigError, load_settings
from engine import runtime
from engine.delivery import breaker
from engine.plugins.manager import check_providers
from engine.plugins.provider_order import label
from engine.queue.embedded_redis import free_port
from tests.conftest import TEST_SECRET_KEY

KEY = breaker.breaker_key(None, "smtp://user:secret@mx1.example:587")


@pytest.fixture
def quick(settings):
    """Two failures open it (for 30 s: the tests end the period themselves, see below)."""
    runtime.configure(settings.with_changes(provider_breaker_failures=2))
    yield
    runtime.configure(settings)


def _period_over() -> None:
    """As when the open period has passed: its end moved to the past on the breaker itself."""
    runtime.redis().hset(KEY, "open_until", 1)


def test_failures_open_it_and_a_success_closes_it(quick):
    assert breaker.admit(KEY).state == breaker.CLOSED
    breaker.failed(KEY)
    seen = breaker.admit(KEY)
    assert (seen.state, seen.failures) == (breaker.CLOSED, 1)
    breaker.succeeded(KEY, seen)  # consecutive failures only
    breaker.failed(KEY)
    assert breaker.admit(KEY).allowed
    breaker.failed(KEY)
    skipped = breaker.admit(KEY)
    assert skipped.state == breaker.OPEN and 29 < skipped.wait <= 30


def test_the_key_never_holds_the_provider_url():
    assert "secret" not in KEY and "mx1" not in KEY
    assert label(None, "smtp://user:secret@mx1.example:587?tls=starttls") == \
        "smtp://mx1.example:587"


def test_an_open_breaker_is_seen_by_another_process(settings):
    for _ in range(3):  # the default: 3 failures open it for 30 seconds
        breaker.failed(KEY)
    code = ("import json; from engine import runtime; from engine.delivery import breaker; "
            f"from config.settings import Settings; runtime.configure(Settings(**{{"
            f"'redis_url': {settings.redis_url!r}, 'database_url': {settings.database_url!r}, "
            f"'env': 'test'}})); a = breaker.admit({KEY!r}); print(json.dumps([a.state]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert json.loads(out) == [breaker.OPEN]


def test_half_open_lets_exactly_one_probe_through(quick):
    breaker.failed(KEY)
    breaker.failed(KEY)
    _period_over()
    answers: list[int] = []
    start = threading.Barrier(6)

    def ask():
        start.wait()
        answers.append(breaker.admit(KEY).state)

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(answers) == [breaker.OPEN] * 5 + [breaker.PROBE]


def test_a_failed_probe_opens_it_for_another_period_and_a_good_one_closes_it(quick):
    breaker.failed(KEY)
    breaker.failed(KEY)
    _period_over()
    probe = breaker.admit(KEY)
    assert probe.state == breaker.PROBE
    breaker.failed(KEY)
    assert breaker.admit(KEY).state == breaker.OPEN
    _period_over()
    probe = breaker.admit(KEY)
    breaker.succeeded(KEY, probe)
    assert breaker.admit(KEY) == breaker.Admission(breaker.CLOSED, 0)


def test_without_redis_everything_is_let_through(settings):
    runtime.configure(settings.with_changes(redis_url=f"redis://127.0.0.1:{free_port()}"))
    try:
        breaker.failed(KEY)
        assert breaker.admit(KEY).allowed
    finally:
        runtime.configure(settings)


def test_provider_settings_take_a_list_separated_by_whitespace():
    base = {"HERALD_ENV": "test"}
    loaded = load_settings({**base, "HERALD_EMAIL_PROVIDER": "smtp://a.example:25\n"
                                                             "  smtp://b.example:2525?tls=none",
                            "HERALD_PROVIDER_BREAKER_FAILURES": "5",
                            "HERALD_PROVIDER_BREAKER_SECONDS": "60"})
    assert loaded.email_provider.split() == ["smtp://a.example:25",
                                             "smtp://b.example:2525?tls=none"]
    assert (loaded.provider_breaker_failures, loaded.provider_breaker_seconds) == (5, 60.0)
    check_providers(loaded)
    with pytest.raises(ConfigError, match="HERALD_EMAIL_PROVIDER: smtp provider: tls"):
        check_providers(load_settings({**base, "HERALD_EMAIL_PROVIDER":
                                       "smtp://a:25 smtp://b:25?tls=bogus"}))
    with pytest.raises(ConfigError, match=r"HERALD_SMS_PROVIDER: .*nope://"):
        check_providers(load_settings({**base, "HERALD_SMS_PROVIDER": "inbox:// nope://x"}))
    with pytest.raises(ConfigError, match="HERALD_EMAIL_PROVIDER: inbox:// is for development"):
        load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": TEST_SECRET_KEY,
                       "HERALD_EMAIL_PROVIDER": "smtp://a:25 inbox://",
                       "HERALD_SMS_PROVIDER": "inbox://"})
    with pytest.raises(ConfigError, match="HERALD_PROVIDER_BREAKER_SECONDS"):
        load_settings({**base, "HERALD_PROVIDER_BREAKER_SECONDS": "0.5"})
