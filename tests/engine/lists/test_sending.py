"""engine/lists: a checked list sent as one job through the send's accept path, on the bulk
queue, once per row however often the job runs; cancelled; counted as reports count."""

from __future__ import annotations

import pytest
from redis import Redis

from engine.database.models import Account, Notification
from engine.database.models.inbox import InboxMessage
from engine.database.models.lists import RecipientList
from engine.delivery.jobs import deliver_notification
from engine.errors import ApiError
from engine.lists import cancelling, progress, recovery, rows, sending, uploads
from engine.lists.sending import SendRefused
from engine.queue.queueing import BULK_QUEUE_NAME, QUEUE_NAME
from engine.reports import filters
from engine.sending import allowance, validation
from tests import factories

ROWS = [("ada@example.net", "Ada"), ("grace@example.net", "Grace"),
        ("alan@example.net", "Alan"), ("edsger@example.net", "Edsger")]


@pytest.fixture
def ws(settings):
    return factories.workspace()


@pytest.fixture
def redis(settings):
    return Redis.from_url(settings.redis_url)


def _kept(ws, rows=ROWS) -> RecipientList:
    template = factories.template(ws)
    text = "email address,name\n" + "".join(f"{a},{n}\n" for a, n in rows)
    checked, kept = uploads.upload(ws, template, "people.csv", text.encode(), None)
    assert checked.ok, checked.problems
    return kept


def _run_jobs(redis) -> int:
    """Run the list jobs waiting on the bulk queue, in order, as a worker would."""
    ran = 0
    while True:
        jobs = [j for j in _queued(redis, BULK_QUEUE_NAME) if j.startswith("list-")]
        if not jobs:
            return ran
        job_id = jobs[0]
        redis.lrem(f"rq:queue:{BULK_QUEUE_NAME}", 1, job_id)
        sending.expand(str(RecipientList.get().id))
        ran += 1


def _queued(redis, name: str) -> list[str]:
    return [j.decode() for j in redis.lrange(f"rq:queue:{name}", 0, -1)]


def test_nothing_is_sent_until_the_list_is_started(ws, redis):
    _kept(ws)
    assert Notification.select().count() == 0
    assert _queued(redis, BULK_QUEUE_NAME) == []


def test_each_row_is_accepted_once_on_the_bulk_queue_with_its_tags(ws, redis):
    kept = _kept(ws)
    assert sending.start(kept, "user-1") is True
    assert sending.start(RecipientList.get_by_id(kept.id), "user-1") is False  # double click
    assert _run_jobs(redis) == 1
    notes = {n.correlation_id: n for n in Notification.select()}
    assert sorted(notes) == sorted(f"list-{kept.id.hex}-{row}" for row in range(2, 6))
    assert all(not n.is_test and n.idempotency_key.startswith("list:") for n in notes.values())
    # Every row's job waits on the bulk queue: the priority queue stays for transactional mail.
    assert sorted(_queued(redis, BULK_QUEUE_NAME)) == sorted(str(n.id) for n in notes.values())
    assert _queued(redis, QUEUE_NAME) == []
    for n in notes.values():
        assert deliver_notification(str(n.id)) == "delivered"
    got = {m.to[0]: m.subject for m in InboxMessage.select()}
    assert got == {a: f"Hi {n}" for a, n in ROWS}
    kept = RecipientList.get_by_id(kept.id)
    assert (kept.status, kept.accepted, kept.refused, kept.sent_by) == ("sent", 4, [], "user-1")
    shown = progress.progress(progress.summary(ws, kept.id))
    assert dict(shown.shown) == {"Queued": 0, "Delivered": 4, "Failed": 0, "Bounced": 0,
                                 "Suppressed": 0, "Cancelled": 0}


def test_a_job_that_runs_again_accepts_no_row_twice(ws, redis):
    kept = _kept(ws)
    sending.start(kept, None)
    _run_jobs(redis)
    # As if the worker died before it recorded its progress: the rows run again.
    RecipientList.update(status="sending", accepted=0, finished_at=None).execute()
    sending.expand(str(kept.id))
    assert Notification.select().count() == len(ROWS)
    assert RecipientList.get_by_id(kept.id).accepted == len(ROWS)


def test_a_checked_row_is_accepted_without_a_second_validation(ws, redis, monkeypatch):
    """The upload's check ran the API's field rules on every row; the send takes each row
    as a typed request built from it, and never runs them again."""
    kept = _kept(ws)
    checked: list[object] = []
    monkeypatch.setattr(rows, "validate_request", checked.append)
    monkeypatch.setattr(validation, "validate_request", checked.append)
    sending.start(kept, None)
    _run_jobs(redis)
    assert checked == []
    assert RecipientList.get_by_id(kept.id).accepted == len(ROWS)


