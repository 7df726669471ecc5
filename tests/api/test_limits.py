"""Rate limits (D10) and the monthly allowance (D9) through the real Redis."""

from __future__ import annotations

import json
import threading

from redis import Redis

from cli.app import create_app
from engine.catalog import keycache
from engine.database.models import Account, Notification

SEND = "/api/v1/notifications/send"


def _post(client, body, key):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(SEND, data=data, content_type="application/json",
                       headers={"X-Api-Key": key})


def test_not_configured_allowance_is_403(client, tenant):
    Account.update(monthly_limit=None).execute()
    response = _post(client, tenant["body"], tenant["key"])
    assert response.status_code == 403
    assert response.json["errorCode"] == "notifications.monthly_limit_not_configured"


def test_exhausted_allowance_is_429_with_the_code(client, tenant):
    Account.update(monthly_limit=2).execute()
    assert [_post(client, tenant["body"], tenant["key"]).status_code for _ in range(2)] == [
        202, 202]
    response = _post(client, tenant["body"], tenant["key"])
    assert response.status_code == 429
    assert response.json["errorCode"] == "notifications.monthly_limit_exceeded"
    assert Notification.select().count() == 2


def test_concurrent_sends_never_overshoot(settings, tenant):
    Account.update(monthly_limit=15).execute()
    app = create_app(settings)
    statuses: list[int] = []
    lock = threading.Lock()

    def hammer():
        client = app.test_client()
        for _ in range(6):
            status = _post(client, tenant["body"], tenant["key"]).status_code
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=hammer) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses.count(202) == 15
    assert statuses.count(429) == 36 - 15
    assert Notification.select().count() == 15


def test_allowance_is_rebuilt_from_the_database_when_redis_loses_it(client, tenant, settings):
    Account.update(monthly_limit=3).execute()
    for _ in range(2):
        assert _post(client, tenant["body"], tenant["key"]).status_code == 202
    Redis.from_url(settings.redis_url).flushall()
    assert _post(client, tenant["body"], tenant["key"]).status_code == 202
    assert _post(client, tenant["body"], tenant["key"]).status_code == 429


def test_failed_render_gives_the_allowance_back(client, tenant):
    Account.update(monthly_limit=1).execute()
    body = {**tenant["body"], "tags": [{"key": "name", "value": "x" * 8192}]}
    # A valid send that renders fine uses the unit; a refused one would not.
    assert _post(client, body, tenant["key"]).status_code == 202
    assert _post(client, body, tenant["key"]).status_code == 429


def test_per_key_rate_limit_is_429_without_error_code(settings, tenant, windows_held):
    keycache.clear()
    app = create_app(settings.with_changes(rate_limit_send_per_key=3))
    client = app.test_client()
    codes = [_post(client, tenant["body"], tenant["key"]).status_code for _ in range(4)]
    assert codes == [202, 202, 202, 429]
    response = _post(client, tenant["body"], tenant["key"])
    assert response.json["errorCode"] is None
    assert 1 <= int(response.headers["Retry-After"]) <= 60


def test_per_ip_limit_precedes_authentication(settings, tenant, windows_held):
    app = create_app(settings.with_changes(rate_limit_send_per_ip=2))
    client = app.test_client()
    assert _post(client, tenant["body"], "hk_bad").status_code == 401
    assert _post(client, tenant["body"], "hk_bad").status_code == 401
    response = _post(client, tenant["body"], "hk_bad")
    assert response.status_code == 429 and "Retry-After" in response.headers


def test_validate_has_its_own_ip_limit(settings, windows_held):
    app = create_app(settings.with_changes(rate_limit_validate_per_ip=2))
    client = app.test_client()
    codes = [client.get("/api/v1/api-keys/validate", headers={"X-Api-Key": "x"}).status_code
             for _ in range(3)]
    assert codes == [200, 200, 429]


