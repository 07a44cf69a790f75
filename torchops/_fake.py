"""Fake (meta) kernels: shapes, dtypes, strides and errors of every overload, without data.

torch.compile, torch.export and FakeTensorMode run these instead of the C++ kernels. Each
check repeats its twin in csrc/ops/ with the same exception type and the same words, and
tests/test_errors.py compares the two messages.
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch._prims_common import (
    apply_perm,
    compute_elementwise_output_logical_to_physical_perm,
    invert_perm,
    is_cpu_scalar_tensor,
    make_contiguous_strides_for,
)

from torchops._contract import BITSHIFT as _OP
from torchops._contract import BITSHIFT_INPLACE as _INPLACE_OP
from torchops._contract import (
    DIRECTION_NAMES, DIRECTIONS, SHIFT_DTYPE_NAMES, SHIFT_DTYPES, SIGNBIT, SIGNBIT_DTYPES, SIGNBIT_FLOAT_DTYPE_NAMES,
)
from torchops._contract import dtype_name as _name


def _shape(shape) -> str:
    return str(list(shape))


def _check_shift_dtype(op: str, arg: str, dtype: torch.dtype) -> None:
    torch._check_type(
        dtype in SHIFT_DTYPES,
        lambda: f"{op}: {arg} must be an integer tensor ({SHIFT_DTYPE_NAMES}), got {_name(dtype)}",
    )


def _check_direction(op: str, direction: str) -> None:
    torch._check_value(
        direction in DIRECTIONS,
        lambda: f"{op}: direction must be one of {DIRECTION_NAMES}, got '{direction}'",
    )


def _check_device(op: str, x: Tensor, **others: Tensor) -> None:
    # A meta tensor beside CPU ones dispatches here (Meta outranks CPU); the device-generic
    # kernels (csrc/ops/composite.cpp) say the same of a CUDA tensor beside a CPU one.
    for name, tensor in others.items():
        torch._check(
            tensor.device == x.device,
            lambda: f"{op}: {name} is on device {tensor.device} but x is on device {x.device}; "
            "all tensors must be on one device",
        )


def _result_type(op: str, x: Tensor, y: Tensor) -> torch.dtype:
    _check_shift_dtype(op, "x", x.dtype)
    _check_shift_dtype(op, "y", y.dtype)
    try:
        return torch.result_type(x, y)
    except RuntimeError:
        raise TypeError(
            f"{op}: x ({_name(x.dtype)}) and y ({_name(y.dtype)}) have no common dtype (PyTorch promotes uint16, "
            f"uint32 and uint64 only with their own dtype); shift by y.to(torch.{_name(x.dtype)}), or by a Python int"
        ) from None


def _broadcast_shape(op: str, x: Tensor, y: Tensor) -> torch.Size:
    try:
        return torch.broadcast_shapes(x.shape, y.shape)
    except RuntimeError:
        raise RuntimeError(
            f"{op}: x of shape {_shape(x.shape)} and y of shape {_shape(y.shape)} do not broadcast"
        ) from None


def _check_out_dtype(op: str, out: Tensor, dtype: torch.dtype) -> None:
    torch._check(
        out.dtype == dtype,
        lambda: f"{op}: out has dtype {_name(out.dtype)} but the result has dtype {_name(dtype)}; "
        f"out= does not convert, pass an out of dtype {_name(dtype)}",
    )


def _scalar_dtype_name(y) -> str:
    """The dtype c10::Scalar reports for a Python number, as the C++ message names it."""
    if isinstance(y, (bool, torch.SymBool)):
        return "bool"
    if isinstance(y, (float, torch.SymFloat)):
        return "float64"
    if isinstance(y, complex):
        return "complex128"
    return type(y).__name__


def _check_scalar_count(op: str, y) -> None:
    torch._check_type(
        isinstance(y, (int, torch.SymInt)) and not isinstance(y, bool),
        lambda: f"{op}: y must be an integer, got a {_scalar_dtype_name(y)} scalar",
    )


def _elementwise_empty(inputs: tuple[Tensor, ...], shape, dtype: torch.dtype) -> Tensor:
    """The output TensorIterator allocates for a pointwise op: the inputs' memory order."""
    expanded = [t.expand(shape) for t in inputs if not is_cpu_scalar_tensor(t)]
    perm, _ = compute_elementwise_output_logical_to_physical_perm(*expanded, _skip_checks=True) if expanded else ([], False)
    if len(perm) != len(shape):
        perm = list(range(len(shape)))
    strides = apply_perm(make_contiguous_strides_for(apply_perm(shape, perm)), invert_perm(perm))
    return torch.empty_strided(shape, strides, dtype=dtype, device=inputs[0].device)


