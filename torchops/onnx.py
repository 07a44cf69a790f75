"""ONNX export of models that use torchops, through ``torch.onnx.export(..., dynamo=True)``.

- :func:`translation_table` gives torch.onnx the ONNX form of each torchops overload that
  reaches it, for one opset: bitshift is ``BitShift`` (opset 28) where it is exact and a
  decomposition into standard ops below that (bitshift_, as every writing overload, is
  exported as its functional form); signbit is a comparison with 0 on integers and
  ``BitCast`` (opset 26) on floats; bitwise_count, the packing ops (packbits, unpackbits, pack,
  unpack) and the search ops (hamming_distance, hamming_topk), which have no ONNX op, are
  decompositions into standard ops at every opset.
- :func:`export` is ``torch.onnx.export`` with that table and the steps the table alone
  cannot do: in-place and ``out=`` calls, float signbit, a check of the opset torch.onnx
  really produced, and an exact comparison with eager when asked.
- :func:`run` runs an exported model in onnxruntime on torch tensors (every integer dtype,
  bfloat16 included; ``ONNXProgram.__call__`` cannot return uint64).

The results equal eager torchops exactly (docs/semantics.md); docs/deploy.md shows how to
use it and which opsets and dtypes are supported. Not imported by ``import torchops``: it
needs onnx, onnxscript and onnxruntime (``pip install torchops[onnx]``).

How torch.onnx (torch 2.13 to 2.15) builds a model, and what follows from it:

- It translates every graph at opset 18 (translations see ``max(opset_version, 18)``) and
  converts the model to ``opset_version`` at the end. When that conversion fails it logs a
  warning and returns the opset-18 model, so :func:`export` checks the opset it got.
- The conversion cannot carry ``BitCast`` (opset 26), the only exact way to read the sign
  bit of -0.0 and of NaNs. Float signbit therefore goes through a placeholder node of this
  module's own domain, which :func:`export` replaces after the conversion; a plain
  ``torch.onnx.export`` with the table refuses float signbit and names :func:`export`.
- In-place and ``out=`` calls reach it as ``auto_functionalized_v2`` nodes, which it cannot
  translate; :func:`export` rewrites them as the functional overload and a copy first.
"""
from __future__ import annotations

import copy
import operator
import os
from typing import Any, Callable, Optional

import numpy as np
import torch
from torch import Tensor

try:
    import onnx
    import onnx_ir as ir
    from onnx_ir.tensor_adapters import from_torch_dtype, to_torch_dtype
    from onnxscript import opset18 as op
    from onnxscript.values import Op, Opset
except ImportError as error:  # pragma: no cover - exercised in an environment without the extra
    raise ImportError(
        f"torchops.onnx needs onnx, onnxscript and onnxruntime ({error}); install them with "
        "pip install torchops[onnx]"
    ) from error

import torchops  # noqa: F401  (registers torch.ops.torchops)
from torchops._contract import (
    BITSHIFT, BITWISE_COUNT, BITWISE_COUNT_DTYPES, CODE_DTYPES, FUNCTIONAL_FORM, HAMMING_DISTANCE, HAMMING_TOPK, PACK,
    PACK_DTYPES, PACKBITS, SHIFT_DTYPES, SIGNBIT, SIGNBIT_FLOAT_DTYPES, UNPACK, UNPACKBITS, is_left, result_dtype,
)
from torchops._contract import dtype_name as _name

__all__ = ["DEFAULT_OPSET", "MIN_OPSET", "MAX_OPSET", "export", "run", "translation_table"]

#: The opsets supported. torch.onnx (2.13 to 2.15) builds every graph at opset 18 and only
#: converts it down, best effort, below that (the Bitwise* ops start at 18); onnx 1.23
#: and onnxruntime 1.32 end at 28.
MIN_OPSET, MAX_OPSET = 18, 28
#: What ``opset_version=None`` means: torch.onnx's default in torch 2.13 to 2.15.
DEFAULT_OPSET = 20
#: BitShift of version 28 takes signed types and defines every count (the rules of docs/semantics.md).
BITSHIFT_ALL_COUNTS_OPSET = 28
#: BitCast, the only exact reading of a float's sign bit.
BITCAST_OPSET = 26
#: TopK with the `largest` and `sorted` attributes and K as an input, which hamming_topk needs.
TOPK_OPSET = 11
# ONNX BitShift's direction attribute, in ONNX's own spelling: the op's directions are
# torchops._contract's (DIRECTIONS, read by is_left).
_BITSHIFT_LEFT, _BITSHIFT_RIGHT = "LEFT", "RIGHT"

_op = torch.ops.torchops
# Where each mutating overload's results go once it is rewritten as the functional one: the
# outs it names (``out``; hamming_topk.out's ``values`` and ``indices``), or None for x itself
# (in place).
_FUNCTIONAL_FORM = {overload: (functional, tuple(a.name for a in overload._schema.arguments if a.is_out)
                               if torch.Tag.out in overload.tags else None)
                    for overload, functional in FUNCTIONAL_FORM.items()}
