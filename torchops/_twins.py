"""The typed API through ``torch.ops``: the *twin* of each function of ``torchops.ops``.

The compiled functions (binding/python_binding.cpp, torchops/_fastpath.py) take the common
calls of the typed API and hand every other one (a tensor subclass, a TorchFunctionMode, a
NumPy integer, a Python-int x, a wrong argument) to the twin of the same signature here,
which reaches the operators through ``torch.ops`` and owns the argument checks and messages
of the typed API. Every message names the function the user called: the twins' own checks
say it, and the operators' messages (which name the op, ``torchops.bitshift: ...``) are said
again with that name. The rules: docs/semantics.md.

torch.compile traces the twins in place of the typed functions (torchops/_fastpath.py), and
guards every module global that a traced function reads: each helper's code, each
constant, each builtin, re-checked before every call of the compiled code. So the twins
read none: they are made by ``_make_twins``, and every name they use, the builtins they
call on the way to the op included, is one of its locals, which the twins hold as closure
cells that torch.compile takes as constants. A compiled typed call is then guarded as
``torch.ops.torchops.*`` is: the function called and the tensors.
"""
from __future__ import annotations

import builtins
from typing import NamedTuple, Optional, Tuple, Union

from torch import Tensor  # for the annotations (inspect.signature reads them here)

# hamming_topk's result, as torch.topk's is torch.return_types.topk: a named tuple (values,
# indices) that unpacks as a tuple. Made here, where the twins and the binding
# (torchops/_fastpath.py hands it over) are made, before torchops.ops, which exports it and
# returns it from its TorchScript body: TorchScript takes a NamedTuple's fields from its
# annotations (real types here: the functional form, which this module's postponed
# annotations do not turn into strings) and saves the type with a scripted model, so a
# loaded model gives one without the torchops package.
HammingTopk = NamedTuple("HammingTopk", [("values", Tensor), ("indices", Tensor)])
HammingTopk.__module__ = "torchops.ops"  # where the typed API exports it (pickle and TorchScript name it so)
HammingTopk.__doc__ = """torchops.hamming_topk's result: ``values``, the int32 distances (Q, k), and ``indices``,
the int64 rows of the database (Q, k), nearest first. A tuple: ``values, indices = ...``."""


def _register_hamming_topk_as_pytree_node() -> None:
    """torch.export saves a program's output structure by type name, and refuses a named
    tuple registered without one: given one here, a model that returns the result as it
    comes saves and loads (its fields are the node's keys: ``.values``, ``.indices``)."""
    from torch.utils import _pytree as pytree  # torch.export's documented extension point

    pytree.register_pytree_node(
        HammingTopk,
        lambda result: (list(result), None),
        lambda fields, _: HammingTopk(*fields),
        serialized_type_name="torchops.ops.HammingTopk",
        flatten_with_keys_fn=lambda result: ([(pytree.GetAttrKey(name), field) for name, field
                                              in zip(HammingTopk._fields, result)], None),
    )


_register_hamming_topk_as_pytree_node()


