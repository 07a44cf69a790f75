"""The typed Python API of the torchops operators: what ``torchops`` exports.

Each function is declared here once: its signature, its docstring and, for TorchScript,
the signatures it is compiled for (the ``@overload`` stubs, the same parameters with
narrower types). Called from Python, it calls its compiled function
(torchops/_fastpath.py), which calls the operator through the dispatcher and hands every
call it does not take to the function's twin (torchops/_twins.py, through ``torch.ops``,
where the argument checks and messages live); torch.compile traces the twin in its place.
Compiled by ``torch.jit.script``, once for each of its signatures, it is the
``torch.ops.torchops`` calls below, so that a scripted model calling the typed API saves
and runs wherever the operator library is loaded, C++ programs included. The compiled
function, the twin and the stubs are held to the declaration at import (the end of this
file). The rules: docs/semantics.md.
"""
from typing import Optional, Tuple, Union, overload

import torch
from torch import Tensor

from torchops import _fastpath
from torchops._contract import LEFT as _LEFT, RIGHT as _RIGHT  # the directions, as the op spells them
from torchops._twins import HammingTopk  # hamming_topk's result (a NamedTuple, made there for the twins and the binding)

__all__ = [
    "bitshift",
    "bitwise_count",
    "cpu_capability",
    "bitwise_left_shift",
    "bitwise_left_shift_",
    "bitwise_right_shift",
    "bitwise_right_shift_",
    "signbit",
    "packbits",
    "unpackbits",
    "pack",
    "unpack",
    "hamming_distance",
    "hamming_topk",
]

# TorchScript compiles only the branch `not is_scripting()` skips; torch.compile reads it as False.
_is_scripting = torch.jit.is_scripting

# The compiled functions Python calls go to, one global each (the cheapest lookup).
_bitshift_compiled = _fastpath.FUNCTIONS["bitshift"]
_bitwise_left_shift_compiled = _fastpath.FUNCTIONS["bitwise_left_shift"]
_bitwise_right_shift_compiled = _fastpath.FUNCTIONS["bitwise_right_shift"]
_bitwise_left_shift__compiled = _fastpath.FUNCTIONS["bitwise_left_shift_"]
_bitwise_right_shift__compiled = _fastpath.FUNCTIONS["bitwise_right_shift_"]
_signbit_compiled = _fastpath.FUNCTIONS["signbit"]
_bitwise_count_compiled = _fastpath.FUNCTIONS["bitwise_count"]
_packbits_compiled = _fastpath.FUNCTIONS["packbits"]
_unpackbits_compiled = _fastpath.FUNCTIONS["unpackbits"]
_pack_compiled = _fastpath.FUNCTIONS["pack"]
_unpack_compiled = _fastpath.FUNCTIONS["unpack"]
_hamming_distance_compiled = _fastpath.FUNCTIONS["hamming_distance"]
_hamming_topk_compiled = _fastpath.FUNCTIONS["hamming_topk"]


# Each function's signatures, for type checkers (typing.overload) and for TorchScript
# (torch.jit._overload, PyTorch's private registry, which torch.nn.functional uses too).
# TorchScript compiles a function's body once per signature, with the types of x and y
# known, so the body's isinstance checks are settled while compiling and a scripted call
# costs what a call of torch.ops.torchops.* does (an argument typed Union[Tensor, int] is
# checked at every call instead: 0.4-1 us). A torch without the registry imports torchops
# all the same; only torch.jit.script of the typed API fails there.
_script_overload = getattr(torch.jit, "_overload", lambda function: function)


# --------------------------------------------------------------------------------------
# The TorchScript bodies, compiled for the types of each call. TorchScript checks the
# argument types against the signatures, and an op's error names the op (TorchScript has
# no try/except in which to say it again).
def _direction(left: bool, directions: Tuple[str, str] = (_LEFT, _RIGHT)) -> str:
    """A Paddle function's direction as the op spells it (torchops._contract's LEFT or RIGHT):
    TorchScript reads no global str, but takes a default argument's value as a constant."""
    return directions[0] if left else directions[1]


def _scripted_int_x(called: str, x: int, y: Tensor) -> Tensor:
    """The int x as a 0-d tensor of y's dtype, which it must fit (as in Python)."""
    x_tensor = torch.tensor(x, dtype=y.dtype, device=y.device)
    if int(x_tensor.to(torch.int64)) != x or (x < 0 and not y.is_signed()):
        raise ValueError(f"{called}: x = {x} does not fit y's dtype; pass x as a tensor of a wider dtype")
    return x_tensor