_UNSIGNED_OF_WIDTH = {torch.iinfo(d).bits: d for d in SHIFT_DTYPES if not d.is_signed}
_SIGNED_OF_WIDTH = {torch.iinfo(d).bits: d for d in SHIFT_DTYPES if d.is_signed}

# A placeholder for float signbit: pkg.torchops::SignBit(x, to=<signed int type of x's width>),
# replaced by Less(BitCast(x, to), 0) after torch.onnx's version conversion. Its schema lives
# here only (not in onnx's registry), so no model that leaves this module can contain it.
_PLACEHOLDER_DOMAIN = "pkg.torchops"
_SIGNBIT_PLACEHOLDER = Op(
    Opset(_PLACEHOLDER_DOMAIN, 1),
    "SignBit",
    onnx.defs.OpSchema(
        "SignBit", _PLACEHOLDER_DOMAIN, 1,
        "Less(BitCast(x, to), 0), put in place by torchops.onnx.export",
        inputs=[onnx.defs.OpSchema.FormalParameter("x", "T")],
        outputs=[onnx.defs.OpSchema.FormalParameter("y", "tensor(bool)")],
        type_constraints=[("T", ["tensor(float16)", "tensor(bfloat16)", "tensor(float)", "tensor(double)"], "")],
        attributes=[onnx.defs.OpSchema.Attribute("to", onnx.defs.OpSchema.AttrType.INT, "signed int type of x's width")],
    ),
)


def _checked_opset(opset_version: Optional[int]) -> int:
    opset = DEFAULT_OPSET if opset_version is None else opset_version
    if isinstance(opset, bool) or not isinstance(opset, int) or not MIN_OPSET <= opset <= MAX_OPSET:
        # torch.onnx itself would fall back silently: below 18 to a best-effort conversion, above
        # 28 to a model of another opset.
        raise ValueError(
            f"torchops.onnx: opset_version must be an int from {MIN_OPSET} to {MAX_OPSET} (or None for "
            f"{DEFAULT_OPSET}), got {opset_version!r}"
        )
    return opset


# ---- the translations: functions of torch.onnx's graph values (ONNX Script) ----
# torch.onnx calls them with the op's arguments positionally, leaving out those at their
# default. Values made here carry no dtype, so the dtypes are passed along as torch dtypes.


def _dtype_of(value, op_name: str) -> torch.dtype:
    if value.dtype is None:
        raise TypeError(f"{op_name}: torch.onnx gave an input of unknown dtype ({value.name})")
    return to_torch_dtype(value.dtype)


def _constant(value: int, dtype: torch.dtype):
    return op.Constant(value=ir.tensor(value, dtype=from_torch_dtype(dtype)))


def _cast(value, from_dtype: torch.dtype, to_dtype: torch.dtype):
    # Cast between the signed and unsigned type of one width keeps the bits (checked in
    # onnxruntime by the tests), as a narrowing Cast keeps the low ones.
    return value if from_dtype == to_dtype else op.Cast(value, to=from_torch_dtype(to_dtype))


def _zeros_like(x, dtype: torch.dtype):
    return op.ConstantOfShape(op.Shape(x), value=ir.tensor([0], dtype=from_torch_dtype(dtype)))


def _unsigned_shift(x, y, dtype: torch.dtype, left: bool, count_in_range: bool, opset: int):
    """x shifted by y, both of the unsigned dtype; a count >= n gives 0."""
    direction = _BITSHIFT_LEFT if left else _BITSHIFT_RIGHT
    if opset >= BITSHIFT_ALL_COUNTS_OPSET:
        return Opset("", BITSHIFT_ALL_COUNTS_OPSET).BitShift(x, y, direction=direction)
    if count_in_range:
        return op.BitShift(x, y, direction=direction)
    # BitShift before opset 28 leaves a count >= n undefined: the count and the result are
    # multiplied by (y < n). A product rather than Where: onnxruntime has no Where for
    # int16, uint16 or uint64, and a product by 0 or 1 cannot overflow.
    in_range = op.Cast(op.Less(y, _constant(torch.iinfo(dtype).bits, dtype)), to=from_torch_dtype(dtype))
    return op.Mul(op.BitShift(x, op.Mul(y, in_range), direction=direction), in_range)