def _make_twins() -> dict:
    """The twins and say_as, as closures over this function's locals (the module docstring
    says why: no module global is read when they run)."""
    import operator
    import sys

    import torch
    from torch import Tensor

    from torchops._contract import (
        BITSHIFT, BITSHIFT_INPLACE, DECLARATIONS, DIRECTION_NAMES, HAMMING_DISTANCE, HAMMING_TOPK, LEFT, PACK,
        PACKBITS, RIGHT, SHIFT_DTYPE_NAMES, UNARY_OPS, UNPACK, UNPACKBITS, dtype_name,
    )

    # The builtins the twins call, as locals too.
    isinstance, bool, int, len, list, str, tuple, type = (
        builtins.isinstance, builtins.bool, builtins.int, builtins.len, builtins.list, builtins.str, builtins.tuple,
        builtins.type)
    Exception, TypeError, ValueError = builtins.Exception, builtins.TypeError, builtins.ValueError
    _ops = torch.ops.torchops

    # Any count below 0 or at least 64 is out of range for every dtype (the widest has 64
    # bits), so Python-int counts are clamped to [-1, 64] before they cross into C++: the
    # result is the same, and counts beyond int64 (2**70) still work.
    _COUNT_MIN, _COUNT_MAX = -1, 64

    # The overloads, looked up once: attribute lookups on torch.ops cost as much as a small op.
    _BITSHIFT = _ops.bitshift.default
    _BITSHIFT_OUT = _ops.bitshift.out
    _BITSHIFT_SCALAR = _ops.bitshift.Scalar
    _BITSHIFT_SCALAR_OUT = _ops.bitshift.Scalar_out
    _BITSHIFT_INPLACE = _ops.bitshift_.default
    _BITSHIFT_INPLACE_SCALAR = _ops.bitshift_.Scalar
    _PACKBITS, _PACKBITS_OUT = _ops.packbits.default, _ops.packbits.out
    _UNPACKBITS, _UNPACKBITS_OUT = _ops.unpackbits.default, _ops.unpackbits.out
    _PACK, _PACK_OUT = _ops.pack.default, _ops.pack.out
    _UNPACK, _UNPACK_OUT = _ops.unpack.default, _ops.unpack.out
    # The packing ops' checks, in their C++ entries' order and words (torchops/_contract.py),
    # for the calls that cannot reach them: an int beyond int64 does not cross into C++.
    _PACKING_CHECKS = {op: DECLARATIONS[op.rpartition(".")[2]].check for op in (PACKBITS, UNPACKBITS, PACK, UNPACK)}
    _INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1
    _HAMMING_DISTANCE, _HAMMING_DISTANCE_OUT = _ops.hamming_distance.default, _ops.hamming_distance.out
    _HAMMING_TOPK, _HAMMING_TOPK_OUT = _ops.hamming_topk.default, _ops.hamming_topk.out
    # hamming_topk's checks, for a k beyond int64 (as the packing ops'), and its result's type.
    _HAMMING_TOPK_CHECK = DECLARATIONS[HAMMING_TOPK.rpartition(".")[2]].check
    _HammingTopk = HammingTopk

    # How the operators' messages begin: the op's name.
    _OP_PREFIXES = (BITSHIFT + ": ", BITSHIFT_INPLACE + ": ")

    def _call_op(called: str, op, *args, **kwargs):
        """op(*args, **kwargs), its errors said as `called`, the function the user called: a
        message that names the op (``torchops.bitshift: ...``) names `called` instead, keeping
        its type."""
        try:
            return op(*args, **kwargs)
        except Exception as error:
            say_as(called, error)
            raise

    def say_as(called: str, error: BaseException) -> None:
        """Makes an error whose message names an op (``torchops.bitshift: ...``) name `called`
        instead, keeping its type. The compiled functions say the op's errors with it too."""
        message = error.args[0] if len(error.args) == 1 else None
        if isinstance(message, str) and message.startswith(_OP_PREFIXES):
            error.args = (f"{called}: {message.partition(': ')[2]}",)

    def _is_numpy_bool(value: object) -> bool:
        numpy = sys.modules.get("numpy")  # a NumPy bool exists only if NumPy was imported
        return numpy is not None and isinstance(value, numpy.bool_)

    def _int_or_tensor(called: str, arg: str, value: object) -> Union[Tensor, int]:
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
        raise TypeError(f"{called}: {arg} must be a tensor or an int, got {type(value).__name__}")

    def _checked_flag(called: str, arg: str, value: object) -> bool:
        # torch.ops takes None, 0, 2 or 1.0 for a bool argument (None as False: a silent logical
        # shift); like torch's own functions, the typed API takes only a bool (or NumPy's).
        if isinstance(value, bool) or _is_numpy_bool(value):
            return bool(value)
        raise TypeError(f"{called}: {arg} must be a bool, got {type(value).__name__}")

    def _check_out(called: str, out: object) -> None:
        if out is not None and not isinstance(out, Tensor):
            raise TypeError(f"{called}: out must be a tensor or None, got {type(out).__name__}")

    def _type_name(value: object) -> str:
        return "None" if value is None else type(value).__name__

    def _checked_int(called: str, arg: str, value: object, optional: bool) -> Optional[int]:
        """An int argument: Python's, or any integer with ``__index__`` (NumPy's), not a bool
        (torch.ops would take True as 1); None too where the parameter is optional."""
        if value is None and optional:
            return None
        if isinstance(value, (int, torch.SymInt)) and not isinstance(value, bool):
            return value  # a SymInt as it is: its __index__ would make it a constant
        if not isinstance(value, bool) and not _is_numpy_bool(value):
            try:
                return operator.index(value)
            except TypeError:
                pass
        raise TypeError(f"{called}: {arg} must be an int{' or None' if optional else ''}, got {_type_name(value)}")

    def _packing(called: str, functional, written, x: Tensor, args: tuple, out: Optional[Tensor]) -> Tensor:
        """A packing op's call: ``args`` are the schema's after x (ints, str and bool checked)."""
        for arg in args:
            if isinstance(arg, int) and not isinstance(arg, bool) and not _INT64_MIN <= arg <= _INT64_MAX:
                # torch.ops cannot take such a bits, dim or count: the op's checks, run here,
                # refuse it in their order and words (a count beyond int64 asks for a result
                # no tensor can hold).
                _PACKING_CHECKS[called](called, x, *args)
        _check_out(called, out)
        if out is None:
            return _call_op(called, functional, x, *args)
        return _call_op(called, written, x, *args, out=out)

    def _packing_args(called: str, x: object, bitorder: object) -> None:
        if not isinstance(x, Tensor):
            raise TypeError(f"{called}: x must be a tensor, got {_type_name(x)}")
        if not isinstance(bitorder, str):  # torch.ops would take b"big" as "big"
            raise TypeError(f"{called}: bitorder must be a str, 'big' or 'little', got {_type_name(bitorder)}")

    def _int_as_tensor(called: str, value: int, like: Tensor) -> Tensor:
        """x given as a Python int becomes a 0-d tensor of y's dtype; it must fit that dtype."""
        dtype = like.dtype
        if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
            raise TypeError(
                f"{called}: y must be an integer tensor ({SHIFT_DTYPE_NAMES}), got {dtype_name(dtype)}"
            )
        info = torch.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise ValueError(
                f"{called}: x = {value} does not fit y's dtype {dtype_name(dtype)} "
                f"([{info.min}, {info.max}]); pass x as a tensor of a wider dtype"
            )
        return torch.tensor(value, dtype=dtype, device=like.device)

    def _clamped_count(called: str, y: object) -> int:
        y = _int_or_tensor(called, "y", y)
        # Comparisons rather than min/max: under torch.compile(dynamic=True) `y` is a symbolic
        # int that reaches the generated code as an int64, which a count beyond int64 does not
        # fit; the comparisons become guards, and such a count, a constant.
        if y < _COUNT_MIN:
            return _COUNT_MIN
        if y > _COUNT_MAX:
            return _COUNT_MAX
        return y

    def _shift(
        called: str,
        x: Union[Tensor, int],
        y: Union[Tensor, int],
        direction: str,
        arithmetic: bool,
        out: Optional[Tensor],
        flag_name: str = "arithmetic",
    ) -> Tensor:
        arithmetic = _checked_flag(called, flag_name, arithmetic)
        if isinstance(y, Tensor):
            if not isinstance(x, Tensor):
                x = _int_as_tensor(called, _int_or_tensor(called, "x", x), y)
            _check_out(called, out)
            if out is None:
                return _call_op(called, _BITSHIFT, x, y, direction, arithmetic)
            return _call_op(called, _BITSHIFT_OUT, x, y, direction, arithmetic, out=out)
        if not isinstance(x, Tensor):
            _int_or_tensor(called, "x", x)
            _int_or_tensor(called, "y", y)
            raise TypeError(f"{called}: x or y must be a tensor, got two ints")
        count = _clamped_count(called, y)
        _check_out(called, out)
        if out is None:
            return _call_op(called, _BITSHIFT_SCALAR, x, count, direction, arithmetic)
        return _call_op(called, _BITSHIFT_SCALAR_OUT, x, count, direction, arithmetic, out=out)

    def _shift_(
        called: str, x: Tensor, y: Union[Tensor, int], direction: str, is_arithmetic: bool, out: Optional[Tensor]
    ) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"{called}: x must be a tensor, got {type(x).__name__}")
        if out is not None and out is not x:
            # Paddle's signature has `out` on the in-place forms too; the result is x itself.
            raise ValueError(f"{called}: out must be None or x itself (the in-place form writes into x)")
        arithmetic = _checked_flag(called, "is_arithmetic", is_arithmetic)
        if isinstance(y, Tensor):
            return _call_op(called, _BITSHIFT_INPLACE, x, y, direction, arithmetic)
        return _call_op(called, _BITSHIFT_INPLACE_SCALAR, x, _clamped_count(called, y), direction, arithmetic)

    # The twins, with the signatures of torchops.ops (and of the binding's compiled functions).
    def bitshift(
        x: Union[Tensor, int],
        y: Union[Tensor, int],
        direction: str,
        arithmetic: bool = True,
        out: Optional[Tensor] = None,
    ) -> Tensor:
        if not isinstance(direction, str):  # torch.ops would take b"LEFT" as "LEFT"
            raise TypeError(
                f"{BITSHIFT}: direction must be a str, one of {DIRECTION_NAMES}, "
                f"got {type(direction).__name__}"
            )
        return _shift(BITSHIFT, x, y, direction, arithmetic, out)

    def _paddle_twin(direction: str, in_place: bool):
        """The twin of Paddle's bitwise_{left,right}_shift (in_place: the form ending in _)."""
        function_name = f"bitwise_{direction.lower()}_shift" + ("_" if in_place else "")
        called = f"torchops.{function_name}"

        def twin(
            x: Union[Tensor, int],
            y: Union[Tensor, int],
            is_arithmetic: bool = True,
            out: Optional[Tensor] = None,
            name: Optional[str] = None,
        ) -> Tensor:
            if in_place:
                return _shift_(called, x, y, direction, is_arithmetic, out)
            return _shift(called, x, y, direction, is_arithmetic, out, "is_arithmetic")

        if in_place:  # x must be a tensor
            twin.__annotations__["x"] = "Tensor"
        twin.__name__ = twin.__qualname__ = function_name
        return twin

    bitwise_left_shift = _paddle_twin(LEFT, in_place=False)
    bitwise_right_shift = _paddle_twin(RIGHT, in_place=False)
    bitwise_left_shift_ = _paddle_twin(LEFT, in_place=True)
    bitwise_right_shift_ = _paddle_twin(RIGHT, in_place=True)

    def _unary_twin(op):
        """The twin of f(x, out=None), a unary op's function (``op``: its packet)."""
        called, functional, written = f"torchops.{op.__name__}", op.default, op.out

        def twin(x: Tensor, out: Optional[Tensor] = None) -> Tensor:
            if not isinstance(x, Tensor):
                raise TypeError(f"{called}: x must be a tensor, got {type(x).__name__}")
            _check_out(called, out)
            if out is None:
                return _call_op(called, functional, x)
            return _call_op(called, written, x, out=out)

        twin.__name__ = twin.__qualname__ = op.__name__
        return twin

    # The packing ops' twins: the argument kinds checked here (the values are the op's to check).
    def packbits(x: Tensor, dim: Optional[int] = -1, bitorder: str = "big", out: Optional[Tensor] = None) -> Tensor:
        _packing_args(PACKBITS, x, bitorder)
        dim = _checked_int(PACKBITS, "dim", dim, optional=True)
        return _packing(PACKBITS, _PACKBITS, _PACKBITS_OUT, x, (dim, bitorder), out)

    def unpackbits(x: Tensor, dim: Optional[int] = -1, count: Optional[int] = None, bitorder: str = "big",
                   out: Optional[Tensor] = None) -> Tensor:
        _packing_args(UNPACKBITS, x, bitorder)
        dim = _checked_int(UNPACKBITS, "dim", dim, optional=True)
        count = _checked_int(UNPACKBITS, "count", count, optional=True)
        return _packing(UNPACKBITS, _UNPACKBITS, _UNPACKBITS_OUT, x, (dim, count, bitorder), out)

    def pack(x: Tensor, bits: int, dim: Optional[int] = -1, bitorder: str = "big",
             out: Optional[Tensor] = None) -> Tensor:
        _packing_args(PACK, x, bitorder)
        bits = _checked_int(PACK, "bits", bits, optional=False)
        dim = _checked_int(PACK, "dim", dim, optional=True)
        return _packing(PACK, _PACK, _PACK_OUT, x, (bits, dim, bitorder), out)

    def unpack(x: Tensor, bits: int, dim: Optional[int] = -1, count: Optional[int] = None, bitorder: str = "big",
               signed: bool = False, out: Optional[Tensor] = None) -> Tensor:
        _packing_args(UNPACK, x, bitorder)
        bits = _checked_int(UNPACK, "bits", bits, optional=False)
        dim = _checked_int(UNPACK, "dim", dim, optional=True)
        count = _checked_int(UNPACK, "count", count, optional=True)
        signed = _checked_flag(UNPACK, "signed", signed)
        return _packing(UNPACK, _UNPACK, _UNPACK_OUT, x, (bits, dim, count, bitorder, signed), out)

    # The search ops' twins: the argument kinds checked here (tensors, an int k, out= a tensor or
    # hamming_topk's pair), the values (dtypes, dims, sizes, k's range) by the op.
    def _check_tensor(called: str, arg: str, value: object) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"{called}: {arg} must be a tensor, got {_type_name(value)}")

    def _check_out_pair(called: str, out: object) -> None:
        """torch.topk's out=: a tuple (or list) of two tensors, values then indices."""
        if isinstance(out, (tuple, list)):
            if len(out) == 2 and isinstance(out[0], Tensor) and isinstance(out[1], Tensor):
                return
            got = (f"a {type(out).__name__} of {len(out)}" if len(out) != 2
                   else f"({_type_name(out[0])}, {_type_name(out[1])})")
        else:
            got = _type_name(out)
        raise TypeError(f"{called}: out must be None or a tuple of two tensors (values, indices), got {got}")

    def hamming_distance(x1: Tensor, x2: Tensor, out: Optional[Tensor] = None) -> Tensor:
        _check_tensor(HAMMING_DISTANCE, "x1", x1)
        _check_tensor(HAMMING_DISTANCE, "x2", x2)
        _check_out(HAMMING_DISTANCE, out)
        if out is None:
            return _call_op(HAMMING_DISTANCE, _HAMMING_DISTANCE, x1, x2)
        return _call_op(HAMMING_DISTANCE, _HAMMING_DISTANCE_OUT, x1, x2, out=out)

    def hamming_topk(queries: Tensor, database: Tensor, k: int,
                     out: Optional[Tuple[Tensor, Tensor]] = None) -> HammingTopk:
        _check_tensor(HAMMING_TOPK, "queries", queries)
        _check_tensor(HAMMING_TOPK, "database", database)
        k = _checked_int(HAMMING_TOPK, "k", k, optional=False)
        if not _INT64_MIN <= k <= _INT64_MAX:
            # The op's checks refuse such a k, in their order and words (it does not cross into C++).
            _HAMMING_TOPK_CHECK(HAMMING_TOPK, queries, database, k)
        if out is None:
            result = _call_op(HAMMING_TOPK, _HAMMING_TOPK, queries, database, k)
        else:
            _check_out_pair(HAMMING_TOPK, out)
            result = _call_op(HAMMING_TOPK, _HAMMING_TOPK_OUT, queries, database, k, values=out[0], indices=out[1])
        # torch.ops gives a plain tuple; a __torch_function__ that answers otherwise is answered as it is.
        if isinstance(result, tuple) and len(result) == 2:
            return _HammingTopk(result[0], result[1])
        return result

    twins = {twin.__name__: twin for twin in (
        bitshift, bitwise_left_shift, bitwise_right_shift, bitwise_left_shift_, bitwise_right_shift_,
        packbits, unpackbits, pack, unpack, hamming_distance, hamming_topk)}
    # A unary op's twin is made from its registered schemas: a new one needs no line here.
    for op in UNARY_OPS:
        twins[op] = _unary_twin(getattr(_ops, op))
    return {"say_as": say_as, **twins}


_made = _make_twins()
say_as = _made.pop("say_as")
#: Every twin, by the name of its function in torchops.ops.
TWINS = _made
