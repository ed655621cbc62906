"""The fake Lunch Flow server in a process of its own, for the sync workloads.

A household's provider is another machine: serving its pages (encoding 100,000 rows as JSON,
writing them to the socket) is not the sync's work. Served from a thread of the bench's own
process, it took the interpreter lock from the sync's threads (0.2 s of a first sync's 2.6 s
of Python, bench/README.md) and counted as our CPU. The server is forked with the scenario as
it is when it starts: a scenario changed afterwards is served by a new one."""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

_START_TIMEOUT = 30.0


def _serve(scenario: Any, pipe: Connection) -> None:
    # The forked child never touches the database connections it inherited (closing one
    # would end the parent's session), and leaves by os._exit, which closes none either.
    from providers.testing.lunchflow_server import FakeLunchFlow

    server = FakeLunchFlow(scenario).start()
    pipe.send(server.base_url)
    pipe.recv()  # until told to stop
    server.stop()
    pipe.send(len(scenario.requests))


class LunchFlowApart:
    """with LunchFlowApart(scenario) as upstream: settings.LUNCHFLOW_BASE_URL = upstream.base_url
    (after the block, `requests`: how many requests it answered)."""

    def __init__(self, scenario: Any) -> None:
        self.scenario = scenario
        self.base_url = ""
        self.requests = 0

    def __enter__(self) -> LunchFlowApart:
        context = multiprocessing.get_context("fork")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(self.scenario, child), daemon=True)
        self._process.start()
        if not self._pipe.poll(_START_TIMEOUT):
            self._process.kill()
            raise RuntimeError("the fake Lunch Flow server did not start")
        self.base_url = self._pipe.recv()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._pipe.send("stop")
            if self._pipe.poll(_START_TIMEOUT):
                self.requests = self._pipe.recv()
        finally:
            self._process.join(5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