def _shift(x, y, dtype: torch.dtype, left: bool, arithmetic: bool, count_in_range: bool, opset: int):
    """docs/semantics.md section 2 on x and y already of the result dtype."""
    sign_fill = not left and arithmetic and dtype.is_signed
    if opset >= BITSHIFT_ALL_COUNTS_OPSET and (left or sign_fill or not dtype.is_signed):
        # ONNX's own rules are torchops's: a negative count or one >= n gives 0, or the sign fill.
        direction = _BITSHIFT_LEFT if left else _BITSHIFT_RIGHT
        return Opset("", BITSHIFT_ALL_COUNTS_OPSET).BitShift(x, y, direction=direction)
    unsigned = _UNSIGNED_OF_WIDTH[torch.iinfo(dtype).bits]
    if sign_fill:
        # x >> y == ((x ^ s) >>> y) ^ s with s = -1 for a negative x, 0 otherwise: x ^ s is not
        # negative, and a count out of range leaves s, the fill.
        s = op.Neg(op.Cast(op.Less(x, _constant(0, dtype)), to=from_torch_dtype(dtype)))
        positive = _cast(op.BitwiseXor(x, s), dtype, unsigned)
        shifted = _unsigned_shift(positive, _cast(y, dtype, unsigned), unsigned, False, count_in_range, opset)
        return op.BitwiseXor(_cast(shifted, unsigned, dtype), s)
    # A left shift, or a logical right shift: the same bits as on the unsigned type of the
    # width (a negative count becomes one >= n there, giving 0 as it should).
    shifted = _unsigned_shift(_cast(x, dtype, unsigned), _cast(y, dtype, unsigned), unsigned, left,
                              count_in_range, opset)
    return _cast(shifted, unsigned, dtype)


def _bitshift_translation(opset: int) -> Callable:
    def torchops_bitshift(x, y, direction: str, arithmetic: bool = True):
        x_dtype, y_dtype = _dtype_of(x, BITSHIFT), _dtype_of(y, BITSHIFT)
        dtype = result_dtype(x_dtype, len(x.shape), y_dtype, len(y.shape))
        left = is_left(BITSHIFT, direction)
        return _shift(_cast(x, x_dtype, dtype), _cast(y, y_dtype, dtype), dtype, left, bool(arithmetic), False, opset)

    return torchops_bitshift


def _bitshift_scalar_translation(opset: int) -> Callable:
    def torchops_bitshift_scalar(x, y: int, direction: str, arithmetic: bool = True):
        # The count is a Python int, settled here (section 4.2): the graph holds a count in
        # range, or none at all.
        dtype = _dtype_of(x, BITSHIFT)
        left = is_left(BITSHIFT, direction)
        bits = torch.iinfo(dtype).bits
        if 0 <= y < bits:
            return _shift(x, _constant(y, dtype), dtype, left, bool(arithmetic), True, opset)
        if not left and arithmetic and dtype.is_signed:  # out of range: the sign fill, a shift by n - 1
            return _shift(x, _constant(bits - 1, dtype), dtype, left, True, True, opset)
        return _zeros_like(x, dtype)

    return torchops_bitshift_scalar


def _signbit_translation(opset: int, placeholders: bool) -> Callable:
    def torchops_signbit(x):
        dtype = _dtype_of(x, SIGNBIT)
        if dtype in SHIFT_DTYPES:
            return op.Less(x, _constant(0, dtype)) if dtype.is_signed else _zeros_like(x, torch.bool)
        if dtype == torch.bool:
            return _zeros_like(x, torch.bool)
        if dtype not in SIGNBIT_FLOAT_DTYPES:
            raise TypeError(f"{SIGNBIT}: x has a dtype ONNX export does not support: {_name(dtype)}")
        _check_float_signbit_opset(dtype, opset)
        if not placeholders:
            raise NotImplementedError(
                f"{SIGNBIT}: {_name(dtype)} x needs ONNX BitCast, which torch.onnx's version "
                "conversion cannot carry; export with torchops.onnx.export(...) instead of torch.onnx.export(...)"
            )
        # The Identity keeps a default-domain node in a graph of nothing else: torch.onnx does
        # not convert a model without one to an opset above 25.
        signed = _SIGNED_OF_WIDTH[torch.finfo(dtype).bits]
        return _SIGNBIT_PLACEHOLDER(op.Identity(x), to=from_torch_dtype(signed))

    return torchops_signbit


def _check_float_signbit_opset(dtype: torch.dtype, opset: int) -> None:
    if opset < BITCAST_OPSET:
        # Without BitCast the best decomposition is wrong for NaNs with the sign bit set:
        # refused, never approximated.
        raise NotImplementedError(
            f"{SIGNBIT}: exporting signbit of a {_name(dtype)} tensor needs opset_version >= "
            f"{BITCAST_OPSET} (ONNX BitCast reads the sign bit of -0.0 and of NaNs); got opset_version={opset}"
        )


