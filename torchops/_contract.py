"""The facts of the contract (docs/semantics.md) that more than one Python module needs: the
ops' names as messages say them, their overloads, the dtypes they take and the directions.

_twins.py, _fake.py, _vmap.py, _inductor.py, _sharding.py and onnx.py take them from here,
so that adding a dtype is one edit on the Python side (csrc/ops/common.h has the C++ side's
own; tests/test_torch_integration.py checks that the fake kernels' messages are the ops').
The overloads are read from the registered library (csrc/overloads.h's list), so this is
imported once it is loaded (``torchops/__init__.py``); tests/test_coverage.py checks that
every integration covers each of them.
"""
from __future__ import annotations

import torch

#: The ops as every message names them.
BITSHIFT = "torchops.bitshift"
BITSHIFT_INPLACE = "torchops.bitshift_"
SIGNBIT = "torchops.signbit"

#: The dtypes a shift takes, for x and for a tensor count.
SHIFT_DTYPES = (
    torch.int8, torch.int16, torch.int32, torch.int64,
    torch.uint8, torch.uint16, torch.uint32, torch.uint64,
)
#: The float dtypes whose IEEE sign bit signbit reads.
SIGNBIT_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
#: Every dtype signbit takes.
SIGNBIT_DTYPES = SHIFT_DTYPES + SIGNBIT_FLOAT_DTYPES + (torch.bool,)
#: The spellings of a shift's direction.
DIRECTIONS = ("LEFT", "RIGHT", "left", "right")

def _registered_overloads() -> tuple:
    """Every public overload the operator library registers (csrc/overloads.h's list), as
    OpOverloads, in the dispatcher's order; the private ops (``_cpu_capability``, ...) aside."""
    overloads = []
    for name in torch._C._dispatch_get_all_op_names():
        namespace, _, qualified = name.partition("::")
        if namespace == "torchops" and not qualified.startswith("_"):
            op, _, overload = qualified.partition(".")
            overloads.append(getattr(getattr(torch.ops.torchops, op), overload or "default"))
    return tuple(sorted(overloads, key=str))


#: Every overload of the ops: the one list that the Python side (fakes, batching rules,
#: lowerings, sharding rules, ONNX translations) and the tests' coverage checks take.
OVERLOADS = _registered_overloads()


def _functional_form(overload) -> object:
    """The functional overload whose result a writing one writes, by ATen's naming:
    bitshift.default for bitshift.out and bitshift_.default, bitshift.Scalar for
    bitshift.Scalar_out and bitshift_.Scalar."""
    op = overload._schema.name.removeprefix("torchops::").removesuffix("_")
    name = overload._overloadname
    if torch.Tag.out in overload.tags:
        name = "default" if name == "out" else name.removesuffix("_out")
    return getattr(getattr(torch.ops.torchops, op), name)


#: Each writing overload (in place, out=) and the functional overload whose result it writes.
FUNCTIONAL_FORM = {overload: _functional_form(overload) for overload in OVERLOADS if overload._schema.is_mutable}
#: Each functional overload that has an out= overload, and that overload.
OUT_FORM = {functional: overload for overload, functional in FUNCTIONAL_FORM.items() if torch.Tag.out in overload.tags}


def dtype_name(dtype: torch.dtype) -> str:
    """A dtype as Python spells it, ``int8`` for ``torch.int8``."""
    return str(dtype).removeprefix("torch.")


def result_dtype(x_dtype: torch.dtype, x_ndim: int, y_dtype: torch.dtype, y_ndim: int) -> torch.dtype:
    """A shift's result dtype (docs/semantics.md section 3): torch.result_type, which sees the
    dtypes and whether an operand is 0-d, as the kernels and the fake kernels do. For graphs
    that hold no tensors (Inductor's IR, ONNX values): meta stand-ins of the same rank."""
    def like(dtype, ndim):
        return torch.empty((1,) * ndim, dtype=dtype, device="meta")

    return torch.result_type(like(x_dtype, x_ndim), like(y_dtype, y_ndim))


#: "int8, int16, ..., uint64", as the messages list them.
SHIFT_DTYPE_NAMES = ", ".join(dtype_name(d) for d in SHIFT_DTYPES)
#: "float16, bfloat16, float32, float64", as the messages list them.
SIGNBIT_FLOAT_DTYPE_NAMES = ", ".join(dtype_name(d) for d in SIGNBIT_FLOAT_DTYPES)
#: "'LEFT', 'RIGHT', 'left', 'right'", as the messages list them.
DIRECTION_NAMES = ", ".join(repr(d) for d in DIRECTIONS)
