"""Floors for the API figures: bare Flask endpoints in the same server configuration."""

from __future__ import annotations

import os
import uuid

from flask import Flask, jsonify
from redis import Redis
from rq import Queue

app = Flask(__name__)
_queue = Queue("bench-floor", connection=Redis.from_url(os.environ["HERALD_REDIS_URL"]))


@app.post("/enqueue")
def enqueue():
    """One RQ enqueue and a 202: the least a durable send endpoint can do."""
    job_id = str(uuid.uuid4())
    _queue.enqueue("bench.floor_jobs.noop", job_id, job_id=job_id)
    return jsonify(accepted=True, correlationId=job_id), 202


@app.post("/json")
def json_endpoint():
    return jsonify(ok=True)