def _bit_count(v, dtype: torch.dtype):
    """The 1 bits of v, of an unsigned dtype, as uint8: adjacent fields of 1, 2, 4, ... bits
    summed pairwise (the classic tree). A field of k bits holds at most k, which the field of
    2k bits that takes the sum holds too: no step carries into the next field or wraps."""
    bits = torch.iinfo(dtype).bits
    field = 1
    while field < bits:
        # The low `field` bits of each field of 2 * field bits: 0x55..., 0x33..., 0x0F0F..., ...
        mask = _constant(sum(((1 << field) - 1) << low for low in range(0, bits, 2 * field)), dtype)
        shifted = op.BitShift(v, _constant(field, dtype), direction=_BITSHIFT_RIGHT)
        v = op.Add(op.BitwiseAnd(v, mask), op.BitwiseAnd(shifted, mask))
        field *= 2
    # The count, at most 64, is in the low byte: a narrowing Cast keeps it.
    return _cast(v, dtype, torch.uint8)


def _bitwise_count_translation() -> Callable:
    def torchops_bitwise_count(x):
        # docs/semantics.md section 7, on the unsigned dtype of x's width.
        dtype = _dtype_of(x, BITWISE_COUNT)
        if dtype not in BITWISE_COUNT_DTYPES:
            raise TypeError(f"{BITWISE_COUNT}: x has a dtype ONNX export does not support: {_name(dtype)}")
        if dtype == torch.bool:
            return op.Cast(x, to=from_torch_dtype(torch.uint8))
        if not dtype.is_signed:
            return _bit_count(x, dtype)
        # |x| = (x ^ s) + 1 for a negative x, with s = -1: x ^ s (~x) is in [0, MAX], and the + 1
        # is done unsigned, where the most negative value's magnitude 2^(n-1) (one bit) fits.
        # No signed overflow, and no Abs of the most negative value, which ONNX does not define.
        unsigned = _UNSIGNED_OF_WIDTH[torch.iinfo(dtype).bits]
        negative = op.Less(x, _constant(0, dtype))
        s = op.Neg(op.Cast(negative, to=from_torch_dtype(dtype)))
        one_if_negative = op.Cast(negative, to=from_torch_dtype(unsigned))
        magnitude = op.Add(_cast(op.BitwiseXor(x, s), dtype, unsigned), one_if_negative)
        return _bit_count(magnitude, unsigned)

    return torchops_bitwise_count


# The packing ops (docs/semantics.md) at every opset: each field as an int32 (Cast, BitwiseAnd),
# the dim padded to whole groups (Pad), the groups a dim of their own (Reshape), weighted by
# their place in the byte (Mul by powers of two) and summed (ReduceSum); unpacked by BitShift
# and BitwiseAnd on uint8 bytes, counts by Pad and Slice. Every step on a dtype onnxruntime
# implements the op for (not Pad on int16 or uint16, nor ReduceSum on 8-bit types or unsigned
# ones), every value exact: no shift by n or more, no overflow.


def _int64s(values) -> Any:
    return op.Constant(value=ir.tensor(np.array(values, dtype=np.int64)))


def _along_dim(x, dim: Optional[int]) -> tuple:
    """x, the dim its fields run along and x's rank: dim=None and a 0-d x are x flattened."""
    rank = len(x.shape)
    if dim is None or rank == 0:
        return op.Reshape(x, _int64s([-1])), 0, 1
    return x, dim % rank, rank


def _with_sizes_at(x, dim: int, rank: int, *sizes) -> Any:
    """x's shape, a 1-d int64 value, with `sizes` (1-element values) in place of dim's size."""
    before = [op.Shape(x, start=0, end=dim)] if dim else []
    after = [op.Shape(x, start=dim + 1)] if dim + 1 < rank else []
    return op.Concat(*before, *sizes, *after, axis=0)


def _padded_at_end(x, dim: int, rank: int, amount) -> Any:
    """x with `amount` (a 1-element int64 value) zeros appended along dim."""
    pads = [_int64s([0] * (rank + dim)), amount] + ([_int64s([0] * (rank - dim - 1))] if dim + 1 < rank else [])
    return op.Pad(x, op.Concat(*pads, axis=0))


def _place_in_byte(bits: int, bitorder: str, rank_after: int, dtype: torch.dtype, power: bool) -> Any:
    """Each field's shift in its byte (or 2 ** shift), field 0 first along a new dim that has
    `rank_after` dims after it: the first field in the high bits for "big"."""
    per_byte = 8 // bits
    shifts = [(k if bitorder == "little" else per_byte - 1 - k) * bits for k in range(per_byte)]
    values = np.array([1 << shift for shift in shifts] if power else shifts).reshape((per_byte,) + (1,) * rank_after)
    return op.Constant(value=ir.tensor(values.astype(np.dtype(str(dtype).removeprefix("torch.")))))


def _check_bitorder(bitorder: str, op_name: str) -> None:
    if bitorder not in ("big", "little"):
        raise ValueError(f"{op_name}: bitorder must be 'big' or 'little', got {bitorder!r}")


