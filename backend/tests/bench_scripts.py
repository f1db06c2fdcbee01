"""Load a script of ``bench/`` as a module, for tests that call its functions directly."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def load_script(relative: str, name: str) -> ModuleType:
    """The script at ``REPO/relative``, executed as a fresh module called ``name``."""
    spec = importlib.util.spec_from_file_location(name, REPO / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it is executed
    spec.loader.exec_module(module)
    return module
