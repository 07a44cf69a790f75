"""The typed Python API of the torchops operators, through ``torch.ops``.

Every function here calls ``torch.ops.torchops.*``; the rules they follow (out-of-range
counts, promotion, in-place and ``out=``) are stated in docs/semantics.md. ``torchops``
exports compiled entries of these functions, with their signatures and docstrings
(binding/python_binding.cpp, torchops/_fastpath.py); each function here is its entry's
twin: it takes every call the entry does not (subclasses, modes, unusual arguments) and
owns the argument checks and messages of the typed API, and torch.compile traces it.
"""
from __future__ import annotations

import operator
import sys
from typing import Optional, Union

import torch
from torch import Tensor

from torchops._contract import BITSHIFT, BITSHIFT_INPLACE, DIRECTION_NAMES, SHIFT_DTYPE_NAMES, SIGNBIT, dtype_name

__all__ = [
    "bitshift",
    "cpu_capability",
    "bitwise_left_shift",
    "bitwise_left_shift_",
    "bitwise_right_shift",
    "bitwise_right_shift_",
    "signbit",
]

_ops = torch.ops.torchops

# Any count below 0 or at least 64 is out of range for every dtype (the widest has 64
# bits), so Python-int counts are clamped to [-1, 64] before they cross into C++: the
# result is the same, and counts beyond int64 (2**70) still work.
_COUNT_MIN, _COUNT_MAX = -1, 64


def _is_numpy_bool(value: object) -> bool:
    numpy = sys.modules.get("numpy")  # a NumPy bool exists only if NumPy was imported
    return numpy is not None and isinstance(value, numpy.bool_)


def _int_or_tensor(op: str, arg: str, value: object) -> Union[Tensor, int]:
    """A tensor, or an int: Python's, or any integer with ``__index__`` (NumPy integers,
    0-d integer arrays), as torch's builtins take them."""
    if isinstance(value, (int, Tensor)) and not isinstance(value, bool):
        return value
    # bool is an int in Python, but a bool count or operand is refused like a bool tensor.
    if not isinstance(value, bool) and not _is_numpy_bool(value):
        try:
            return operator.index(value)
        except TypeError:  # no __index__, or one that refuses (a 0-d array of floats)
            pass
    raise TypeError(f"{op}: {arg} must be a tensor or an int, got {type(value).__name__}")


def _checked_flag(op: str, arg: str, value: object) -> bool:
    # torch.ops takes None, 0, 2 or 1.0 for a bool argument (None as False: a silent logical
    # shift); like torch's own functions, the typed API takes only a bool (or NumPy's).
    if isinstance(value, bool) or _is_numpy_bool(value):
        return bool(value)
    raise TypeError(f"{op}: {arg} must be a bool, got {type(value).__name__}")


def _int_as_tensor(op: str, value: int, like: Tensor) -> Tensor:
    """x given as a Python int becomes a 0-d tensor of y's dtype; it must fit that dtype."""
    dtype = like.dtype
    if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
        raise TypeError(
            f"{op}: y must be an integer tensor ({SHIFT_DTYPE_NAMES}), got {dtype_name(dtype)}"
        )
    info = torch.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise ValueError(
            f"{op}: x = {value} does not fit y's dtype {dtype_name(dtype)} "
            f"([{info.min}, {info.max}]); pass x as a tensor of a wider dtype"
        )
    return torch.tensor(value, dtype=dtype, device=like.device)


# The overloads, looked up once: attribute lookups on torch.ops cost as much as a small op.
_BITSHIFT = _ops.bitshift.default
_BITSHIFT_OUT = _ops.bitshift.out
_BITSHIFT_SCALAR = _ops.bitshift.Scalar
_BITSHIFT_SCALAR_OUT = _ops.bitshift.Scalar_out
_BITSHIFT_INPLACE = _ops.bitshift_.default
_BITSHIFT_INPLACE_SCALAR = _ops.bitshift_.Scalar
_SIGNBIT = _ops.signbit.default
_SIGNBIT_OUT = _ops.signbit.out