def _pack(x, bits: int, dim: Optional[int], bitorder: str, nonzero: bool, op_name: str):
    dtype = _dtype_of(x, op_name)
    if dtype not in PACK_DTYPES:
        raise TypeError(f"{op_name}: x has a dtype ONNX export does not support: {_name(dtype)}")
    _check_bitorder(bitorder, op_name)
    x, dim, rank = _along_dim(x, dim)
    per_byte = 8 // bits
    int32 = from_torch_dtype(torch.int32)
    if dtype == torch.bool or nonzero:  # Cast to bool is x != 0
        fields = op.Cast(x if dtype == torch.bool else op.Cast(x, to=from_torch_dtype(torch.bool)), to=int32)
    else:  # the low bits, taken on x's dtype: what is cast is below 2**bits
        fields = op.Cast(op.BitwiseAnd(x, _constant((1 << bits) - 1, dtype)), to=int32)
    length = op.Shape(x, start=dim, end=dim + 1)
    groups = op.Div(op.Add(length, _int64s([per_byte - 1])), _int64s([per_byte]))
    fields = _padded_at_end(fields, dim, rank, op.Sub(op.Mul(groups, _int64s([per_byte])), length))
    shape = _with_sizes_at(x, dim, rank, groups, _int64s([per_byte]))
    weighted = op.Mul(op.Reshape(fields, shape), _place_in_byte(bits, bitorder, rank - dim - 1, torch.int32, True))
    return op.Cast(op.ReduceSum(weighted, _int64s([dim + 1]), keepdims=0), to=from_torch_dtype(torch.uint8))


def _unpack(x, bits: int, dim: Optional[int], count: Optional[int], bitorder: str, signed: bool, op_name: str):
    dtype = _dtype_of(x, op_name)
    if dtype != torch.uint8:
        raise TypeError(f"{op_name}: x has a dtype ONNX export does not support: {_name(dtype)}")
    _check_bitorder(bitorder, op_name)
    x, dim, rank = _along_dim(x, dim)
    per_byte = 8 // bits
    # Each byte shifted by each field's place (counts below 8: BitShift is exact at every opset).
    shifted = op.BitShift(op.Unsqueeze(x, _int64s([dim + 1])),
                          _place_in_byte(bits, bitorder, rank - dim - 1, torch.uint8, False), direction=_BITSHIFT_RIGHT)
    fields = op.BitwiseAnd(shifted, _constant((1 << bits) - 1, torch.uint8))
    available = op.Mul(op.Shape(x, start=dim, end=dim + 1), _int64s([per_byte]))
    fields = op.Reshape(fields, _with_sizes_at(x, dim, rank, available))
    if count is not None:
        if count >= 0:  # zero fields appended past the end, then the first count
            missing = op.Max(op.Sub(_int64s([count]), available), _int64s([0]))
            fields = _padded_at_end(fields, dim, rank, missing)
        fields = op.Slice(fields, _int64s([0]), _int64s([count]), _int64s([dim]))  # count < 0: drops from the end
    if signed:  # (v ^ h) - h with h = 2**(bits - 1), on int8 values in [-h, h)
        half = _constant(1 << (bits - 1), torch.int8)
        fields = op.Sub(op.BitwiseXor(op.Cast(fields, to=from_torch_dtype(torch.int8)), half), half)
    return fields


def _packing_translations() -> dict:
    def torchops_packbits(x, dim: Optional[int] = -1, bitorder: str = "big"):
        return _pack(x, 1, dim, bitorder, True, PACKBITS)

    def torchops_pack(x, bits: int, dim: Optional[int] = -1, bitorder: str = "big"):
        return _pack(x, bits, dim, bitorder, False, PACK)

    def torchops_unpackbits(x, dim: Optional[int] = -1, count: Optional[int] = None, bitorder: str = "big"):
        return _unpack(x, 1, dim, count, bitorder, False, UNPACKBITS)

    def torchops_unpack(x, bits: int, dim: Optional[int] = -1, count: Optional[int] = None, bitorder: str = "big",
                        signed: bool = False):
        return _unpack(x, bits, dim, count, bitorder, bool(signed), UNPACK)

    return {_op.packbits.default: torchops_packbits, _op.pack.default: torchops_pack,
            _op.unpackbits.default: torchops_unpackbits, _op.unpack.default: torchops_unpack}


# The search ops (docs/semantics.md section 16) at every opset: every pair of codes' bytes
# xored as uint8 (Unsqueeze to (..., M, 1, B) and (..., 1, N, B), BitwiseXor broadcasting the
# batch dims too), bitwise_count's byte count (_bit_count), ReduceSum over the bytes as int32.
# The (..., M, N, B) bytes are made: ONNX has no op that reduces as it goes. hamming_topk orders
# int64 keys, distance * N + index, whose order is the contract's (the smaller index first among
# equal distances) and all distinct, so TopK's order is exact whatever its tie rule, which ONNX
# leaves unspecified; the keys give the distance and the index back by a division.


