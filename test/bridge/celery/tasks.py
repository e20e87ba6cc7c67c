"""Celery tasks as a team runs them: an ordinary Celery module that imports only celery (and the standard
library) and knows nothing of MCP or taskgate. The broker and the result backend come from the worker's
command line (`celery -A tasks --broker URL --result-backend URL worker`).
"""

import time

from celery import Celery
from celery.utils.log import get_task_logger

app = Celery("tasks")
logger = get_task_logger(__name__)


@app.task(name="reports.render_pdf", bind=True)
def render_pdf(self, path, dpi=72):
    logger.warning("ran %s", self.request.id)
    return {"path": path, "dpi": dpi, "pages": len(path)}


@app.task(name="reports.paginate", bind=True)
def paginate(self, pages, step_ms=100):
    logger.warning("ran %s", self.request.id)
    for page in range(1, pages + 1):
        time.sleep(step_ms / 1000)
        self.update_state(state="PROGRESS", meta={"current": page, "total": pages, "message": f"page {page}"})
    return {"pages": pages}


@app.task(name="reports.explode", bind=True)
def explode(self, reason):
    logger.warning("ran %s", self.request.id)
    raise ValueError(reason)


@app.task(name="reports.flaky", bind=True, max_retries=3)
def flaky(self, fail_times, countdown_s=0.2):
    logger.warning("ran %s", self.request.id)
    if self.request.retries < fail_times:
        raise self.retry(exc=ConnectionError("printer offline"), countdown=countdown_s)
    return f"printed after {self.request.retries} retries"


@app.task(name="reports.sleepy", bind=True, track_started=True)
def sleepy(self, seconds):
    logger.warning("ran %s", self.request.id)
    time.sleep(seconds)
    logger.warning("finished %s", self.request.id)
    return f"slept {seconds} s"
