"""Which adapter modules exist. A module that is not there yet (SimpleFIN before its branch
lands) is simply not registered: POST /provider_connections answers 422 "not available"."""

from __future__ import annotations

import importlib

ADAPTER_MODULES = ("providers.lunchflow.adapter", "providers.simplefin.adapter")
_loaded = False


def load_adapters() -> None:
    global _loaded
    if _loaded:
        return
    for module in ADAPTER_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not module.startswith(exc.name):
                raise
    _loaded = True