@overload
@_script_overload
def _scripted_shift(called: str, x: Tensor, y: Tensor, direction: str, arithmetic: bool,
                    out: Optional[Tensor]) -> Tensor: ...


@overload
@_script_overload
def _scripted_shift(called: str, x: Tensor, y: int, direction: str, arithmetic: bool,
                    out: Optional[Tensor]) -> Tensor: ...


@overload
@_script_overload
def _scripted_shift(called: str, x: int, y: Tensor, direction: str, arithmetic: bool,
                    out: Optional[Tensor]) -> Tensor: ...


def _scripted_shift(called, x, y, direction, arithmetic, out):
    if isinstance(x, Tensor):
        x_tensor = x
    else:
        x_tensor = _scripted_int_x(called, x, y)
    if out is None:
        return torch.ops.torchops.bitshift(x_tensor, y, direction, arithmetic)
    return torch.ops.torchops.bitshift(x_tensor, y, direction, arithmetic, out=out)


@overload
@_script_overload
def _scripted_shift_(called: str, x: Tensor, y: Tensor, direction: str, arithmetic: bool,
                     out: Optional[Tensor]) -> Tensor: ...


@overload
@_script_overload
def _scripted_shift_(called: str, x: Tensor, y: int, direction: str, arithmetic: bool,
                     out: Optional[Tensor]) -> Tensor: ...


def _scripted_shift_(called, x, y, direction, arithmetic, out):
    if out is not None and out is not x:
        raise ValueError(f"{called}: out must be None or x itself (the in-place form writes into x)")
    return torch.ops.torchops.bitshift_(x, y, direction, arithmetic)


# --------------------------------------------------------------------------------------
# The typed API
@overload
@_script_overload
def bitshift(x: Tensor, y: Tensor, direction: str, arithmetic: bool = True, out: Optional[Tensor] = None) -> Tensor:
    ...


@overload
@_script_overload
def bitshift(x: Tensor, y: int, direction: str, arithmetic: bool = True, out: Optional[Tensor] = None) -> Tensor:
    ...


@overload
@_script_overload
def bitshift(x: int, y: Tensor, direction: str, arithmetic: bool = True, out: Optional[Tensor] = None) -> Tensor:
    ...


def bitshift(
    x: Union[Tensor, int],
    y: Union[Tensor, int],
    direction: str,
    arithmetic: bool = True,
    out: Optional[Tensor] = None,
) -> Tensor:
    """ONNX BitShift (opset 28): shifts the bits of ``x`` by ``y``, element by element.

    Args:
        x: integer tensor (int8/16/32/64, uint8/16/32/64), or an int (Python's or NumPy's)
            when ``y`` is a tensor: it becomes a 0-d tensor of ``y``'s dtype.
        y: the counts: an integer tensor, broadcast with ``x``, or an int (Python's or
            NumPy's), taken by value.
        direction: ``"LEFT"`` or ``"RIGHT"`` (``"left"``/``"right"`` accepted).
        arithmetic: for ``"RIGHT"`` on signed dtypes, sign-fill (True) or zero-fill (False).
        out: optional output of the result dtype; resized like PyTorch's builtins.

    With n the bit width of the result dtype: a left shift drops the bits past the top; a
    right shift fills with the sign bit (arithmetic, signed dtypes) or with zeros. A count
    that is negative or >= n gives 0, or -1 for an arithmetic right shift of a negative value.

    The result dtype is ``torch.result_type(x, y)`` and both operands are converted to it,
    so a count tensor can widen ``x``: int8 ``x`` with an int64 count tensor gives int64,
    and a logical right shift of int8 -1 by ``torch.tensor([1])`` is 2**63 - 1, not 127
    (give ``y`` in ``x``'s dtype, or as an int). A 0-d count tensor keeps ``x``'s dtype but
    is converted to it first: int8 ``x`` by ``torch.tensor(257)`` shifts by 1, by the int
    257 gives 0. uint16/32/64 combine only with themselves (no common dtype otherwise).
    Not differentiable; ``torch.jit.script`` compiles it. The whole contract:
    docs/semantics.md in the torchops repository.
    """
    if not _is_scripting():
        return _bitshift_compiled(x, y, direction, arithmetic, out)
    return _scripted_shift("torchops.bitshift", x, y, direction, arithmetic, out)


