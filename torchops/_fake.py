"""Fake (meta) kernels: shapes, dtypes, strides and errors of every overload, without data.

torch.compile, torch.export and FakeTensorMode run these instead of the C++ kernels. They
are made from each op's declaration (torchops/_contract.py's DECLARATIONS: its checks and
result dtype; a packing op's check gives its result's shape too) and from what the
overload does (its tags: a new result, out= or in place), so an op needs no code here.
Each check repeats its twin in csrc/ops/ with the same exception type and the same words;
tests/test_torch_integration.py compares the two on every bad call of tests/calls.py.
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch._prims_common import (
    apply_perm,
    compute_elementwise_output_logical_to_physical_perm,
    invert_perm,
    is_cpu_scalar_tensor,
    is_non_overlapping_and_dense_or_false,
    make_contiguous_strides_for,
)

from torchops._contract import OVERLOADS, Packing, Search, check_result_size, declaration_of, op_name
from torchops._contract import dtype_name as _name


def _shape(shape) -> str:
    return str(list(shape))


def _check_device(op: str, x: Tensor, first: str = "x", **others: Tensor) -> None:
    # A meta tensor beside CPU ones dispatches here (Meta outranks CPU); the device-generic
    # kernels (csrc/ops/composite.cpp) say the same of a CUDA tensor beside a CPU one.
    # `first`: x's name in the op's messages.
    for name, tensor in others.items():
        torch._check(
            x is None or tensor is None or tensor.device == x.device,
            lambda: f"{op}: {name} is on device {tensor.device} but {first} is on device {x.device}; "
            "all tensors must be on one device",
        )


def broadcast_shape(op: str, operands: dict, dtype: torch.dtype | None = None):
    """The shape the operands (by name: anything with a ``.shape``) broadcast to, or the op's
    error naming each shape; with the result's ``dtype``, one that no tensor can have is
    refused too (csrc/ops/checks.cpp's broadcast_shape)."""
    shapes = [f"{name} of shape {_shape(operand.shape)}" for name, operand in operands.items()]
    try:
        shape = torch.broadcast_shapes(*(operand.shape for operand in operands.values()))
    except RuntimeError:
        raise RuntimeError(f"{op}: {', '.join(shapes[:-1])} and {shapes[-1]} do not broadcast") from None
    if dtype is not None and len(shapes) > 1:
        check_result_size(op, f"{', '.join(shapes[:-1])} and {shapes[-1]}", shape, dtype)
    return shape


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
    the outs (``out``; hamming_topk's ``values`` and ``indices``) left out: a call may pass an
    argument by name, or leave one at its default."""
    values = []
    for i, argument in enumerate(overload._schema.arguments):
        if argument.is_out:
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
    """The names of an overload's arguments, the outs aside, in its schema's order (bind's)."""
    return [argument.name for argument in overload._schema.arguments if not argument.is_out]


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
            return _resized_out(out, tuple(operands.values()), broadcast_shape(op, operands, dtype))
        if kind == "inplace":
            _check_inplace_dtype(op, declaration.noun, dtype, operands)
            _check_inplace_shape(op, declaration.noun, broadcast_shape(op, operands, dtype), x)
            return x
        return _elementwise_empty(tuple(operands.values()), broadcast_shape(op, operands, dtype), dtype)

    fake.__name__ = f"{overload._schema.name.removeprefix('torchops::')}_{overload._overloadname}_fake"
    return fake


def _symbolic(*tensors: Tensor) -> bool:
    return any(isinstance(size, torch.SymInt)
               for t in tensors for size in (*t.shape, *t.stride(), t.storage_offset()))


def _check_no_overlap(op: str, out: Tensor, x: Tensor) -> None:
    """The packing entries' refusal of an out that shares memory with itself or with x
    (csrc/ops/pack.cpp's check_no_overlap: at::assert_no_internal_overlap, then
    at::assert_no_overlap's at::get_overlap_status, here on storages and byte ranges). As
    there, what cannot be decided (a tensor that is not dense) passes; so do symbolic sizes."""
    if _symbolic(out, x):
        return
    prefix = f"{op}: unsupported operation: "
    torch._check(torch._debug_has_internal_overlap(out) != 1, lambda: prefix + (
        "more than one element of the written-to tensor refers to a single memory location. Please clone() the "
        "tensor before performing the operation."))
    overlaps = out is x
    if not overlaps and out.numel() and x.numel() and is_non_overlapping_and_dense_or_false(out) \
            and is_non_overlapping_and_dense_or_false(x) \
            and out.untyped_storage()._cdata == x.untyped_storage()._cdata:
        out_begin, x_begin = out.storage_offset() * out.element_size(), x.storage_offset() * x.element_size()
        overlaps = out_begin < x_begin + x.nbytes and x_begin < out_begin + out.nbytes
    torch._check(not overlaps, lambda: prefix + (
        "some elements of the input tensor and the written-to tensor refer to a single memory location. Please "
        "clone() the tensor before performing the operation."))


def _packing_fake_kernel(overload):
    """The fake kernel of a packing op's overload (packbits, unpackbits, pack, unpack): the
    device check, the op's checks (its declaration, which gives the result's dtype and
    shape: ceil(n / per_byte) bytes at the packed dim, symbolic under dynamic shapes), then
    out='s dtype and overlap, in csrc/ops/pack.cpp's order. A new result is contiguous; an
    out of another shape is resized (contiguous), one of the result's shape keeps its
    strides."""
    op, declaration, kind = op_name(overload), declaration_of(overload), kind_of(overload)

    def fake(*args, **kwargs):
        values = bind(overload, args, kwargs)
        x, out = values[0], kwargs.get("out")
        torch._check_type(x is not None, lambda: f"{op}: x must be a tensor, got None")
        if kind == "out":
            _check_device(op, x, out=out)
        call = declaration.check(op, *values)
        if kind == "functional":
            return torch.empty(call.shape, dtype=call.dtype, device=x.device)
        _check_out_dtype(op, out, call.dtype)
        # x as the entries see it: flattened (a view where reshape makes one) for dim=None
        # and for a 0-d x.
        seen = x.reshape(-1) if call.dim is None or x.dim() == 0 else x
        _check_no_overlap(op, out, seen)
        if out.shape != call.shape:
            out.resize_(call.shape)
            _check_no_overlap(op, out, seen)  # a resized out can reach x's memory
        return out

    fake.__name__ = f"{overload._schema.name.removeprefix('torchops::')}_{overload._overloadname}_fake"
    return fake


def _search_fake_kernel(overload):
    """The fake kernel of a search op's overload (hamming_distance, hamming_topk): the device
    check of every tensor against the first, the op's checks (its declaration, which gives
    each result's dtype and shape), then each out's checks in csrc/ops/hamming.cpp's order:
    defined and of its dtype, then no overlap with the codes or an earlier out, then resized.
    A new result is contiguous; an out of another shape is resized (contiguous), one of the
    result's shape keeps its strides."""
    op, declaration, kind = op_name(overload), declaration_of(overload), kind_of(overload)
    first_name, second_name = declaration.names

    def fake(*args, **kwargs):
        values = bind(overload, args, kwargs)
        first, second = values[0], values[1]
        outs = {name: kwargs.get(name) for name in declaration.outs} if kind == "out" else {}
        _check_device(op, first, first_name, **{second_name: second}, **outs)
        call = declaration.check(op, *values)
        if kind == "functional":
            results = tuple(torch.empty(shape, dtype=dtype, device=first.device) for dtype, shape in call.results)
            return results if len(results) > 1 else results[0]
        for (name, out), (dtype, _) in zip(outs.items(), call.results):
            torch._check_type(out is not None, lambda: f"{op}: {name} must be a tensor, got None")
        if len(outs) == 1:
            _check_out_dtype(op, outs["out"], call.results[0][0])
        else:
            for (name, out), (dtype, _) in zip(outs.items(), call.results):
                torch._check_type(out.dtype == dtype, lambda: f"{op}: {name} must be an {_name(dtype)} tensor, "
                                                              f"got {_name(out.dtype)}")
        written = [first, second]
        for out, (_, shape) in zip(outs.values(), call.results):
            for tensor in written:
                _check_no_overlap(op, out, tensor)
            if tuple(out.shape) != tuple(shape):
                out.resize_(shape)
                for tensor in written:
                    _check_no_overlap(op, out, tensor)  # a resized out can reach an input's memory
            written.append(out)
        return tuple(outs.values()) if len(outs) > 1 else outs["out"]

    fake.__name__ = f"{overload._schema.name.removeprefix('torchops::')}_{overload._overloadname}_fake"
    return fake


def _fake_kernel_for(overload):
    declaration = declaration_of(overload)
    if isinstance(declaration, Packing):
        return _packing_fake_kernel(overload)
    if isinstance(declaration, Search):
        return _search_fake_kernel(overload)
    return _fake_kernel(overload)


for _overload in OVERLOADS:
    torch.library.register_fake(_overload)(_fake_kernel_for(_overload))