def _codes(value, arg: str, op_name: str):
    """A code operand as uint8 (an int8 one's bits, kept by Cast)."""
    dtype = _dtype_of(value, op_name)
    if dtype not in CODE_DTYPES:
        raise TypeError(f"{op_name}: {arg} has a dtype ONNX export does not support: {_name(dtype)}")
    return _cast(value, dtype, torch.uint8)


def _distances(a, b, first: str, second: str, op_name: str):
    """The int32 distances of a's rows (..., M, B) to b's (..., N, B): (..., M, N)."""
    a, b = _codes(a, first, op_name), _codes(b, second, op_name)
    differing = op.BitwiseXor(op.Unsqueeze(a, _int64s([-2])), op.Unsqueeze(b, _int64s([-3])))
    counts = op.Cast(_bit_count(differing, torch.uint8), to=from_torch_dtype(torch.int32))
    # keepdims=0 over an axis of 0 bytes gives the sums of nothing: 0.
    return op.ReduceSum(counts, _int64s([-1]), keepdims=0)


def _search_translations(opset: int) -> dict:
    def torchops_hamming_distance(x1, x2):
        return _distances(x1, x2, "x1", "x2", HAMMING_DISTANCE)

    def torchops_hamming_topk(queries, database, k):
        if opset < TOPK_OPSET:  # pragma: no cover - below every supported opset
            raise NotImplementedError(f"{HAMMING_TOPK}: exporting it needs opset_version >= {TOPK_OPSET} "
                                      f"(ONNX TopK with largest=0), got opset_version={opset}")
        distances = _distances(queries, database, "queries", "database", HAMMING_TOPK)
        int64 = from_torch_dtype(torch.int64)
        n = op.Shape(database, start=0, end=1)  # [N]
        index = op.Range(_constant(0, torch.int64), op.Squeeze(n, _int64s([0])), _constant(1, torch.int64))
        # The keys' stride: N, or 1 for an empty database (no keys then, but onnxruntime refuses
        # an integer Div by a constant 0 when it loads the model).
        stride = op.Max(n, _int64s([1]))
        keys = op.Add(op.Mul(op.Cast(distances, to=int64), stride), index)  # (Q, N), distinct along N
        count = _int64s([k]) if isinstance(k, int) else op.Reshape(op.Cast(k, to=int64), _int64s([1]))
        nearest, _ = op.TopK(keys, count, axis=-1, largest=0, sorted=1)
        values = op.Div(nearest, stride)  # keys are not negative: Div's truncation is the floor
        indices = op.Sub(nearest, op.Mul(values, stride))
        return op.Cast(values, to=from_torch_dtype(torch.int32)), indices

    return {_op.hamming_distance.default: torchops_hamming_distance, _op.hamming_topk.default: torchops_hamming_topk}


def _translations(opset: int, placeholders: bool) -> dict:
    return {
        _op.bitshift.default: _bitshift_translation(opset),
        _op.bitshift.Scalar: _bitshift_scalar_translation(opset),
        _op.signbit.default: _signbit_translation(opset, placeholders),
        _op.bitwise_count.default: _bitwise_count_translation(),
        **_packing_translations(),
        **_search_translations(opset),
    }


def translation_table(opset_version: Optional[int] = None) -> dict:
    """The ``custom_translation_table`` for ``torch.onnx.export(..., dynamo=True)``.

    Pass the same ``opset_version`` to both (``None``: torch.onnx's default, 20). Covers every
    functional overload: ``bitshift.default``, ``bitshift.Scalar``, ``signbit.default``,
    ``bitwise_count.default``, ``packbits.default``, ``unpackbits.default``, ``pack.default``,
    ``unpack.default``, ``hamming_distance.default`` and ``hamming_topk.default``.
    In-place and ``out=`` calls, and signbit of float tensors, need :func:`export`, which uses
    this table.
    """
    return _translations(_checked_opset(opset_version), placeholders=False)


# ---- export(): the steps around torch.onnx ----


def _resizes(result: torch.Tensor, out: torch.fx.Node) -> bool:
    # The call's value is its result, of the shape the op gave out (a packing op's is not its
    # operands' broadcast shape).
    return tuple(out.meta["val"].shape) != tuple(result.shape)


