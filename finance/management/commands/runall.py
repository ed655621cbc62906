"""Serve the API and admin, and run the Celery worker with beat, in one foreground command.

On the embedded default (no CELERY_BROKER_URL) the worker uses the filesystem broker under
DATA_DIR, so the schedule really fires with no Redis."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Run the web server, the Celery worker and beat together (development and demos)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bind", default="127.0.0.1:8000")
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, *args: object, bind: str, no_worker: bool, **options: object) -> None:
        python = sys.executable
        procs: list[subprocess.Popen] = []
        web = [
            python,
            "-m",
            "gunicorn",
            "--config",
            "python:config.gunicorn",
            "config.wsgi:application",
            "--bind",
            bind,
            "--workers",
            str(max(2, os.cpu_count() or 1)),
            "--threads",
            "4",
            "--access-logfile",
            "-",
        ]
        procs.append(subprocess.Popen(web))
        if not no_worker:
            worker = [
                python,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--beat",
                "--loglevel",
                "INFO",
                "--concurrency",
                "2",
                "--schedule",
                str(settings.CELERY_BEAT_SCHEDULE_FILENAME),
            ]
            procs.append(subprocess.Popen(worker))

        def stop(*_: object) -> None:
            for proc in procs:
                if proc.poll() is None:
                    proc.terminate()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        try:
            while all(proc.poll() is None for proc in procs):
                time.sleep(0.5)
        finally:
            stop()
            for proc in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