def test_a_list_takes_its_units_from_a_counter_redis_lost(ws, redis):
    """Rebuilt from the database first, as a send's admission rebuilds it."""
    factories.notification(ws, factories.email_payload())  # one unit used this month
    kept = _kept(ws)
    Account.update(monthly_limit=5).where(Account.id == ws.account_id).execute()
    redis.delete(allowance.key(str(ws.account_id)))
    sending.start(RecipientList.get_by_id(kept.id), None)
    assert int(redis.get(allowance.key(str(ws.account_id)))) == 5


def test_the_allowance_is_taken_for_the_whole_list_first(ws, redis):
    kept = _kept(ws)
    Account.update(monthly_limit=3).where(Account.id == ws.account_id).execute()
    with pytest.raises(SendRefused, match="fewer than 4"):
        sending.start(RecipientList.get_by_id(kept.id), None)
    assert RecipientList.get_by_id(kept.id).status == "checked"
    assert Notification.select().count() == 0 and _queued(redis, BULK_QUEUE_NAME) == []
    Account.update(monthly_limit=10).where(Account.id == ws.account_id).execute()
    sending.start(RecipientList.get_by_id(kept.id), None)
    assert int(redis.get(allowance.key(str(ws.account_id)))) == 4
    _run_jobs(redis)
    assert int(redis.get(allowance.key(str(ws.account_id)))) == 4


def test_a_cancelled_list_sends_no_row_it_had_not_accepted(ws, redis, monkeypatch):
    monkeypatch.setattr(sending, "BATCH_ROWS", 1)
    monkeypatch.setattr(sending, "BATCH_SECONDS", 0.0)  # one batch per job
    kept = _kept(ws)
    sending.start(kept, None)
    (job,) = _queued(redis, BULK_QUEUE_NAME)
    redis.lrem(f"rq:queue:{BULK_QUEUE_NAME}", 1, job)
    assert sending.expand(str(kept.id)) == 1  # one row, then its continuation enqueued
    assert f"list-{kept.id.hex}-1" in _queued(redis, BULK_QUEUE_NAME)
    assert cancelling.cancel(RecipientList.get_by_id(kept.id)) is True
    _run_jobs(redis)
    kept = RecipientList.get_by_id(kept.id)
    assert (kept.status, kept.accepted, Notification.select().count()) == ("cancelled", 1, 1)
    assert kept.finished_at is not None
    # The three rows never accepted, and the one taken back from the queue, gave their
    # allowance back.
    assert Notification.get().status == "cancelled" and kept.cancelled == 1
    assert int(redis.get(allowance.key(str(ws.account_id)))) == 0
    assert cancelling.cancel(kept) is False


def test_a_cancel_stops_every_queued_row_and_reports_count_them(ws, redis):
    kept = _kept(ws)
    sending.start(kept, None)
    _run_jobs(redis)  # every row accepted: four notifications queued for the worker
    first = Notification.get(Notification.correlation_id == f"list-{kept.id.hex}-2")
    assert deliver_notification(str(first.id)) == "delivered"  # one went before the cancel
    assert cancelling.cancel(progress.summary(ws, kept.id)) is True
    for n in Notification.select():
        assert deliver_notification(str(n.id)) in ("skipped", "delivered")
    assert InboxMessage.select().count() == 1
    statuses = sorted(n.status for n in Notification.select())
    assert statuses == ["cancelled", "cancelled", "cancelled", "delivered"]
    shown = progress.progress(progress.summary(ws, kept.id))
    assert dict(shown.shown)["Cancelled"] == 3 and dict(shown.shown)["Queued"] == 0
    assert shown.kept.cancelled == 3
    assert shown.sentence == ("Cancelled: 3 of 4 rows were stopped and are not sent (0 never "
                              "accepted, 3 taken back from the queue); 1 had already gone to "
                              "the provider.")
    # The three stopped rows gave their units back, and the database agrees on a rebuild.
    assert int(redis.get(allowance.key(str(ws.account_id)))) == 1
    assert allowance.used_this_month(str(ws.account_id)) == 1
    chosen = filters.parse(ws.id, {"list": str(kept.id), "status": "cancelled"})
    from engine.reports import counts

    assert counts.counts(chosen).totals["Cancelled"] == 3


