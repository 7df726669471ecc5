"""Where callbacks come from beside the worker's own outcomes (provider reports, the tracking
endpoints, the suppression list, webhook notifications), and how the worker runs their
queue: the herald-callbacks queue served by `herald worker`'s class, each pass on a pass
slot; a receiver that hangs ends the pass after one timeout."""

from __future__ import annotations

import json

import pytest

from cli.app import create_app
from engine import runtime
from engine.callbacks import targets
from engine.callbacks.jobs import send_callbacks
from engine.catalog import suppressions
from engine.database.models.callbacks import Callback
from engine.delivery.jobs import deliver_notification
from engine.delivery.tracking import open_url
from engine.queue.queueing import CALLBACK_QUEUE_NAME, WORKER_QUEUE_NAMES
from engine.reports import events
from engine.worker import handoff
from engine.worker.worker_class import HeraldWorker
from tests import factories
from tests.support.https_receiver import Scripted


@pytest.fixture
def called_back(settings, receiver, ca_file, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    ws = factories.workspace()
    targets.set_target(ws, receiver.url("/cb", "localhost"))
    return ws


def _types(receiver):
    return [(json.loads(r.body)["type"], json.loads(r.body)["recipient"])
            for r in receiver.received if r.path == "/cb"]


def test_provider_bounces_and_complaints_are_called_back_and_soft_bounces_are_not(
        called_back, receiver):
    n = factories.notification(called_back, factories.email_payload(
        to=["ada@example.net", "bob@example.net"]))
    for kind, recipient in (("bounced", "ada@example.net"), ("soft_bounced", "bob@example.net"),
                            ("complained", "bob@example.net")):
        assert events.record(n, events.Reported(kind, recipient, "postmark", "said so"))
    send_callbacks(str(called_back.id))
    assert _types(receiver) == [("notification.bounced", "ada@example.net"),
                                ("notification.complained", "bob@example.net")]
    detail = json.loads(receiver.received[0].body)["detail"]
    assert detail == {"source": "postmark", "description": "said so"}


def test_an_open_through_the_tracking_endpoint_is_called_back(settings, called_back,
                                                              receiver):
    n = factories.notification(called_back, factories.email_payload())
    client = create_app(settings).test_client()
    path = open_url(str(n.id), "ada@example.net").replace(settings.public_url, "")
    assert client.get(path).status_code == 200
    send_callbacks(str(called_back.id))
    assert _types(receiver) == [("notification.opened", "ada@example.net")]


def test_a_suppressed_recipient_is_called_back_as_suppressed(called_back, receiver):
    suppressions.add(called_back.id, ["gone@example.net"], "manual")
    n = factories.notification(called_back, factories.email_payload(
        to=["ada@example.net", "gone@example.net"]))
    assert deliver_notification(str(n.id)) == "delivered"  # through the dev inbox
    send_callbacks(str(called_back.id))
    assert sorted(_types(receiver)) == [("notification.delivered", "ada@example.net"),
                                        ("notification.suppressed", "gone@example.net")]


def test_a_webhook_notification_is_called_back_with_its_destination(called_back, receiver):
    url = receiver.url("/hook", "localhost")
    n = factories.notification(called_back, {"channel": "webhook", "url": url,
                                             "body": "{}", "contentType": "application/json"})
    assert deliver_notification(str(n.id)) == "delivered"
    send_callbacks(str(called_back.id))
    assert _types(receiver)[-1] == ("notification.delivered", url)


@pytest.mark.parametrize("slots", [False, True])
def test_the_worker_serves_the_callbacks_queue_after_deliveries(called_back, receiver, slots):
    from engine.delivery.queue import enqueue_notification

    n = factories.notification(called_back, factories.email_payload())
    if slots:
        # Delivered first: in the slots a delivery's outcome may be recorded after a burst's
        # last look at the queue. The callbacks job is then taken like a delivery job.
        deliver_notification(str(n.id))
        handoff.start(4)
    else:
        enqueue_notification(str(n.id), workspace=n.workspace_id)
    try:
        HeraldWorker(list(WORKER_QUEUE_NAMES), connection=runtime.redis()).work(burst=True)
    finally:
        handoff.close()  # waits for the passes handed to the pass slots
    assert WORKER_QUEUE_NAMES[-1] == CALLBACK_QUEUE_NAME
    assert _types(receiver) == [("notification.delivered", "ada@example.net")]
    assert Callback.get().status == "delivered"


def test_a_hanging_receiver_ends_the_pass_after_one_timeout(called_back, receiver):
    receiver.script["/cb"] = [Scripted(delay=12.0)]  # past the 10-second webhook timeout
    n = factories.notification(called_back, factories.email_payload(
        to=["a@example.net", "b@example.net", "c@example.net"]))
    deliver_notification(str(n.id))
    send_callbacks(str(called_back.id))
    rows = list(Callback.select().order_by(Callback.id))
    assert [r.attempts for r in rows] == [1, 0, 0]  # the rest wait for the retry
    assert rows[0].status == "retrying" and rows[0].error == "timed out"
    assert len(receiver.received) == 1


def test_a_callback_verifies_with_the_helpers_docs_ship(called_back, receiver):
    """docs/callbacks.md sends receivers to docs/webhooks.md's Python and Node helpers."""
    import base64
    import shutil

    from engine.callbacks.manual import send_test
    from tests.engine.webhooks.test_webhook_docs import (
        _node,
        _python_example,
        _python_example_v2,
    )

    send_test(called_back)
    (request,) = receiver.received
    secret, headers = called_back.signing_secret, request.headers
    assert _python_example()(secret, request.body, headers)
    assert _python_example_v2()(secret, request.body, headers, called_back.callback_url)
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the Node example cannot run here")
    assert _node(secret, base64.b64encode(request.body).decode(),
                 headers["X-Service-Timestamp"], headers["X-Service-Delivery-Id"],
                 headers["X-Service-Signature"]) == "true"
