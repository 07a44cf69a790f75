"""Fake (meta) kernels: shapes, dtypes, strides and errors of every overload, without data.

torch.compile, torch.export and FakeTensorMode run these instead of the C++ kernels. They
are made from each op's declaration (torchops/_contract.py's DECLARATIONS: its checks and
result dtype) and from what the overload does (its tags: a new result, out= or in place),
so an op needs no code here. Each check repeats its twin in csrc/ops/ with the same
exception type and the same words; tests/test_torch_integration.py compares the two on
every bad call of tests/calls.py.
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

from torchops._contract import OVERLOADS, declaration_of, op_name
from torchops._contract import dtype_name as _name


def _shape(shape) -> str:
    return str(list(shape))


def _check_device(op: str, x: Tensor, **others: Tensor) -> None:
    # A meta tensor beside CPU ones dispatches here (Meta outranks CPU); the device-generic
    # kernels (csrc/ops/composite.cpp) say the same of a CUDA tensor beside a CPU one.
    for name, tensor in others.items():
        torch._check(
            tensor.device == x.device,
            lambda: f"{op}: {name} is on device {tensor.device} but x is on device {x.device}; "
            "all tensors must be on one device",
        )


def broadcast_shape(op: str, operands: dict):
    """The shape the operands (by name: anything with a ``.shape``) broadcast to, or the op's
    error naming each shape."""
    try:
        return torch.broadcast_shapes(*(operand.shape for operand in operands.values()))
    except RuntimeError:
        shapes = [f"{name} of shape {_shape(operand.shape)}" for name, operand in operands.items()]
        raise RuntimeError(f"{op}: {', '.join(shapes[:-1])} and {shapes[-1]} do not broadcast") from None


def _check_out_dtype(op: str, out: Tensor, dtype: torch.dtype) -> None:
    torch._check(
        out.dtype == dtype,
        lambda: f"{op}: out has dtype {_name(out.dtype)} but the result has dtype {_name(dtype)}; "
        f"out= does not convert, pass an out of dtype {_name(dtype)}",
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


def bind(overload, args: tuple, kwargs: dict) -> list:
    """The values of an overload's arguments in its schema's order, defaults filled in and
    ``out`` left out: a call may pass an argument by name, or leave one at its default."""
    values = []
    for i, argument in enumerate(overload._schema.arguments):
        if argument.name == "out":
            continue
        if i < len(args):
            values.append(args[i])
        elif argument.name in kwargs:
            values.append(kwargs[argument.name])
        else:
            values.append(argument.default_value)
    return values


def kind_of(overload) -> str:
    """What an overload does with its result: "functional", "out" or "inplace" (its tags)."""
    if torch.Tag.out in overload.tags:
        return "out"
    return "inplace" if torch.Tag.inplace in overload.tags else "functional"


def argument_names(overload) -> list:
    """The names of an overload's arguments, ``out`` aside, in its schema's order (bind's)."""
    return [argument.name for argument in overload._schema.arguments if argument.name != "out"]


def _check_inplace_dtype(op: str, noun: str, dtype: torch.dtype, operands: dict) -> None:
    x = operands["x"]
    promoted = " and ".join(f"{name} {_name(t.dtype)}" for name, t in operands.items())
    torch._check(
        dtype == x.dtype,
        lambda: f"{op}: the result dtype {_name(dtype)} (promoted from {promoted}) differs from x's dtype "
        f"{_name(x.dtype)}; an in-place {noun} cannot change x's dtype",
    )


def _check_inplace_shape(op: str, noun: str, shape, x: Tensor) -> None:
    torch._check(
        shape == x.shape,
        lambda: f"{op}: the result has the broadcast shape {_shape(shape)} but x has shape {_shape(x.shape)}; "
        f"an in-place {noun} cannot change x's shape",
    )


def _fake_kernel(overload):
    """The fake kernel of `overload`: the device check, the op's own checks (its
    declaration), then what its kind does with the result, in its C++ entry's order."""
    op, declaration, kind = op_name(overload), declaration_of(overload), kind_of(overload)
    names = argument_names(overload)

    def fake(*args, **kwargs):
        values = bind(overload, args, kwargs)
        operands = {name: value for name, value in zip(names, values) if isinstance(value, Tensor)}
        x = values[0]
        out = kwargs.get("out")
        others = {name: t for name, t in operands.items() if name != "x"}
        _check_device(op, x, **others, **({"out": out} if kind == "out" else {}))
        dtype = declaration.check(op, *values)
        if kind == "out":
            _check_out_dtype(op, out, dtype)
            return _resized_out(out, tuple(operands.values()), broadcast_shape(op, operands))
        if kind == "inplace":
            _check_inplace_dtype(op, declaration.noun, dtype, operands)
            _check_inplace_shape(op, declaration.noun, broadcast_shape(op, operands), x)
            return x
        return _elementwise_empty(tuple(operands.values()), broadcast_shape(op, operands), dtype)

    fake.__name__ = f"{overload._schema.name.removeprefix('torchops::')}_{overload._overloadname}_fake"
    return fake


for _overload in OVERLOADS:
    torch.library.register_fake(_overload)(_fake_kernel(_overload))