def _rewrite_mutations(program: torch.export.ExportedProgram) -> None:
    """Each in-place or out= torchops call becomes the functional overload and aten.copy_
    into each of its destinations (which torch.onnx then functionalizes like any copy). A call
    with several outs (hamming_topk.out) returns them as a tuple, which the graph reads by
    operator.getitem: each of those reads becomes its out's."""
    graph = program.graph_module.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _FUNCTIONAL_FORM:
            continue
        functional, out_names = _FUNCTIONAL_FORM[node.target]
        kwargs = dict(node.kwargs)
        dests = [kwargs.pop(name) for name in out_names] if out_names else [node.args[0]]
        several = len(dests) > 1
        if several and any(u.target is not operator.getitem for u in node.users):
            raise NotImplementedError(f"torchops.onnx.export: {node.target}'s result is used otherwise than "
                                      "by indexing its tuple")
        examples = node.meta["val"] if several else (node.meta["val"],)
        replacements = []
        with graph.inserting_before(node):
            result = graph.call_function(functional, tuple(node.args), kwargs)
            results = [graph.call_function(operator.getitem, (result, i)) for i in range(len(dests))] if several \
                else [result]
            for dest, value, example in zip(dests, results, examples):
                if out_names and _resizes(example, dest):
                    # The op resized `out` (an empty one, say): a copy cannot, so the later
                    # readers of `out` read the result instead. Exact only for a buffer the
                    # model made and nothing read before.
                    readers = [u for u in dest.users if u is not node]
                    # fx nodes compare by their place in the graph (the order insertions keep).
                    if dest.op == "placeholder" or any(u < node for u in readers):
                        raise NotImplementedError(
                            f"torchops.onnx.export: {node.target} resizes its out= tensor, which is an input of "
                            "the model or is read before the call; pass an out= tensor of the result's shape"
                        )
                    for reader in readers:
                        reader.replace_input_with(dest, value)
                    replacements.append(value)
                else:
                    replacements.append(graph.call_function(torch.ops.aten.copy_.default, (dest, value)))
        if several:
            for user in list(node.users):
                user.replace_all_uses_with(replacements[user.args[1]])
                graph.erase_node(user)
        else:
            node.replace_all_uses_with(replacements[0])
        graph.erase_node(node)
    graph.lint()
    program.graph_module.recompile()


def _check_float_signbits(program: torch.export.ExportedProgram, opset: int) -> None:
    # The translation refuses too, but inside torch.onnx's ConversionError; this says it plainly.
    for node in program.graph.nodes:
        if node.op == "call_function" and node.target is _op.signbit.default:
            dtype = node.args[0].meta["val"].dtype
            if dtype in SIGNBIT_FLOAT_DTYPES:
                _check_float_signbit_opset(dtype, opset)


def _replace_placeholders(model: ir.Model, opset: int) -> None:
    for graph in (model.graph, *model.graph.subgraphs()):
        for node in list(graph):
            if node.domain != _PLACEHOLDER_DOMAIN:
                continue
            signed = ir.DataType(node.attributes["to"].as_int())
            zero = ir.Node("", "Constant", [], [ir.AttrTensor("value", ir.tensor(0, dtype=signed))], version=opset)
            bits = ir.Node("", "BitCast", list(node.inputs), [ir.AttrInt64("to", signed)], version=opset)
            less = ir.Node("", "Less", [bits.outputs[0], zero.outputs[0]], version=opset)
            ir.convenience.replace_nodes_and_values(graph, node, [node], [zero, bits, less], node.outputs, less.outputs)
    model.opset_imports.pop(_PLACEHOLDER_DOMAIN, None)


def _names_to_dims(dynamic_shapes):
    # torch.onnx takes axis names (str) in dynamic_shapes; torch.export.export does not.
    return torch.utils._pytree.tree_map(
        lambda d: torch.export.Dim.DYNAMIC if isinstance(d, str) else d, dynamic_shapes
    )