def _resized_out(out: Tensor, inputs: tuple[Tensor, ...], shape) -> Tensor:
    """out, resized as the kernels resize it (TensorIterator): an out of another shape takes
    the result's shape in the inputs' memory order, as a new output would. The out=
    overloads return it."""
    if out.shape != shape:
        out.resize_(shape)
        out.as_strided_(shape, _elementwise_empty(inputs, shape, out.dtype).stride())
    return out


@torch.library.register_fake("torchops::bitshift")
def _bitshift(x, y, direction, arithmetic=True):
    _check_device(_OP, x, y=y)
    dtype = _result_type(_OP, x, y)
    _check_direction(_OP, direction)
    shape = _broadcast_shape(_OP, x, y)
    return _elementwise_empty((x, y), shape, dtype)


@torch.library.register_fake("torchops::bitshift.out")
def _bitshift_out(x, y, direction, arithmetic=True, *, out):
    _check_device(_OP, x, y=y, out=out)
    dtype = _result_type(_OP, x, y)
    _check_direction(_OP, direction)
    _check_out_dtype(_OP, out, dtype)
    return _resized_out(out, (x, y), _broadcast_shape(_OP, x, y))


@torch.library.register_fake("torchops::bitshift_")
def _bitshift_inplace(x, y, direction, arithmetic=True):
    _check_device(_INPLACE_OP, x, y=y)
    dtype = _result_type(_INPLACE_OP, x, y)
    _check_direction(_INPLACE_OP, direction)
    torch._check(
        dtype == x.dtype,
        lambda: f"{_INPLACE_OP}: the result dtype {_name(dtype)} (promoted from x {_name(x.dtype)} and y "
        f"{_name(y.dtype)}) differs from x's dtype {_name(x.dtype)}; an in-place shift cannot change x's dtype",
    )
    shape = _broadcast_shape(_INPLACE_OP, x, y)
    torch._check(
        shape == x.shape,
        lambda: f"{_INPLACE_OP}: the result has the broadcast shape {_shape(shape)} but x has shape "
        f"{_shape(x.shape)}; an in-place shift cannot change x's shape",
    )
    return x


@torch.library.register_fake("torchops::bitshift.Scalar")
def _bitshift_scalar(x, y, direction, arithmetic=True):
    _check_shift_dtype(_OP, "x", x.dtype)
    _check_direction(_OP, direction)
    _check_scalar_count(_OP, y)
    return _elementwise_empty((x,), x.shape, x.dtype)


@torch.library.register_fake("torchops::bitshift.Scalar_out")
def _bitshift_scalar_out(x, y, direction, arithmetic=True, *, out):
    _check_device(_OP, x, out=out)
    _check_shift_dtype(_OP, "x", x.dtype)
    _check_direction(_OP, direction)
    _check_scalar_count(_OP, y)
    _check_out_dtype(_OP, out, x.dtype)
    return _resized_out(out, (x,), x.shape)


@torch.library.register_fake("torchops::bitshift_.Scalar")
def _bitshift_scalar_inplace(x, y, direction, arithmetic=True):
    _check_shift_dtype(_INPLACE_OP, "x", x.dtype)
    _check_direction(_INPLACE_OP, direction)
    _check_scalar_count(_INPLACE_OP, y)
    return x


def _check_signbit_dtype(dtype: torch.dtype) -> None:
    torch._check_type(
        dtype in SIGNBIT_DTYPES,
        lambda: f"{SIGNBIT}: x must be a {SIGNBIT_FLOAT_DTYPE_NAMES}, integer or bool tensor, "
        f"got {_name(dtype)}",
    )


@torch.library.register_fake("torchops::signbit")
def _signbit(x):
    _check_signbit_dtype(x.dtype)
    return _elementwise_empty((x,), x.shape, torch.bool)


@torch.library.register_fake("torchops::signbit.out")
def _signbit_out(x, *, out):
    _check_device(SIGNBIT, x, out=out)
    _check_signbit_dtype(x.dtype)
    torch._check(
        out.dtype == torch.bool,
        lambda: f"{SIGNBIT}: out has dtype {_name(out.dtype)} but the result has dtype bool; "
        "out= does not convert, pass an out of dtype bool",
    )
    return _resized_out(out, (x,), x.shape)