def test_a_cancel_after_every_row_went_says_it_came_too_late(ws, redis):
    kept = _kept(ws)
    sending.start(kept, None)
    _run_jobs(redis)
    for n in Notification.select():
        deliver_notification(str(n.id))
    # The job had not yet recorded its end when the cancel came.
    RecipientList.update(status="sending", finished_at=None).execute()
    assert cancelling.cancel(progress.summary(ws, kept.id)) is True
    shown = progress.progress(progress.summary(ws, kept.id))
    assert shown.sentence.startswith("The cancel came too late: all 4 accepted rows had "
                                     "already gone to the provider")
    assert InboxMessage.select().count() == 4


def test_a_row_the_send_refuses_is_recorded_and_the_rest_go(ws, redis, monkeypatch):
    kept = _kept(ws)
    sending.start(kept, None)
    # The rows were checked; the channel's rules at the send can still refuse one.
    real = rows.resolve_version

    def resolve_version(body, *args, **kwargs):
        if body["emailOptions"]["overrideRecipients"] == ["grace@example.net"]:
            raise ApiError(422, "sender.not_verified", "not a verified sender")
        return real(body, *args, **kwargs)

    monkeypatch.setattr(rows, "resolve_version", resolve_version)
    _run_jobs(redis)
    kept = RecipientList.get_by_id(kept.id)
    assert kept.accepted == 3 and [r[0] for r in kept.refused] == [3]
    assert int(redis.get(allowance.key(str(ws.account_id)))) == 3


def test_the_list_is_a_reports_filter(ws, redis):
    kept = _kept(ws)
    other = factories.notification(ws, factories.email_payload())
    sending.start(kept, None)
    _run_jobs(redis)
    chosen = filters.parse(ws.id, {"list": str(kept.id)})
    assert chosen.list_id == kept.id
    from engine.reports import feed

    page = feed.feed(chosen, None)
    assert len(page.rows) == 4 and other.id not in {r.id for r in page.rows}
    with pytest.raises(filters.FilterError):
        filters.parse(ws.id, {"list": "nope"})
    assert [lst.id for lst in progress.sent_lists(ws)] == [kept.id]


def test_a_list_whose_job_cannot_be_enqueued_is_not_left_sending(ws, redis, monkeypatch):
    kept = _kept(ws)

    def refused(*args, **kwargs):
        raise ConnectionError("redis is away")

    monkeypatch.setattr(sending, "enqueue", refused)
    with pytest.raises(SendRefused, match="could not be started"):
        sending.start(kept, None)
    kept = RecipientList.get_by_id(kept.id)
    assert (kept.status, kept.sent_at) == ("checked", None)
    assert int(redis.get(allowance.key(str(ws.account_id)))) == 0


def test_a_list_whose_job_redis_lost_goes_on_from_where_it_stood(ws, redis, monkeypatch):
    monkeypatch.setattr(sending, "BATCH_ROWS", 1)
    monkeypatch.setattr(sending, "BATCH_SECONDS", 0.0)
    kept = _kept(ws)
    sending.start(kept, None)
    assert recovery.resume_if_lost(RecipientList.get_by_id(kept.id)) is False  # it has a job
    (job,) = _queued(redis, BULK_QUEUE_NAME)
    redis.lrem(f"rq:queue:{BULK_QUEUE_NAME}", 1, job)
    sending.expand(str(kept.id))  # one row, its continuation enqueued
    redis.flushall()  # Redis lost everything: the continuation and the rows' jobs
    assert recovery.resume_if_lost(RecipientList.get_by_id(kept.id)) is True
    assert _queued(redis, BULK_QUEUE_NAME) == [f"list-{kept.id.hex}-1"]
    _run_jobs(redis)
    kept = RecipientList.get_by_id(kept.id)
    assert (kept.status, kept.accepted, Notification.select().count()) == ("sent", 4, 4)
    assert recovery.resume_if_lost(kept) is False


def test_a_batch_racing_another_run_falls_back_to_one_by_one(ws, redis, monkeypatch):
    kept = _kept(ws)
    sending.start(kept, None)
    _run_jobs(redis)
    RecipientList.update(status="sending", accepted=0, finished_at=None).execute()

    class Unseen:  # as if another run inserted the rows between the look-up and the insert
        idempotency_key = Notification.idempotency_key
        workspace = Notification.workspace

        @staticmethod
        def select(*args):
            return Notification.select(*args).where(Notification.id.is_null())

    monkeypatch.setattr(sending, "Notification", Unseen)
    sending.expand(str(kept.id))
    assert Notification.select().count() == len(ROWS)
    assert RecipientList.get_by_id(kept.id).accepted == len(ROWS)