@overload
@_script_overload
def bitwise_left_shift(x: Tensor, y: Tensor, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                       name: Optional[str] = None) -> Tensor:
    ...


@overload
@_script_overload
def bitwise_left_shift(x: Tensor, y: int, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                       name: Optional[str] = None) -> Tensor:
    ...


@overload
@_script_overload
def bitwise_left_shift(x: int, y: Tensor, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                       name: Optional[str] = None) -> Tensor:
    ...


def bitwise_left_shift(
    x: Union[Tensor, int],
    y: Union[Tensor, int],
    is_arithmetic: bool = True,
    out: Optional[Tensor] = None,
    name: Optional[str] = None,
) -> Tensor:
    """Paddle's ``bitwise_left_shift``: ``x << y``; bits past the top are dropped, and a
    count that is negative or >= the bit width gives 0.

    ``is_arithmetic`` is accepted for Paddle's signature: a left shift is the same either
    way. ``name`` is accepted for Paddle's signature and ignored. Arguments, promotion and
    ``out`` as in :func:`bitshift`.
    """
    if not _is_scripting():
        return _bitwise_left_shift_compiled(x, y, is_arithmetic, out, name)
    return _scripted_shift("torchops.bitwise_left_shift", x, y, _direction(True), is_arithmetic, out)


@overload
@_script_overload
def bitwise_right_shift(x: Tensor, y: Tensor, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                        name: Optional[str] = None) -> Tensor:
    ...


@overload
@_script_overload
def bitwise_right_shift(x: Tensor, y: int, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                        name: Optional[str] = None) -> Tensor:
    ...


@overload
@_script_overload
def bitwise_right_shift(x: int, y: Tensor, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                        name: Optional[str] = None) -> Tensor:
    ...


def bitwise_right_shift(
    x: Union[Tensor, int],
    y: Union[Tensor, int],
    is_arithmetic: bool = True,
    out: Optional[Tensor] = None,
    name: Optional[str] = None,
) -> Tensor:
    """Paddle's ``bitwise_right_shift``: ``x >> y``, sign-filling (``is_arithmetic=True``)
    or zero-filling (``is_arithmetic=False``, a logical shift, also for signed dtypes).

    A count that is negative or >= the bit width gives the fill alone: -1 for a negative
    ``x`` shifted arithmetically, 0 otherwise. ``name`` is accepted for Paddle's signature
    and ignored. Arguments, promotion and ``out`` as in :func:`bitshift`.
    """
    if not _is_scripting():
        return _bitwise_right_shift_compiled(x, y, is_arithmetic, out, name)
    return _scripted_shift("torchops.bitwise_right_shift", x, y, _direction(False), is_arithmetic, out)


@overload
@_script_overload
def bitwise_left_shift_(x: Tensor, y: Tensor, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                        name: Optional[str] = None) -> Tensor:
    ...


@overload
@_script_overload
def bitwise_left_shift_(x: Tensor, y: int, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                        name: Optional[str] = None) -> Tensor:
    ...


def bitwise_left_shift_(
    x: Tensor,
    y: Union[Tensor, int],
    is_arithmetic: bool = True,
    out: Optional[Tensor] = None,
    name: Optional[str] = None,
) -> Tensor:
    """In-place :func:`bitwise_left_shift`; returns ``x``.

    The result must keep ``x``'s dtype and shape; otherwise an error, and ``x`` is unchanged.
    ``out`` and ``name`` are Paddle's: ``out`` may only be None or ``x`` itself, ``name``
    is ignored.
    """
    if not _is_scripting():
        return _bitwise_left_shift__compiled(x, y, is_arithmetic, out, name)
    return _scripted_shift_("torchops.bitwise_left_shift_", x, y, _direction(True), is_arithmetic, out)


@overload
@_script_overload
def bitwise_right_shift_(x: Tensor, y: Tensor, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                         name: Optional[str] = None) -> Tensor:
    ...


@overload
@_script_overload
def bitwise_right_shift_(x: Tensor, y: int, is_arithmetic: bool = True, out: Optional[Tensor] = None,
                         name: Optional[str] = None) -> Tensor:
    ...