def export(
    model: torch.nn.Module | torch.export.ExportedProgram,
    args: tuple[Any, ...] = (),
    f: str | os.PathLike | None = None,
    *,
    kwargs: Optional[dict[str, Any]] = None,
    opset_version: Optional[int] = None,
    dynamic_shapes=None,
    custom_translation_table: Optional[dict] = None,
    strict: bool = False,
    verify: bool = False,
    **export_options: Any,
) -> torch.onnx.ONNXProgram:
    """``torch.onnx.export(model, args, f, dynamo=True, ...)`` for models that use torchops.

    Takes torch.onnx's arguments (``input_names``, ``output_names``, ``optimize``,
    ``external_data``, ... pass through) and returns its ``ONNXProgram``, with the
    translations of :func:`translation_table` for ``opset_version`` (18 to 28; ``None``: 20)
    merged under ``custom_translation_table``. Before torch.onnx, in-place and ``out=``
    torchops calls become functional ones; after it, float signbit gets its BitCast. Raises
    when torch.onnx did not produce the requested opset.

    ``model`` is exported with ``torch.export.export(strict=strict)`` (an ``ExportedProgram``
    is taken as is, copied). ``verify=True`` runs the model in onnxruntime on ``args`` and
    raises unless every output equals eager's exactly (torch.onnx's own ``verify`` only logs
    differences within a tolerance). ``f`` saves the final model.
    """
    if not isinstance(model, (torch.nn.Module, torch.export.ExportedProgram)) or isinstance(
        model, torch.jit.ScriptModule
    ):
        raise TypeError(
            f"torchops.onnx.export: model must be a torch.nn.Module or a torch.export.ExportedProgram, "
            f"got {type(model).__name__}"
        )
    for option in ("dynamo", "dynamic_axes"):
        if option in export_options:
            raise TypeError(f"torchops.onnx.export: {option}= is torch.onnx's TorchScript exporter's; "
                            "this is the dynamo exporter (use dynamic_shapes)")
    opset = _checked_opset(opset_version)
    args = tuple(args)
    if isinstance(model, torch.export.ExportedProgram):
        program = copy.deepcopy(model)
    else:
        program = torch.export.export(model, args, kwargs=kwargs, dynamic_shapes=_names_to_dims(dynamic_shapes),
                                      strict=strict)
    _rewrite_mutations(program)
    _check_float_signbits(program, opset)
    table = {**_translations(opset, placeholders=True), **(custom_translation_table or {})}
    # dynamic_shapes again: for an ExportedProgram torch.onnx uses it to name the dynamic axes.
    onnx_program = torch.onnx.export(program, args, kwargs=kwargs, dynamo=True, opset_version=opset,
                                     dynamic_shapes=dynamic_shapes, custom_translation_table=table,
                                     **export_options)
    produced = onnx_program.model.opset_imports.get("")
    if produced != opset:
        raise RuntimeError(
            f"torchops.onnx.export: torch.onnx produced a model of opset {produced}, not the requested "
            f"{opset} (its version conversion failed; its log says why)"
        )
    _replace_placeholders(onnx_program.model, opset)
    if verify:
        _verify(onnx_program, program, args, kwargs or {})
    if f is not None:
        onnx_program.save(f)
    return onnx_program


def _verify(onnx_program: torch.onnx.ONNXProgram, program: torch.export.ExportedProgram, args, kwargs) -> None:
    copies = torch.utils._pytree.tree_map_only(Tensor, torch.clone, (args, kwargs))
    expected = torch.utils._pytree.tree_leaves(program.module()(*copies[0], **copies[1]))
    got = run(onnx_program, args, kwargs)
    if len(got) != len(expected):
        raise AssertionError(f"torchops.onnx.export: the ONNX model has {len(got)} outputs, eager {len(expected)}")
    for i, (g, e) in enumerate(zip(got, expected)):
        if g.dtype != e.dtype or g.shape != e.shape or not torch.equal(g, e):
            raise AssertionError(
                f"torchops.onnx.export: output {i} of the ONNX model differs from eager: {_name(g.dtype)} "
                f"{list(g.shape)} against {_name(e.dtype)} {list(e.shape)}"
                + (f", {int((g != e).sum())} elements differ" if g.shape == e.shape and g.dtype == e.dtype else "")
            )


def run(model, args: tuple[Any, ...] = (), kwargs: Optional[dict[str, Any]] = None) -> list[Tensor]:
    """Runs an exported model in onnxruntime (CPU) on the tensors of ``args`` and ``kwargs``
    (in the order torch.onnx made them inputs); returns its outputs as CPU tensors.

    ``model``: an ``ONNXProgram``, an ``onnx.ModelProto`` or the path of a saved model.
    """
    import onnxruntime

    if isinstance(model, torch.onnx.ONNXProgram):
        model = model.model_proto
    content = model.SerializeToString() if isinstance(model, onnx.ModelProto) else os.fspath(model)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only
    session = onnxruntime.InferenceSession(content, options, providers=["CPUExecutionProvider"])
    tensors = [leaf for leaf in torch.utils._pytree.tree_leaves((tuple(args), kwargs or {})) if isinstance(leaf, Tensor)]
    names = [i.name for i in session.get_inputs()]
    if len(names) != len(tensors):
        raise ValueError(f"torchops.onnx.run: the model has {len(names)} inputs, got {len(tensors)} tensors")
    feeds = {name: _ort_value(onnxruntime, t) for name, t in zip(names, tensors)}
    outputs = session.run_with_ort_values(None, feeds)
    return [_tensor(value) for value in outputs]


def _ort_value(onnxruntime, tensor: Tensor):
    tensor = tensor.detach().cpu().contiguous()
    # NumPy has no bfloat16: its bits go in as int16, typed bfloat16 for onnxruntime.
    bits = tensor.view(torch.int16) if tensor.dtype == torch.bfloat16 else tensor
    return onnxruntime.OrtValue.ortvalue_from_numpy_with_onnx_type(
        bits.numpy(), onnx_element_type=int(from_torch_dtype(tensor.dtype))
    )


def _tensor(value) -> Tensor:
    array = value.numpy()
    if value.data_type() == "tensor(bfloat16)":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    # onnxruntime's uint64 arrays are of NumPy's ulonglong, which torch does not take: the
    # same bits, viewed as the uint64 of the same name.
    return torch.from_numpy(array.view(np.dtype(array.dtype.name)))
