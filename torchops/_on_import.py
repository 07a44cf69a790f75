"""Running a registration when a heavy module is first imported, instead of importing it.

torch.distributed.tensor (about half a second) and torch._dynamo (over a second) cost far
more than torchops's own import, and most programs never load them. torchops registers
what they need (DTensor sharding rules, torch.compile's twins of the compiled functions) at
once if the module is loaded, and otherwise right after whoever imports it first has
imported it, before any of its users can run: a one-shot finder on ``sys.meta_path`` wraps
the module's loader for that one import.
"""
from __future__ import annotations

import importlib.abc
import sys
import warnings
from collections.abc import Callable

_pending: dict[str, list[tuple[Callable[[], None], str]]] = {}


def _run(module_name: str) -> None:
    for register, what in _pending.pop(module_name, []):
        try:
            register()
        except Exception as error:  # never break the user's import of that module
            warnings.warn(f"torchops: {what} could not be registered: {error!r}", stacklevel=3)
    if not _pending and _watcher in sys.meta_path:
        sys.meta_path.remove(_watcher)


class _RegisterAfterLoad(importlib.abc.Loader):
    """Loads the module with its own loader, then runs what waits for it."""

    def __init__(self, loader: importlib.abc.Loader, module_name: str) -> None:
        self._loader = loader
        self._module_name = module_name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        # Put the real loader back first: the module must look as if we had never been here.
        module.__loader__ = module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _run(self._module_name)


class _WatchImports(importlib.abc.MetaPathFinder):
    """Waits, on sys.meta_path, for the first import of each pending module."""

    def find_spec(self, name, path, target=None):
        if name not in _pending:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _RegisterAfterLoad(spec.loader, name)
                return spec
        return None


_watcher = _WatchImports()


def call_when_imported(module_name: str, register: Callable[[], None], what: str) -> None:
    """Calls `register` now if `module_name` is imported, else right after its first import.
    A failure becomes a warning naming `what`."""
    _pending.setdefault(module_name, []).append((register, what))
    if module_name in sys.modules:
        _run(module_name)
    elif _watcher not in sys.meta_path:
        sys.meta_path.insert(0, _watcher)