def bitwise_right_shift_(
    x: Tensor,
    y: Union[Tensor, int],
    is_arithmetic: bool = True,
    out: Optional[Tensor] = None,
    name: Optional[str] = None,
) -> Tensor:
    """In-place :func:`bitwise_right_shift`; returns ``x``.

    The result must keep ``x``'s dtype and shape; otherwise an error, and ``x`` is unchanged.
    ``out`` and ``name`` are Paddle's: ``out`` may only be None or ``x`` itself, ``name``
    is ignored.
    """
    if not _is_scripting():
        return _bitwise_right_shift__compiled(x, y, is_arithmetic, out, name)
    return _scripted_shift_("torchops.bitwise_right_shift_", x, y, _direction(False), is_arithmetic, out)


def signbit(x: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """True where the sign bit of ``x`` is set, as a bool tensor.

    float16/bfloat16/float32/float64 read the IEEE sign bit (-0.0, -inf and a NaN with
    the sign bit set give True); signed integers give ``x < 0``; unsigned integers and
    bool give False. Complex is refused. Not differentiable: the result never requires
    grad. ``torch.jit.script`` compiles it.
    """
    if not _is_scripting():
        return _signbit_compiled(x, out)
    if out is None:
        return torch.ops.torchops.signbit(x)
    return torch.ops.torchops.signbit(x, out=out)


def bitwise_count(x: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """The number of 1 bits in the absolute value of each element, as a uint8 tensor:
    NumPy's ``np.bitwise_count`` (Python's ``int.bit_count``).

    Every integer dtype and bool (``True`` counts 1); other dtypes are refused. A negative
    value counts the bits of its magnitude (``-1`` gives 1, ``-128`` in int8 gives 1); for
    the bits of its two's complement, count ``x.view(torch.uint8)`` (the unsigned dtype of
    x's width). Not differentiable: the result never requires grad. ``torch.jit.script``
    compiles it.
    """
    if not _is_scripting():
        return _bitwise_count_compiled(x, out)
    if out is None:
        return torch.ops.torchops.bitwise_count(x)
    return torch.ops.torchops.bitwise_count(x, out=out)


def packbits(x: Tensor, dim: Optional[int] = -1, bitorder: str = "big", out: Optional[Tensor] = None) -> Tensor:
    """Packs each group of 8 elements along ``dim`` into one byte, a bit per element (1 where
    the element is nonzero): NumPy's ``np.packbits``, bit for bit.

    Args:
        x: an integer or bool tensor (int8/16/32/64, uint8/16/32/64, bool); floats are
            refused, as NumPy refuses them: pack ``x != 0``, or a float's bits through
            ``x.view(torch.int32)`` and :func:`pack`.
        dim: the dim packed, -1 (the last) by default; None packs x flattened (row-major),
            giving a 1-d result. NumPy's ``axis`` defaults to None instead: a PyTorch user
            packs each row of a (batch, n) mask, so the default keeps the batch. A 0-d x is
            one element (dim -1, 0 or None).
        bitorder: ``"big"`` (the first element in the most significant bit, NumPy's
            default) or ``"little"`` (the first element in the least significant bit).
        out: optional uint8 output; one of another shape is resized like PyTorch's builtins.

    The result is uint8, of x's shape with ``ceil(n / 8)`` at ``dim`` (n: x's size there);
    the last byte is padded with zero bits. :func:`unpackbits` undoes it. Not
    differentiable; ``torch.jit.script`` compiles it. The rules: docs/semantics.md.

    Example::

        >>> mask = torch.tensor([[1, 0, 1, 1, 0, 0, 0, 0, 1]], dtype=torch.bool)
        >>> torchops.packbits(mask)                      # 0b10110000, 0b10000000
        tensor([[176, 128]], dtype=torch.uint8)
        >>> torchops.packbits(mask, bitorder="little")   # 0b00001101, 0b00000001
        tensor([[13,  1]], dtype=torch.uint8)
    """
    if not _is_scripting():
        return _packbits_compiled(x, dim, bitorder, out)
    if out is None:
        return torch.ops.torchops.packbits(x, dim, bitorder)
    return torch.ops.torchops.packbits(x, dim, bitorder, out=out)


def unpackbits(x: Tensor, dim: Optional[int] = -1, count: Optional[int] = None, bitorder: str = "big",
               out: Optional[Tensor] = None) -> Tensor:
    """Unpacks each byte of ``x`` along ``dim`` into 8 elements, one per bit, 0 or 1: NumPy's
    ``np.unpackbits``, bit for bit, and the inverse of :func:`packbits`.

    Args:
        x: a uint8 tensor of packed bytes (any other dtype is refused).
        dim: the dim unpacked, -1 (the last) by default; None unpacks x flattened
            (row-major), giving a 1-d result. NumPy's ``axis`` defaults to None instead: a
            PyTorch user unpacks each row of a (batch, nbytes) mask, so the default keeps the
            batch. A 0-d x is one byte (dim -1, 0 or None).
        count: how many bits to give along ``dim``: None, all ``8 * nbytes``; ``count >= 0``,
            exactly ``count`` (the first ones; past the end, zero bits); ``count < 0``,
            ``8 * nbytes + count`` (dropping bits from the end; dropping more than there are
            is an error). ``unpackbits(packbits(m), count=m.shape[-1])`` gives ``m`` back.
        bitorder: ``"big"`` (the most significant bit first, NumPy's default) or
            ``"little"`` (the least significant bit first).
        out: optional uint8 output; one of another shape is resized like PyTorch's builtins.

    The result is uint8, of x's shape with the bit count at ``dim``. Not differentiable;
    ``torch.jit.script`` compiles it. The rules: docs/semantics.md.

    Example::

        >>> packed = torch.tensor([[176, 128]], dtype=torch.uint8)
        >>> torchops.unpackbits(packed, count=9)
        tensor([[1, 0, 1, 1, 0, 0, 0, 0, 1]], dtype=torch.uint8)
    """
    if not _is_scripting():
        return _unpackbits_compiled(x, dim, count, bitorder, out)
    if out is None:
        return torch.ops.torchops.unpackbits(x, dim, count, bitorder)
    return torch.ops.torchops.unpackbits(x, dim, count, bitorder, out=out)


def pack(x: Tensor, bits: int, dim: Optional[int] = -1, bitorder: str = "big", out: Optional[Tensor] = None) -> Tensor:
    """Packs the low ``bits`` bits of each element into bytes along ``dim``, ``8 // bits``
    consecutive elements a byte: 1-, 2- or 4-bit fields (4-bit weights, 2-bit codes).

    Args:
        x: an integer or bool tensor (int8/16/32/64, uint8/16/32/64, bool). Each element
            gives its two's complement low bits, ``e & (2**bits - 1)``: ``-1`` packs as all
            ones (15 for 4 bits), and with ``bits=1``, 2 packs a 0 (:func:`packbits` packs
            ``e != 0`` instead). Floats are refused: pack a float's bits through
            ``x.view(torch.int32)``.
        bits: the width of a field, 1, 2 or 4.
        dim: the dim packed, -1 (the last) by default; None packs x flattened (row-major),
            giving a 1-d result. NumPy's ``axis`` defaults to None: a PyTorch user packs
            each row of a (batch, n) tensor, so the default keeps the batch. A 0-d x is one
            element (dim -1, 0 or None).
        bitorder: ``"big"``: the first element of a byte in its most significant bits
            (field k at shift ``(8 // bits - 1 - k) * bits``), as NumPy's packbits orders
            bits; ``"little"``: the first in the least significant bits (shift ``k * bits``).
        out: optional uint8 output; one of another shape is resized like PyTorch's builtins.

    The result is uint8, of x's shape with ``ceil(n / (8 // bits))`` at ``dim`` (n: x's size
    there); the last byte is padded with zero fields. With ``bits=1`` on values 0 and 1 it
    is NumPy's ``np.packbits``. :func:`unpack` undoes it. Not differentiable;
    ``torch.jit.script`` compiles it. The rules: docs/semantics.md.

    Example::

        >>> weights = torch.tensor([[1, -2, 7]], dtype=torch.int8)
        >>> torchops.pack(weights, 4)                    # 0x1E, 0x70
        tensor([[ 30, 112]], dtype=torch.uint8)
        >>> torchops.pack(weights, 4, bitorder="little") # 0xE1, 0x07
        tensor([[225,   7]], dtype=torch.uint8)
    """
    if not _is_scripting():
        return _pack_compiled(x, bits, dim, bitorder, out)
    if out is None:
        return torch.ops.torchops.pack(x, bits, dim, bitorder)
    return torch.ops.torchops.pack(x, bits, dim, bitorder, out=out)


def unpack(x: Tensor, bits: int, dim: Optional[int] = -1, count: Optional[int] = None, bitorder: str = "big",
           signed: bool = False, out: Optional[Tensor] = None) -> Tensor:
    """Unpacks each byte of ``x`` along ``dim`` into ``8 // bits`` fields of ``bits`` bits:
    the inverse of :func:`pack`.

    Args:
        x: a uint8 tensor of packed bytes (any other dtype is refused).
        bits: the width of a field, 1, 2 or 4.
        dim: the dim unpacked, -1 (the last) by default; None unpacks x flattened
            (row-major), giving a 1-d result. NumPy's ``axis`` defaults to None: a PyTorch
            user unpacks each row of a (batch, nbytes) tensor, so the default keeps the
            batch. A 0-d x is one byte (dim -1, 0 or None).
        count: how many fields to give along ``dim``: None, all ``nbytes * (8 // bits)``;
            ``count >= 0``, exactly ``count`` (the first ones; past the end, zero fields);
            ``count < 0``, all but the last ``-count`` (dropping more than there are is an
            error). ``unpack(pack(w, 4), 4, count=w.shape[-1])`` gives ``w``'s fields back.
        bitorder: the order :func:`pack` wrote: ``"big"`` (the first field in the most
            significant bits) or ``"little"`` (the first in the least significant bits).
        signed: False: uint8 fields, 0 to ``2**bits - 1``; True: int8 fields, each
            sign-extended from ``bits`` bits (-8 to 7 for 4 bits; 0 or -1 for 1 bit).
        out: optional output, uint8 (int8 when ``signed``); one of another shape is resized
            like PyTorch's builtins.

    The result has x's shape with the field count at ``dim``. With ``bits=1`` it is NumPy's
    ``np.unpackbits``. Not differentiable; ``torch.jit.script`` compiles it. The rules:
    docs/semantics.md.

    Example::

        >>> packed = torch.tensor([[30, 112]], dtype=torch.uint8)
        >>> torchops.unpack(packed, 4, count=3)
        tensor([[ 1, 14,  7]], dtype=torch.uint8)
        >>> torchops.unpack(packed, 4, count=3, signed=True)
        tensor([[ 1, -2,  7]], dtype=torch.int8)
    """
    if not _is_scripting():
        return _unpack_compiled(x, bits, dim, count, bitorder, signed, out)
    if out is None:
        return torch.ops.torchops.unpack(x, bits, dim, count, bitorder, signed)
    return torch.ops.torchops.unpack(x, bits, dim, count, bitorder, signed, out=out)


def hamming_distance(x1: Tensor, x2: Tensor, out: Optional[Tensor] = None) -> Tensor:
    """The Hamming distances between the rows of two batches of packed codes: at
    ``[..., i, j]``, the number of bits in which row i of ``x1`` and row j of ``x2`` differ
    (``torch.cdist``'s shape).

    Args:
        x1: codes ``(..., M, B)``, uint8 or int8: one code of B bytes a row, a bit vector packed
            8 bits to a byte (``torchops.packbits(embeddings > 0)`` makes them). Only the bits
            count, so uint8 codes may be compared with int8 ones.
        x2: codes ``(..., N, B)``, of the same B. The batch dims (all but the last two)
            broadcast with x1's, as ``torch.cdist``'s do.
        out: optional int32 output; one of another shape is resized like PyTorch's builtins,
            one of the result's shape keeps its strides. It must not overlap x1 or x2.

    The result is int32 ``(..., M, N)``, NumPy's
    ``np.bitwise_count(a[..., :, None, :] ^ b[..., None, :, :]).sum(-1)``; codes of 0 bytes
    are at distance 0, and no rows give an empty result. It is the whole matrix, 4 bytes a
    pair: for each query's k nearest only, :func:`hamming_topk` makes none.

    Errors: a ``TypeError`` for a dtype that is not a code's (floats and bool: pack them
    with :func:`packbits`; codes held in wider integers: view them as bytes with
    ``x.view(torch.uint8)``); a ``ValueError`` for fewer than 2 dims, codes of different
    sizes (B) or batch dims that do not broadcast; a ``RuntimeError`` for an out that is not
    int32 (as PyTorch's builtins) or tensors on more than one device. Not differentiable;
    ``torch.jit.script`` compiles it. The rules: docs/semantics.md.

    Example::

        >>> codes = torch.tensor([[0b1011], [0b0001], [0b1111]], dtype=torch.uint8)
        >>> torchops.hamming_distance(codes[:2], codes)
        tensor([[0, 2, 1],
                [2, 0, 3]], dtype=torch.int32)
    """
    if not _is_scripting():
        return _hamming_distance_compiled(x1, x2, out)
    if out is None:
        return torch.ops.torchops.hamming_distance(x1, x2)
    return torch.ops.torchops.hamming_distance(x1, x2, out=out)


def hamming_topk(queries: Tensor, database: Tensor, k: int,
                 out: Optional[Tuple[Tensor, Tensor]] = None) -> HammingTopk:
    """The ``k`` codes of ``database`` nearest each query by Hamming distance, as
    ``torch.topk(hamming_distance(queries, database), k, largest=False)`` returns them, without
    making that matrix.

    Args:
        queries: codes ``(Q, B)``, uint8 or int8, one a row (as :func:`hamming_distance`
            takes them; exactly 2 dims: for batches of searches, ``torch.vmap``).
        database: codes ``(N, B)``, uint8 or int8, of the same B.
        k: how many to give a query, ``0 <= k <= N`` (an empty database takes only 0).
        out: optional ``(values, indices)``, int32 and int64 tensors, as ``torch.topk``'s
            ``out=``: each of another shape is resized like PyTorch's builtins, one of the
            result's shape keeps its strides; neither may overlap an input or the other.

    Returns a ``HammingTopk(values, indices)``, a named tuple as ``torch.topk``'s result:
    ``values``, the int32 distances ``(Q, k)``, and ``indices``, the int64 rows of the
    database ``(Q, k)``, nearest first. **Among equal distances the smaller index comes
    first**, on every path and device, so a search is reproducible (faiss's
    ``IndexBinaryFlat`` and ``torch.topk`` on the distances may order ties otherwise). With
    ``out=``, its values and indices are the outs themselves.

    Memory: beyond its inputs and results a search holds a tile of distances and Q × k
    candidates per thread, whatever N is; no ``(Q, N)`` matrix.

    Errors: a ``TypeError`` for a dtype that is not a code's (as :func:`hamming_distance`),
    outs not int32 and int64, or an ``out`` that is not two tensors; a ``ValueError`` for
    other than 2 dims or codes of different sizes; an ``IndexError`` for a k outside
    ``[0, N]``; a ``RuntimeError`` for tensors on more than one device. Not differentiable;
    ``torch.jit.script`` compiles it (its result a ``Tuple[Tensor, Tensor]`` there too, with
    ``.values`` and ``.indices``). The rules: docs/semantics.md.

    Example::

        >>> database = torch.tensor([[0b1111], [0b0001], [0b1011], [0b0011]], dtype=torch.uint8)
        >>> values, indices = torchops.hamming_topk(database[2:3], database, 3)
        >>> values, indices                     # rows 3 and 0 tie at 1: 0 first
        (tensor([[0, 1, 1]], dtype=torch.int32), tensor([[2, 0, 3]]))
    """
    if not _is_scripting():
        return _hamming_topk_compiled(queries, database, k, out)
    if out is None:
        values, indices = torch.ops.torchops.hamming_topk(queries, database, k)
    else:
        values, indices = torch.ops.torchops.hamming_topk(queries, database, k, values=out[0], indices=out[1])
    return HammingTopk(values, indices)


def cpu_capability() -> str:
    """The kernel level in use: ``"default"`` (portable C++, compiled for the architecture's
    baseline: NEON on aarch64), or on x86-64 ``"avx2"``, ``"avx512"`` or ``"avx512_bitalg"``.

    Chosen at load from what the CPU supports; ``TORCHOPS_CPU_CAPABILITY=<level>`` forces a
    level (a name that is not a level of this architecture, or a level this CPU cannot run,
    is an error).
    """
    return torch.ops.torchops._cpu_capability()


# The twins, the compiled functions and the TorchScript signatures are held to the declarations
# above, and torch.compile traces each function's twin in its place (torchops/_fastpath.py).
_fastpath.check_declarations(globals())
_fastpath.compile_as_twins({name: globals()[name] for name in _fastpath.FUNCTIONS})