def _clamped_count(op: str, y: object) -> int:
    y = _int_or_tensor(op, "y", y)
    # Comparisons rather than min/max: under torch.compile(dynamic=True) `y` is a symbolic
    # int that reaches the generated code as an int64, which a count beyond int64 does not
    # fit; the comparisons become guards, and such a count, a constant.
    if y < _COUNT_MIN:
        return _COUNT_MIN
    if y > _COUNT_MAX:
        return _COUNT_MAX
    return y


def _shift(
    op: str,
    x: Union[Tensor, int],
    y: Union[Tensor, int],
    direction: str,
    arithmetic: bool,
    out: Optional[Tensor],
    flag_name: str = "arithmetic",
) -> Tensor:
    arithmetic = _checked_flag(op, flag_name, arithmetic)
    if isinstance(y, Tensor):
        if not isinstance(x, Tensor):
            x = _int_as_tensor(op, _int_or_tensor(op, "x", x), y)
        if out is None:
            return _BITSHIFT(x, y, direction, arithmetic)
        _BITSHIFT_OUT(x, y, direction, arithmetic, out=out)
        return out
    if not isinstance(x, Tensor):
        _int_or_tensor(op, "x", x)
        _int_or_tensor(op, "y", y)
        raise TypeError(f"{op}: x or y must be a tensor, got two ints")
    count = _clamped_count(op, y)
    if out is None:
        return _BITSHIFT_SCALAR(x, count, direction, arithmetic)
    _BITSHIFT_SCALAR_OUT(x, count, direction, arithmetic, out=out)
    return out


def _shift_(
    op: str, x: Tensor, y: Union[Tensor, int], direction: str, is_arithmetic: bool, out: Optional[Tensor]
) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: x must be a tensor, got {type(x).__name__}")
    if out is not None and out is not x:
        # Paddle's signature has `out` on the in-place forms too; the result is x itself.
        raise ValueError(f"{op}: out must be None or x itself (the in-place form writes into x)")
    arithmetic = _checked_flag(op, "is_arithmetic", is_arithmetic)
    if isinstance(y, Tensor):
        _BITSHIFT_INPLACE(x, y, direction, arithmetic)
    else:
        _BITSHIFT_INPLACE_SCALAR(x, _clamped_count(op, y), direction, arithmetic)
    return x


def bitshift(
    x: Union[Tensor, int],
    y: Union[Tensor, int],
    direction: str,
    arithmetic: bool = True,
    *,
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
    Not differentiable. The whole contract: docs/semantics.md in the torchops repository.
    """
    if not isinstance(direction, str):  # torch.ops would take b"LEFT" as "LEFT"
        raise TypeError(
            f"{BITSHIFT}: direction must be a str, one of {DIRECTION_NAMES}, "
            f"got {type(direction).__name__}"
        )
    return _shift(BITSHIFT, x, y, direction, arithmetic, out)


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
    return _shift(BITSHIFT, x, y, "LEFT", is_arithmetic, out, "is_arithmetic")


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
    return _shift(BITSHIFT, x, y, "RIGHT", is_arithmetic, out, "is_arithmetic")


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
    return _shift_(BITSHIFT_INPLACE, x, y, "LEFT", is_arithmetic, out)


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
    return _shift_(BITSHIFT_INPLACE, x, y, "RIGHT", is_arithmetic, out)


def signbit(x: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """True where the sign bit of ``x`` is set, as a bool tensor.

    float16/bfloat16/float32/float64 read the IEEE sign bit (-0.0, -inf and a NaN with
    the sign bit set give True); signed integers give ``x < 0``; unsigned integers and
    bool give False. Complex is refused. Not differentiable: the result never requires grad.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"{SIGNBIT}: x must be a tensor, got {type(x).__name__}")
    if out is None:
        return _SIGNBIT(x)
    _SIGNBIT_OUT(x, out=out)
    return out


def cpu_capability() -> str:
    """The kernel level in use: ``"default"`` (portable C++), ``"avx2"`` or ``"avx512"``.

    Chosen at load from what the CPU supports; ``TORCHOPS_CPU_CAPABILITY=default|avx2|avx512``
    forces a level (an unknown name, or a level this CPU cannot run, is an error).
    """
    return _ops._cpu_capability()
