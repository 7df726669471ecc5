"""/metrics: only with the bearer token; what a send and the queue add to it."""

from __future__ import annotations

from cli.app import create_app
from engine.catalog import keycache
from tests.api.test_send import post

TOKEN = "metrics-token-0123456789abcdef"


def test_metrics_are_404_without_the_setting_and_401_with_a_wrong_token(settings):
    off = create_app(settings).test_client()
    assert off.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 404
    on = create_app(settings.with_changes(metrics_token=TOKEN)).test_client()
    for header in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        answer = on.get("/metrics", headers=header)
        assert answer.status_code == 401 and answer.headers["WWW-Authenticate"] == "Bearer"
        assert TOKEN not in answer.get_data(as_text=True)


def test_a_send_is_counted_and_the_queue_is_measured(settings, tenant):
    keycache.clear()
    client = create_app(settings.with_changes(metrics_token=TOKEN)).test_client()

    def scrape() -> dict[str, float]:
        answer = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert answer.status_code == 200 and answer.mimetype == "text/plain"
        return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
                for line in answer.get_data(as_text=True).splitlines()
                if line and not line.startswith("#")}

    accepted = 'herald_notifications_accepted_total{channel="email"}'
    before = scrape().get(accepted, 0.0)
    for _ in range(3):
        assert post(client, tenant["body"], tenant["key"]).status_code == 202
    after = scrape()
    assert after[accepted] == before + 3
    assert after['herald_render_seconds_count{channel="email"}'] >= 3
    assert after['herald_dependency_up{dependency="redis"}'] == 1.0
    assert after['herald_dependency_up{dependency="database"}'] == 1.0
    assert after['herald_queue_depth{queue="herald"}'] == 3.0
    assert after['herald_queue_depth{queue="herald-bulk"}'] == 0.0
    assert after["herald_notifications_queued"] == 3.0
    assert after["herald_oldest_queued_age_seconds"] >= 0.0
