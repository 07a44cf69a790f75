"""The compiled functions of the typed API (the C extension ``torchops._binding``).

Each function of ``torchops.ops`` has a compiled function of the same signature
(binding/python_binding.cpp), which the function calls from Python. The compiled function
calls the operator through the dispatcher when every tensor argument is a plain
``torch.Tensor``, no TorchFunctionMode is active and the arguments are of the common kinds;
every other call goes unchanged to its *twin* in torchops/_twins.py, which reaches the
operator through ``torch.ops`` and owns the argument checks and messages. Either way the op is dispatched
once: a call the compiled function takes has passed every check of the twin, and the
compiled function says the op's errors as the twin does, naming the function called.
torch.compile traces the twin instead of the function and its compiled function
(``torch.compiler.substitute_in_graph``, see compile_as_twins), so compiled graphs hold the
same ``torchops::`` ops.

``FUNCTIONS`` maps each function's name to what it calls from Python: the compiled function,
or the twin when the binding is missing or failed to load. ``TORCHOPS_CALL_PATH=torch.ops``
sends every call of the compiled functions to their twins (to rule the binding out when
chasing a bug).
"""
from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator

from torchops import _on_import
from torchops._twins import TWINS as _TWINS  # the binding checks that it has a compiled function for each, and no other
from torchops._twins import HammingTopk as _HammingTopk  # hamming_topk's result, which the binding makes too
from torchops._twins import say_as as _say_as

_CALL_PATHS = ("binding", "torch.ops")
_requested = os.environ.get("TORCHOPS_CALL_PATH", "binding")
if _requested not in _CALL_PATHS:
    raise ImportError(f"torchops: TORCHOPS_CALL_PATH must be one of {', '.join(_CALL_PATHS)}, got {_requested!r}")


def _load() -> tuple[object | None, dict[str, Callable]]:
    """The binding module and the functions to export; (None, twins) without it."""
    try:
        from torchops import _binding
    except ImportError as error:
        warnings.warn(
            f"torchops: the compiled binding torchops._binding could not be loaded ({error}); "
            "the typed API calls the operators through torch.ops, about 2 us slower per call. "
            "Rebuild with `pip install --no-build-isolation -e .`",
            stacklevel=3,
        )
        return None, dict(_TWINS)
    return _binding, _binding._connect(_TWINS, _say_as, _HammingTopk)


_binding, FUNCTIONS = _load()
if _binding is not None and _requested == "torch.ops":
    _binding._use_torch_ops(True)


def call_path() -> str:
    """How the typed API reaches the operators: ``"binding"`` (the compiled functions; calls
    with tensor subclasses or under a TorchFunctionMode still go through ``torch.ops``) or
    ``"torch.ops"`` (the binding is missing, or ``TORCHOPS_CALL_PATH=torch.ops`` is set)."""
    return "binding" if _binding is not None and not _binding._using_torch_ops() else "torch.ops"


@contextlib.contextmanager
def torch_ops_only() -> Iterator[None]:
    """Within the block, every call of the compiled functions goes to its twin (tests)."""
    if _binding is None:
        yield
        return
    before = _binding._use_torch_ops(True)
    try:
        yield
    finally:
        _binding._use_torch_ops(before)


def _signature_text(function: Callable) -> str:
    """"(x, y, direction, arithmetic=True, out=None)": a Python function's parameters (all
    positional-or-keyword here) as a builtin's ``__text_signature__`` gives them; read from
    its code object, a few microseconds, where inspect.signature takes a hundred."""
    code, defaults = function.__code__, function.__defaults__ or ()
    names = code.co_varnames[:code.co_argcount]
    if code.co_kwonlyargcount or code.co_flags & 0x0C:  # keyword-only, *args or **kwargs
        raise TypeError(f"torchops: {function.__qualname__} takes other than positional-or-keyword parameters")
    required = len(names) - len(defaults)
    return "(" + ", ".join(name if i < required else f"{name}={defaults[i - required]!r}"
                           for i, name in enumerate(names)) + ")"


def check_declarations(module_globals: dict) -> None:
    """Raises ImportError unless each compiled function has its typed function in torchops.ops
    (``module_globals``) and each typed function's twin, compiled function and TorchScript
    signatures (its ``@overload`` stubs) have the parameters of its declaration there:
    names, order and defaults. Their bodies must differ; their signatures are written beside
    them, and held to the declaration here, at every import."""
    from torch import _jit_internal

    missing = [name for name in FUNCTIONS if name not in module_globals]
    if missing:
        raise ImportError(f"torchops: the binding has a compiled function for {', '.join(missing)} and "
                          "torchops/ops.py declares no such function: declare it there (its signature, docstring "
                          "and TorchScript body)")
    # TorchScript's registry of the stubs (private; a torch without it has no stubs to check).
    stubs_of = getattr(_jit_internal, "_get_fn_overloads", lambda name: None)
    for name in FUNCTIONS:
        function = module_globals[name]
        want = _signature_text(function)
        others = {"twin": _signature_text(_TWINS[name]),
                  "compiled function": getattr(FUNCTIONS[name], "__text_signature__", None) or _signature_text(FUNCTIONS[name])}
        stubs = stubs_of(_jit_internal._qualified_name(function)) or []
        others.update((f"TorchScript signature {i + 1}", _signature_text(stub)) for i, stub in enumerate(stubs))
        for what, got in others.items():
            if got != want:
                raise ImportError(f"torchops: the {what} of {name} takes {got}, its declaration (torchops.ops) {want}")


def compile_as_twins(functions: dict[str, Callable]) -> None:
    """Has torch.compile trace each twin in place of the typed function of its name (from
    torchops.ops) and of its compiled function, once torch._dynamo is imported (which costs more
    than a second, so whoever needs it imports it). Traced in their place, the functions
    themselves cost no guard but their identity: Dynamo would otherwise guard the typed
    function's code, defaults and globals, and cannot trace a C function at all."""
    def substitute() -> None:
        import torch

        for name, twin in _TWINS.items():
            torch.compiler.substitute_in_graph(functions[name])(twin)
            if FUNCTIONS[name] is not twin:  # the binding's compiled function
                torch.compiler.substitute_in_graph(FUNCTIONS[name])(twin)

    _on_import.call_when_imported("torch._dynamo", substitute, "the typed API's graph twins")
