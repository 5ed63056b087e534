"""The Celery app of the scanner worker: broker and result backend from REDIS_URL.

Started as OpenRelik starts its workers:
    celery --app=src.app worker --task-events -Q openrelik-worker-scanner
"""

import os

from celery.app import Celery

REDIS_URL = os.getenv("REDIS_URL")

celery = Celery(
    broker=REDIS_URL,
    backend=REDIS_URL,
    include=["src.timeline", "src.html_report", "src.integrity"],
)
# A scan is long: each worker process takes one task at a time, so that a second worker
# takes the next task rather than it waiting behind the first.
celery.conf.worker_prefetch_multiplier = 1
