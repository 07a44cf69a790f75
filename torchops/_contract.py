"""The facts of the contract (docs/semantics.md) that more than one Python module needs: the
ops' names as messages say them, their overloads, the dtypes they take, the directions, and
each op's declaration (``DECLARATIONS``: its checks and its result dtype).

_twins.py, _fake.py, _vmap.py, _inductor.py, _sharding.py and onnx.py take them from here,
so that adding a dtype is one edit on the Python side (csrc/ops/checks.h has the C++ side's
own; tests/test_torch_integration.py checks that the fake kernels' messages are the ops').
The overloads are read from the registered library (csrc/overloads.h's list), so this is
imported once it is loaded (``torchops/__init__.py``); tests/test_coverage.py checks that
every integration covers each of them.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

#: The ops as every message names them.
BITSHIFT = "torchops.bitshift"
BITSHIFT_INPLACE = "torchops.bitshift_"
SIGNBIT = "torchops.signbit"
BITWISE_COUNT = "torchops.bitwise_count"
PACKBITS = "torchops.packbits"
UNPACKBITS = "torchops.unpackbits"
PACK = "torchops.pack"
UNPACK = "torchops.unpack"
HAMMING_DISTANCE = "torchops.hamming_distance"
HAMMING_TOPK = "torchops.hamming_topk"

#: The dtypes a shift takes, for x and for a tensor count.
SHIFT_DTYPES = (
    torch.int8, torch.int16, torch.int32, torch.int64,
    torch.uint8, torch.uint16, torch.uint32, torch.uint64,
)
#: The float dtypes whose IEEE sign bit signbit reads.
SIGNBIT_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
#: Every dtype signbit takes.
SIGNBIT_DTYPES = SHIFT_DTYPES + SIGNBIT_FLOAT_DTYPES + (torch.bool,)
#: Every dtype bitwise_count takes: the integers and bool.
BITWISE_COUNT_DTYPES = SHIFT_DTYPES + (torch.bool,)
#: Every dtype packbits and pack take: the integers and bool.
PACK_DTYPES = SHIFT_DTYPES + (torch.bool,)
#: The dtype unpackbits and unpack take: packed bytes.
UNPACK_DTYPES = (torch.uint8,)
#: The dtypes of packed codes, which hamming_distance and hamming_topk compare bit by bit.
CODE_DTYPES = (torch.uint8, torch.int8)
#: The field widths pack and unpack take, in bits (8 // bits fields a byte).
PACK_BITS = (1, 2, 4)
#: The orders of the fields in a byte: "big" puts the first in the most significant bits.
BITORDERS = ("big", "little")
#: The shift directions, the one place the Python side spells them: the twins, the typed
#: API's TorchScript bodies, the declaration's check (so the fake kernels'), the Inductor
#: lowerings and the ONNX translations take them, or is_left, from here. The op takes each
#: in upper or lower case, DIRECTIONS. The C++ side spells its own: csrc/ops/checks.cpp's
#: parse_shift_op, which tests/test_errors.py holds to this list, and the binding's Paddle
#: functions, whose answers tests/test_binding.py compares with the twins'.
LEFT, RIGHT = "LEFT", "RIGHT"
DIRECTIONS = (LEFT, RIGHT, LEFT.lower(), RIGHT.lower())

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

#: A unary op's schemas, after its name: one tensor in, and an out= overload.
UNARY_SCHEMAS = ("(Tensor x) -> Tensor", ".out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")


def _unary_ops() -> tuple:
    """The ops whose overloads are exactly UNARY_SCHEMAS, by name (``signbit``): their typed
    function is ``f(x, out=None)``, and torchops/_twins.py makes their twins from this list."""
    schemas = {}
    for overload in OVERLOADS:
        schemas.setdefault(overload._schema.name, set()).add(str(overload._schema))
    return tuple(name.removeprefix("torchops::") for name, found in schemas.items()
                 if found == {name + schema for schema in UNARY_SCHEMAS})


#: The unary ops (signbit, bitwise_count, ...), read from their registered schemas.
UNARY_OPS = _unary_ops()


def dtype_name(dtype: torch.dtype) -> str:
    """A dtype as Python spells it, ``int8`` for ``torch.int8``."""
    return str(dtype).removeprefix("torch.")


#: The most bytes, and so elements, a tensor can hold (its sizes and strides are int64s).
_MAX_BYTES = 2**63 - 1


def check_result_size(op: str, source: str, shape, dtype: torch.dtype) -> None:
    """csrc/ops/checks.cpp's check_result_size: a result of `shape` and `dtype` that no tensor
    can hold is refused before any allocation, naming what set its size (`source`). Symbolic
    sizes are left to the allocation: no guard is added for them."""
    shape = tuple(shape)
    if 0 in shape or not all(isinstance(size, int) for size in shape):
        return
    torch._check_value(math.prod(shape) * dtype.itemsize <= _MAX_BYTES,
                       lambda: f"{op}: {source}: a result of shape {list(shape)} ({dtype_name(dtype)}) would exceed "
                               "the 2**63 - 1 bytes a tensor can hold")


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
#: "int8, ..., uint64, bool", as the messages list them.
BITWISE_COUNT_DTYPE_NAMES = ", ".join(dtype_name(d) for d in BITWISE_COUNT_DTYPES)
#: "'LEFT', 'RIGHT', 'left', 'right'", as the messages list them.
DIRECTION_NAMES = ", ".join(repr(d) for d in DIRECTIONS)
#: "int8, ..., uint64, bool", as the messages list them.
PACK_DTYPE_NAMES = ", ".join(dtype_name(d) for d in PACK_DTYPES)


# ----------------------------------------------------------------------------------------
# The declarations: each op's own checks and result dtype, from which torchops/_fake.py,
# _vmap.py and _sharding.py make every overload's fake kernel, batching rule and sharding
# rule (the ops are pointwise: what differs between them is only this).


@dataclass(frozen=True)
class Pointwise:
    """A pointwise op, as the Python integrations need it.

    ``check(op, *args)`` runs the op's own checks on the arguments of any of its overloads
    (the schema's, ``out`` aside), in the order and words of its C++ entries (csrc/ops/), and
    returns the result dtype. The device check before them, the broadcast shape after them
    and the checks of ``out`` or of an in-place x are the same for every op (torchops/_fake.py).
    ``promotes``: the result dtype is torch.result_type of the tensor operands, which sees
    whether an operand is 0-d (torch.vmap must then see the per-example ranks).
    ``dtypes``: the dtypes its tensor operands take. ``noun``: what an in-place call is
    called in its messages ("an in-place shift cannot change x's dtype").
    """

    check: Callable[..., torch.dtype]
    dtypes: tuple
    promotes: bool = False
    noun: str = ""


def op_name(overload) -> str:
    """The op as an overload's messages name it: ``torchops.bitshift_`` for ``bitshift_.Scalar``."""
    return "torchops." + overload._schema.name.removeprefix("torchops::")


def declaration_of(overload) -> Pointwise:
    """The declaration of the op an overload belongs to (``bitshift_.Scalar``: bitshift's)."""
    name = overload._schema.name.removeprefix("torchops::").removesuffix("_")
    if name not in DECLARATIONS:
        raise KeyError(f"{overload._schema.name.replace('::', '.')} is registered and has no declaration: add it "
                       "to torchops/_contract.py's DECLARATIONS")
    return DECLARATIONS[name]


def _check_dtype(op: str, arg: str, dtype: torch.dtype, accepted: tuple, what: str) -> None:
    torch._check_type(dtype in accepted, lambda: f"{op}: {arg} must be {what}, got {dtype_name(dtype)}")


def _shift_result_type(op: str, x: Tensor, y: Tensor, python_int_counts: bool) -> torch.dtype:
    """torch.result_type(x, y), or the C++ entries' error (csrc/ops/checks.h's
    shift_result_type), whose advice names a Python-int count only for an op that takes one."""
    _check_dtype(op, "x", x.dtype, SHIFT_DTYPES, f"an integer tensor ({SHIFT_DTYPE_NAMES})")
    _check_dtype(op, "y", y.dtype, SHIFT_DTYPES, f"an integer tensor ({SHIFT_DTYPE_NAMES})")
    try:
        return torch.result_type(x, y)
    except RuntimeError:
        raise TypeError(
            f"{op}: x ({dtype_name(x.dtype)}) and y ({dtype_name(y.dtype)}) have no common dtype (PyTorch promotes "
            f"uint16, uint32 and uint64 only with their own dtype); shift by y.to(torch.{dtype_name(x.dtype)})"
            + (", or by a Python int" if python_int_counts else "")
        ) from None


def _scalar_dtype_name(y) -> str:
    """The dtype c10::Scalar reports for a Python number, as the C++ message names it."""
    if isinstance(y, (bool, torch.SymBool)):
        return "bool"
    if isinstance(y, (float, torch.SymFloat)):
        return "float64"
    if isinstance(y, complex):
        return "complex128"
    return type(y).__name__


def is_left(op: str, direction: str) -> bool:
    """Whether `direction` asks for a left shift (False: a right one); one that is not in
    DIRECTIONS is the op's ValueError, in its C++ entries' words."""
    torch._check_value(direction in DIRECTIONS,
                       lambda: f"{op}: direction must be one of {DIRECTION_NAMES}, got '{direction}'")
    return direction.upper() == LEFT


def _check_bitshift(op: str, x: Tensor, y, direction: str, arithmetic: bool = True) -> torch.dtype:
    if isinstance(y, Tensor):
        dtype = _shift_result_type(op, x, y, python_int_counts=True)
    else:
        _check_dtype(op, "x", x.dtype, SHIFT_DTYPES, f"an integer tensor ({SHIFT_DTYPE_NAMES})")
        dtype = x.dtype
    is_left(op, direction)
    if not isinstance(y, Tensor):
        torch._check_type(isinstance(y, (int, torch.SymInt)) and not isinstance(y, bool),
                          lambda: f"{op}: y must be an integer, got a {_scalar_dtype_name(y)} scalar")
    return dtype


def _check_signbit(op: str, x: Tensor) -> torch.dtype:
    _check_dtype(op, "x", x.dtype, SIGNBIT_DTYPES, f"a {SIGNBIT_FLOAT_DTYPE_NAMES}, integer or bool tensor")
    return torch.bool


def _check_bitwise_count(op: str, x: Tensor) -> torch.dtype:
    _check_dtype(op, "x", x.dtype, BITWISE_COUNT_DTYPES, f"an integer or bool tensor ({BITWISE_COUNT_DTYPE_NAMES})")
    return torch.uint8


@dataclass(frozen=True)
class Packing:
    """An op that packs fields into bytes along one dim, or unpacks them (packbits, pack,
    unpackbits, unpack): not pointwise, its result's size at that dim differs from x's.

    ``check(op, x, *args)`` takes the arguments of either overload (the schema's, ``out``
    aside), runs the op's checks in its C++ entries' order and words (csrc/ops/pack.cpp) and
    returns a ``PackingCall``: the result's dtype and shape, and the dim packed. ``dtypes``:
    the dtypes x takes.
    """

    check: Callable[..., "PackingCall"]
    dtypes: tuple


@dataclass(frozen=True)
class PackingCall:
    """A checked call of a packing op: its result's dtype and shape, the dim of x it packs or
    unpacks (None: x flattened first; a 0-d x is one element) and that dim's size in the result."""

    dtype: torch.dtype
    shape: tuple
    dim: int | None
    size: object  # an int, or a SymInt under dynamic shapes


def _check_bits(op: str, bits: int) -> int:
    torch._check_value(bits in PACK_BITS, lambda: f"{op}: bits must be 1, 2 or 4, got {bits}")
    return 8 // bits


def _check_bitorder(op: str, bitorder: str) -> None:
    torch._check_value(bitorder in BITORDERS, lambda: f"{op}: bitorder must be 'big' or 'little', got '{bitorder}'")


def _packed_dim(op: str, x: Tensor, dim: int | None) -> int | None:
    """dim made non-negative, None kept; PyTorch's range rule (a 0-d x takes -1 and 0)."""
    if dim is None:
        return None
    rank = max(x.dim(), 1)
    if not -rank <= dim < rank:
        raise IndexError(f"{op}: dim {dim} is out of range for a {x.dim()}-d x "
                         f"(expected a dim in [{-rank}, {rank - 1}], or None)")
    return dim % rank


def _length_along(x: Tensor, dim: int | None):
    """The elements along the packed dim: all of x for None or a 0-d x."""
    return x.numel() if dim is None or x.dim() == 0 else x.shape[dim]


def _result_shape(x: Tensor, dim: int | None, size) -> tuple:
    if dim is None or x.dim() == 0:
        return (size,)
    return tuple(x.shape[:dim]) + (size,) + tuple(x.shape[dim + 1:])


def _check_pack_x(op: str, x: Tensor) -> None:
    torch._check_type(
        x.dtype in PACK_DTYPES,
        lambda: f"{op}: x must be an integer or bool tensor ({PACK_DTYPE_NAMES}), got {dtype_name(x.dtype)}; NumPy's "
                "packbits refuses floats too: pack x != 0, or a float's bits through x.view(torch.int32)")


def _check_unpack_x(op: str, x: Tensor) -> None:
    torch._check_type(x.dtype == torch.uint8,
                      lambda: f"{op}: x must be a uint8 tensor of packed bytes, got {dtype_name(x.dtype)}")


def _pack_call(op: str, x: Tensor, bits: int, dim: int | None, bitorder: str) -> PackingCall:
    per_byte = _check_bits(op, bits)
    _check_bitorder(op, bitorder)
    dim = _packed_dim(op, x, dim)
    size = (_length_along(x, dim) + per_byte - 1) // per_byte
    return PackingCall(torch.uint8, _result_shape(x, dim, size), dim, size)


def _unpack_call(op: str, x: Tensor, bits: int, dim: int | None, count: int | None, bitorder: str, signed: bool,
                 unit: str) -> PackingCall:
    per_byte = _check_bits(op, bits)
    _check_bitorder(op, bitorder)
    dim = _packed_dim(op, x, dim)
    nbytes = _length_along(x, dim)
    available = nbytes * per_byte
    where = "of the flattened x" if dim is None else f"along dim {dim}"
    if isinstance(available, int):  # more than int64 only for a view of a few bytes expanded along the dim
        torch._check_value(available <= _MAX_BYTES,
                           lambda: f"{op}: x's {nbytes} bytes {where} hold more than 2**63 - 1 {unit}")
    if count is None:
        size = available
    elif count >= 0:
        size = count
    else:
        torch._check_value(available + count >= 0,
                           lambda: f"{op}: count {count} drops more than the {available} {unit} {where}")
        size = available + count
    call = PackingCall(torch.int8 if signed else torch.uint8, _result_shape(x, dim, size), dim, size)
    check_result_size(op, f"x of shape {list(x.shape)}" if count is None else f"count {count}", call.shape, call.dtype)
    return call


def _check_packbits(op: str, x: Tensor, dim: int | None = -1, bitorder: str = "big") -> PackingCall:
    _check_pack_x(op, x)
    return _pack_call(op, x, 1, dim, bitorder)


def _check_pack(op: str, x: Tensor, bits: int, dim: int | None = -1, bitorder: str = "big") -> PackingCall:
    _check_pack_x(op, x)
    return _pack_call(op, x, bits, dim, bitorder)


def _check_unpackbits(op: str, x: Tensor, dim: int | None = -1, count: int | None = None,
                      bitorder: str = "big") -> PackingCall:
    _check_unpack_x(op, x)
    return _unpack_call(op, x, 1, dim, count, bitorder, False, "bits")


def _check_unpack(op: str, x: Tensor, bits: int, dim: int | None = -1, count: int | None = None,
                  bitorder: str = "big", signed: bool = False) -> PackingCall:
    _check_unpack_x(op, x)
    return _unpack_call(op, x, bits, dim, count, bitorder, signed, "fields")


@dataclass(frozen=True)
class Search:
    """An op that compares codes (hamming_distance, hamming_topk): two tensors of packed codes,
    one a row, reduced over their bytes; not pointwise.

    ``check(op, a, b, *args)`` takes the arguments of either overload (the schema's, the outs
    aside), runs the op's checks in its C++ entries' order and words (csrc/ops/hamming.cpp)
    and returns a ``SearchCall``. ``dtypes``: the dtypes codes take. ``names``: its two code
    operands' names, ``outs``: its results' names, as its out= overload calls them.
    """

    check: Callable[..., "SearchCall"]
    dtypes: tuple
    names: tuple
    outs: tuple


@dataclass(frozen=True)
class SearchCall:
    """A checked call of a search op: each result's dtype and shape (SymInts under dynamic
    shapes), in the schema's order; ``batch``: hamming_distance's broadcast batch shape."""

    results: tuple  # ((dtype, shape), ...)
    batch: tuple = ()


def _check_codes(op: str, arg: str, codes: Tensor) -> None:
    torch._check_type(codes is not None, lambda: f"{op}: {arg} must be a tensor, got None")
    torch._check_type(
        codes.dtype in CODE_DTYPES,
        lambda: f"{op}: {arg} must be a uint8 or int8 tensor of packed codes, got {dtype_name(codes.dtype)}; pack "
                "float embeddings' signs with torchops.packbits(x > 0), and view codes held in wider integers as "
                "bytes with x.view(torch.uint8)")


def _check_code_dims(op: str, arg: str, codes: Tensor, shape: str, exact: bool) -> None:
    ok = codes.dim() == 2 if exact else codes.dim() >= 2
    torch._check_value(ok, lambda: f"{op}: {arg} must have {'2 dims' if exact else 'at least 2 dims'} {shape}, "
                                   f"one code a row, got a {codes.dim()}-d tensor")


def _check_code_bytes(op: str, first: str, a: Tensor, second: str, b: Tensor) -> None:
    torch._check_value(a.shape[-1] == b.shape[-1],
                       lambda: f"{op}: {first} and {second} must hold codes of the same size, got {a.shape[-1]} "
                               f"bytes ({first}) and {b.shape[-1]} bytes ({second})")


def _check_hamming_distance(op: str, x1: Tensor, x2: Tensor) -> SearchCall:
    _check_codes(op, "x1", x1)
    _check_codes(op, "x2", x2)
    _check_code_dims(op, "x1", x1, "(..., M, B)", False)
    _check_code_dims(op, "x2", x2, "(..., N, B)", False)
    _check_code_bytes(op, "x1", x1, "x2", x2)
    batch1, batch2 = tuple(x1.shape[:-2]), tuple(x2.shape[:-2])
    try:
        batch = tuple(torch.broadcast_shapes(batch1, batch2))
    except RuntimeError:
        raise ValueError(f"{op}: x1's batch dims {list(batch1)} and x2's {list(batch2)} do not broadcast") from None
    shape = batch + (x1.shape[-2], x2.shape[-2])
    check_result_size(op, f"x1 of shape {list(x1.shape)} and x2 of shape {list(x2.shape)}", shape, torch.int32)
    return SearchCall(((torch.int32, shape),), batch)


def _check_hamming_topk(op: str, queries: Tensor, database: Tensor, k: int) -> SearchCall:
    _check_codes(op, "queries", queries)
    _check_codes(op, "database", database)
    _check_code_dims(op, "queries", queries, "(Q, B)", True)
    _check_code_dims(op, "database", database, "(N, B)", True)
    _check_code_bytes(op, "queries", queries, "database", database)
    n = database.shape[0]
    if not (0 <= k and k <= n):
        raise IndexError(f"{op}: k {k} is out of range for a database of {n} codes (expected 0 <= k <= {n}, "
                         "as torch.topk)")
    shape = (queries.shape[0], k)
    check_result_size(op, f"k {k}", shape, torch.int64)  # indices, the wider
    return SearchCall(((torch.int32, shape), (torch.int64, shape)))


#: Every op's declaration, by its name (an in-place op, ``bitshift_``, is its op's).
DECLARATIONS = {
    "bitshift": Pointwise(_check_bitshift, SHIFT_DTYPES, promotes=True, noun="shift"),
    "signbit": Pointwise(_check_signbit, SIGNBIT_DTYPES),
    "bitwise_count": Pointwise(_check_bitwise_count, BITWISE_COUNT_DTYPES),
    "packbits": Packing(_check_packbits, PACK_DTYPES),
    "unpackbits": Packing(_check_unpackbits, UNPACK_DTYPES),
    "pack": Packing(_check_pack, PACK_DTYPES),
    "unpack": Packing(_check_unpack, UNPACK_DTYPES),
    "hamming_distance": Search(_check_hamming_distance, CODE_DTYPES, ("x1", "x2"), ("out",)),
    "hamming_topk": Search(_check_hamming_topk, CODE_DTYPES, ("queries", "database"), ("values", "indices")),
}
