"""Triton kernels for the devices Triton compiles for: CUDA and XPU tensors (and CPU ones,
through Triton's interpreter, under ``TORCHOPS_CPU_KERNELS=triton``).

On every backend without a kernel of its own, an op runs its device-generic entry
(csrc/ops/composite.cpp): the CPU kernels' checks, the result allocated (or out= resized)
as they do it, then the op's compute op, a private op (``torchops::_<name>_compute``:
``_bitshift_compute``, ``_signbit_compute``, ...) whose own kernel is made of ATen ops. Here
the compute ops get Triton kernels (torchops/_triton_kernels.py) for CUDA and XPU when
Triton is installed: one pass over memory per call, broadcast and strided operands included.
A C++ program, a device Triton does not compile for, or a machine without Triton keeps the
ATen kernels, with the same answers.

Triton is imported when the first call of a compute op arrives, not by ``import torchops``;
if that import fails, the Triton kernels are taken out again (a warning says why) and the
ATen kernels run from then on.
"""
from __future__ import annotations

import importlib.util
import os
import warnings

import torch

#: The dispatch keys the Triton kernels are registered for.
DEVICES = ("CUDA", "XPU")


def _compute_ops() -> dict:
    """The compute ops the operator library registers (csrc/overloads.h's
    TORCHOPS_FOR_EACH_COMPUTE: ``torchops::_<name>_compute``), each by the launcher of
    torchops/_triton_kernels.py that computes it (``<name>_compute``)."""
    compute_ops = {}
    for qualified in torch._C._dispatch_get_all_op_names():
        namespace, _, op = qualified.partition("::")
        if namespace == "torchops" and op.startswith("_") and op.endswith("_compute") and "." not in op:
            compute_ops[op] = op[1:]
    return dict(sorted(compute_ops.items()))


#: The compute ops, by their launchers: read from the dispatcher, so that the list is the
#: loaded library's (torchops/__init__.py loads it before it imports this module).
COMPUTE_OPS = _compute_ops()

_state: dict = {}  # "library": the registrations, "kernels": the imported launchers


def available() -> bool:
    """Whether Triton is installed (without importing it)."""
    return importlib.util.find_spec("triton") is not None


def registered() -> tuple:
    """The dispatch keys that have the Triton kernels now."""
    return _state.get("keys", ())


def register(cpu: bool = False) -> None:
    """Registers the Triton kernels for CUDA and XPU, and for the CPU when `cpu` (the
    interpreter: ``TORCHOPS_CPU_KERNELS=triton``, which sees to ``TRITON_INTERPRET=1``)."""
    if cpu:
        # Read by triton.jit when the kernels are defined, at their module's import.
        os.environ["TRITON_INTERPRET"] = "1"
    library = torch.library.Library("torchops", "IMPL")
    keys = DEVICES + (("CPU",) if cpu else ())
    for op_name, launcher in COMPUTE_OPS.items():
        for key in keys:
            library.impl(op_name, _kernel(op_name, launcher), key)
    _state.update(library=library, keys=keys, strict=cpu)


def unregister() -> None:
    """Takes the Triton kernels out: the ATen ones run on every device (tests/test_cuda.py
    checks both paths of a device this way)."""
    library = _state.pop("library", None)
    if library is not None:
        library._destroy()
    _state["keys"] = ()


def _kernel(op_name: str, launcher: str):
    def kernel(*args):
        kernels = _state.get("kernels") or _import_kernels()
        if kernels is None:  # Triton failed to import: the ATen kernels, now registered alone
            return getattr(torch.ops.torchops, op_name)(*args)
        return getattr(kernels, launcher)(*args)

    kernel.__name__ = f"{op_name}_triton"
    return kernel


def _import_kernels():
    try:
        from torchops import _triton_kernels
    except Exception as error:
        if _state.get("strict"):  # TORCHOPS_CPU_KERNELS=triton asked for Triton itself
            raise
        unregister()
        warnings.warn(f"torchops: Triton could not be imported ({error!r}); the ops run their ATen compute "
                      "kernels on every device", stacklevel=3)
        return None
    _state["kernels"] = _triton_kernels
    return _triton_kernels