def test_rate_limits_are_shared_between_processes(settings, tenant, windows_held):
    """Two app instances (as two gunicorn workers) count in the same Redis window."""
    first = create_app(settings.with_changes(rate_limit_send_per_key=2)).test_client()
    second = create_app(settings.with_changes(rate_limit_send_per_key=2)).test_client()
    assert _post(first, tenant["body"], tenant["key"]).status_code == 202
    assert _post(second, tenant["body"], tenant["key"]).status_code == 202
    assert _post(first, tenant["body"], tenant["key"]).status_code == 429


def test_a_body_is_not_worth_parsing_without_a_key_or_over_a_limit(settings, tenant, windows_held):
    """The cheap checks run before the parse: no key, an unknown or revoked one, or an
    address or key whose window is already full (real Redis), and the body is skipped."""
    from engine.sending.body_gate import SMALL_BODY, check

    def body_worth_parsing(*args):
        return check(*args).parse

    assert body_worth_parsing(tenant["key"], "198.51.100.7")
    assert not body_worth_parsing(None, "198.51.100.7")
    assert not body_worth_parsing("", "198.51.100.7")
    assert not body_worth_parsing("hk_unknown", "198.51.100.7")
    app = create_app(settings.with_changes(rate_limit_send_per_ip=2))
    client = app.test_client()
    for _ in range(2):
        _post(client, tenant["body"], "hk_bad")
    assert not body_worth_parsing(tenant["key"], "127.0.0.1")  # the test client's address
    assert not body_worth_parsing(tenant["key"], "127.0.0.1", SMALL_BODY + 1)
    # A small body parses sooner than Redis would answer: parsed, then refused (429).
    assert body_worth_parsing(tenant["key"], "127.0.0.1", SMALL_BODY)
    assert body_worth_parsing(tenant["key"], "198.51.100.7")
    over_key = create_app(settings.with_changes(rate_limit_send_per_key=1)).test_client()
    assert _post(over_key, tenant["body"], tenant["key"]).status_code == 202
    assert not body_worth_parsing(tenant["key"], "198.51.100.8")


NESTED = b"[" * 5_000_000 + b"]" * 5_000_000


def test_structure_beyond_what_the_spec_uses_is_refused_before_parsing(client, tenant):
    deep = b'{"tenantId": ' + b"[" * 40 + b"]" * 40 + b"}"
    wide = json.dumps({**tenant["body"], "emailOptions": {"to": ["a@example.com"] * 25_000}})
    boxes = json.dumps({**tenant["body"], "tags": [{}] * 12_000})
    for body, words in ((NESTED, "deeper than 32"), (deep, "deeper than 32"),
                        (wide, "more than 20,000 values"), (boxes, "arrays and objects")):
        response = _post(client, body, tenant["key"])
        assert response.status_code == 400, response.json
        assert response.json["errorCodes"] == ["notifications.request_malformed"]
        assert words in response.json["errors"]["$"][0]
    strings = json.dumps({**tenant["body"], "tags": [
        {"key": "name", "value": "[[[[{{{{,,,," * 600}]})
    assert _post(client, strings, tenant["key"]).status_code == 202, "brackets in strings count not"


def test_the_shape_check_copies_nothing_and_stops_at_the_first_limit():
    """Issue 37, finding 4: the check of a 2.5M-recipient body built a blanked copy of it
    (445 MiB for the worst case); now it reads the bytes as they are and stops at 20,000."""
    import tracemalloc

    from engine.formats.json_limits import structure_problem

    body = b'{"emailOptions": {"to": [' + b'"a@example.com",' * 2_500_000 + b'"z@x.io"]}}'
    tracemalloc.start()
    try:
        problem = structure_problem(body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert problem == "the body holds more than 20,000 values"
    assert peak < 1024 * 1024, f"{peak} bytes allocated to check a {len(body)}-byte body"
    # Strings alone (no comma between them) are counted too: invalid JSON, refused early.
    assert "more than 20,000 values" in structure_problem(b'["' + b'x""' * 50_000 + b'"]')
