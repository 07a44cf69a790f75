"""Inductor lowerings: torch.compile generates every torchops op inline.

Without them Inductor calls every torchops op as an opaque kernel: the op's output goes to
memory and the pointwise code on either side runs as separate loops. Here each overload
that reaches Inductor is written in Inductor's pointwise IR (``ops.*``), so it fuses with
its neighbours like a builtin. The packing ops change a dim's size, and are pointwise over
their result: each packed byte loads the elements of its group, each unpacked field loads its
byte, so ``packbits(x > 0)`` never writes the bools and an unpack's fields go straight into
the code that reads them. hamming_distance is a reduction over the codes' bytes, the bit
count of each byte's xor computed inside the reduction's loop (no (..., M, N, B) tensor).
hamming_topk alone calls its C++ kernel from the compiled graph (``KERNEL_CALLS``): its
lowering would need the (Q, N) distances the op never makes. They follow docs/semantics.md
exactly; only Inductor uses them: eager calls keep the C++ kernels, torch.export and
TorchScript keep the ``torchops::`` ops in their graphs, and the ONNX export has translations
of its own (``torchops/onnx.py``).

Inductor has no public way to add a lowering: this module is the one place that touches
``torch._inductor.lowering``, and only on the torch releases its tests pass on
(``WRITTEN_FOR``, the releases of requirements-torch.txt). With
``TORCHOPS_INDUCTOR_LOWERINGS=0`` the lowerings registered call the C++ kernels instead of
fusing (``register``); on another release nothing is registered, and Inductor calls the
kernels its own way.

No generated line may rest on undefined behaviour, and the vectorized loop and its scalar
tail must agree: every count is brought into range (``0 <= count < n``) before it reaches a
shift, so no result depends on how Inductor's own shifts treat other counts (its scalar
C++ shifts an unsigned value by the full width then, which C++ leaves undefined for 32- and
64-bit types). Logical right shifts of signed values mask the arithmetic shift instead of
reinterpreting the bits as unsigned, because Inductor's CPU backend vectorizes int8, int32
and int64 but not uint16, uint32 or uint64.

uint16, uint32 and uint64 shifts go the other way, onto the signed dtype of their width
(``COMPUTED_AS``): the operands are bit-cast views (Inductor's ``to_dtype_bitcast``), the
result a bit-cast view back, so the shift fuses with the code on either side. A range check
``0 <= count < n`` on a count's signed bits is the unsigned ``count < n``. The loops stay
scalar: a bit-cast view of a buffer still loads the buffer's dtype (then a ``bit_cast``), and
Inductor vectorizes no loop that loads or stores those dtypes. Aliasing the buffers as signed
instead (an ``aten.view.dtype`` call in the graph) vectorizes a lone shift, but splits a chain
of pointwise code at every shift.
"""
from __future__ import annotations

import functools
import os

import torch

from torchops import _contract
from torchops._build_info import SUPPORTED_TORCH_RELEASES
from torchops._library import release

#: The torch releases (major.minor) whose Inductor internals this module was written and
#: tested against: those torchops supports (setup.py records them at build time).
WRITTEN_FOR = SUPPORTED_TORCH_RELEASES

_ENV_SWITCH = "TORCHOPS_INDUCTOR_LOWERINGS"

_op = torch.ops.torchops
#: Every overload can reach Inductor. In-place and out= calls arrive as themselves:
#: Inductor turns the functionalized graph back into mutations before lowering it.
OVERLOADS = _contract.OVERLOADS

#: The dtype a shift of each result dtype is computed in, when not that dtype itself.
#: Inductor's CPU code cannot select between uint16, uint32 or uint64 values (its dtype
#: propagation refuses to promote them with the bool of a select: "Promotion for uint16,
#: uint32, uint64 types is not supported") and vectorizes none of them; the signed dtype of
#: the same width holds the same bits, and once a count is in range its shifts give the
#: unsigned ones (a logical right shift as the masked arithmetic one).
COMPUTED_AS = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}

#: The ops whose lowerings always call the C++ kernel (from the compiled graph, through the
#: out= overload): hamming_topk's result is a selection among N distances per query, which
#: Inductor's IR could express only through the (Q, N) matrix of them that the op never makes
#: (docs/semantics.md section 16), and then through a sort whose order among equal keys the
#: contract fixes and Inductor's topk does not.
KERNEL_CALL_OPS = ("hamming_topk",)
#: Every overload of those ops: the C++ calls the generated code of a fusing graph may hold.
KERNEL_CALLS = tuple(o for o in OVERLOADS if o._schema.name.removeprefix("torchops::") in KERNEL_CALL_OPS)

#: Each out= overload's outs, in its schema's order (``out``; hamming_topk's values, indices).
_OUT_NAMES = {o: tuple(a.name for a in o._schema.arguments if a.is_out) for o in OVERLOADS if torch.Tag.out in o.tags}

_CALL_KERNEL = object()  # what a lowering returns to ask for the C++ kernel
_registered: dict = {}  # "fuse": which lowerings are in Inductor's table, "table": them


def enabled() -> bool:
    """Whether compiled graphs get the fusing lowerings (once Inductor has loaded)."""
    return os.environ.get(_ENV_SWITCH, "1") != "0" and release(torch.__version__) in WRITTEN_FOR


def registered() -> bool:
    """Whether the fusing lowerings are in Inductor's table now."""
    return _registered.get("fuse", False)


def register(fuse: bool | None = None) -> None:
    """Puts the lowerings into Inductor's table, on the releases this module was written for:
    the fusing ones (``fuse``; by default when ``enabled()``), or else ones that call the C++
    kernels. The latter stand in for Inductor's own handling of a custom op, which calls a
    functional overload through its out= overload, and from torch 2.13 to 2.15 passes an
    argument left at its default twice there (``bitshift.Scalar_out(x, 4, 'LEFT', True,
    arithmetic=True, out=buf0)``: "expected at most 5 argument(s) but received 6")."""
    if release(torch.__version__) not in WRITTEN_FOR:
        return
    fuse = enabled() if fuse is None else fuse
    if _registered.get("fuse") is fuse:
        return
    from torch._inductor import config, lowering

    _take_out()
    lowerings = _lowerings(fuse)
    lowering.lowerings.update(lowerings)
    _registered.update(fuse=fuse, table=lowerings)
    passes = config.post_grad_custom_post_pass
    passes = list(passes) if isinstance(passes, (list, tuple)) else [] if passes is None else [passes]
    config.post_grad_custom_post_pass = passes + [_cache_key(fuse)]


def _take_out() -> None:
    """Takes the lowerings out of Inductor's table, and their pass out of its config."""
    from torch._inductor import config, lowering

    for overload in _registered.get("table", ()):
        lowering.lowerings.pop(overload, None)
    passes = config.post_grad_custom_post_pass
    if "fuse" in _registered and isinstance(passes, list):
        config.post_grad_custom_post_pass = [p for p in passes if p is not _cache_key(_registered["fuse"])] or None
    _registered.clear()


@functools.cache
def _cache_key(fuse: bool):
    """A pass that changes nothing and puts the lowerings into Inductor's cache keys.

    Inductor caches compiled graphs on disk under a key made of the graph, its config and
    torch's own sources; the lowerings in its table are not part of it. Without this, a
    graph compiled before the lowerings were registered (or with an older torchops) would
    be served from the cache as it was then. A custom pass's ``uuid()`` is the key's
    public extension point (torch._inductor.custom_graph_pass).
    """
    from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

    class LoweringsInCacheKey(CustomGraphPass):
        def __call__(self, graph) -> None:
            pass

        def uuid(self) -> bytes:
            return get_hash_for_files((__file__,)) + (b"fused" if fuse else b"kernel calls")

    return LoweringsInCacheKey()


def _lowerings(fuse: bool) -> dict:
    import sympy
    from torch._inductor import config, lowering
    from torch._inductor.virtualized import V, ops

    # Everything used from Inductor, looked up now: a torch that lacks one fails here, in
    # registration (a warning, and the C++ kernels), not in the middle of a compilation.
    make_pointwise, broadcast_tensors = lowering.make_pointwise, lowering.broadcast_tensors
    mutate_to, fallback_handler, empty_strided = lowering.mutate_to, lowering.fallback_handler, lowering.empty_strided
    bitcast, view = lowering.to_dtype_bitcast, lowering.view
    broadcast_symbolic_shapes = lowering.broadcast_symbolic_shapes
    from torch._inductor.cpu_vec_isa import pick_vec_isa
    from torch._inductor.ir import Pointwise, Reduction
    from torch._inductor.utils import convert_shape_to_inductor, sympy_product
    from torch.utils._sympy.functions import CeilDiv, FloorDiv, ModularIndexing

    table = {}
    out_overload = _contract.OUT_FORM  # into which a functional overload's kernel call writes (below)

    def call_kernel(overload, args, kwargs):
        """The C++ kernel of `overload`, called from the compiled graph. A functional overload
        writes, through its out= overload, into buffers of the layouts its fake kernel gives
        (one per result: hamming_topk's values and indices), as Inductor does itself for custom
        ops with an out= overload from torch 2.14; torch 2.13's Inductor builds that layout
        from the symbolic sizes as they are and fails under dynamic=True. A writing overload's
        call returns what it wrote, but Inductor would take that for a new buffer (and could
        reuse the written one's memory while it holds the result): the written arguments
        themselves are the result, their writes recorded."""
        if overload in out_overload:
            writing = out_overload[overload]
            example = V.graph.current_node.meta["val"]
            examples = tuple(example) if isinstance(example, (tuple, list)) else (example,)
            outs = [empty_strided(convert_shape_to_inductor(e.size()), convert_shape_to_inductor(e.stride()),
                                  dtype=e.dtype, device=e.device) for e in examples]
            outs_by_name = dict(zip(_OUT_NAMES[writing], outs))
            fallback_handler(writing, add_to_fallback_set=False)(*args, **kwargs, **outs_by_name)
            return tuple(outs) if isinstance(example, (tuple, list)) else outs[0]
        fallback_handler(overload, add_to_fallback_set=False)(*args, **kwargs)
        if torch.Tag.out not in overload.tags:
            return args[0]
        written = tuple(kwargs[name] for name in _OUT_NAMES[overload])
        return written if len(written) > 1 else written[0]

    def lowers(overload):
        """Registers the decorated lowering for `overload`; it returns _CALL_KERNEL to ask for
        the C++ kernel instead (what Inductor cannot express)."""

        def decorate(lower):
            def lower_or_call_kernel(*args, **kwargs):
                result = lower(*args, **kwargs) if fuse else _CALL_KERNEL
                return call_kernel(overload, args, kwargs) if result is _CALL_KERNEL else result

            table[overload] = lower_or_call_kernel
            return lower

        return decorate

    def shift_values(x, count, in_range, dtype: torch.dtype, left: bool, arithmetic: bool):
        """The shift of docs/semantics.md section 2 on values of `dtype`, by a count known at
        run time; `in_range` is the bool value `0 <= count < n`."""
        bits = torch.iinfo(dtype).bits
        zero = ops.constant(0, dtype)
        if not left and arithmetic and dtype.is_signed:
            # Out of range, the sign fill alone: a shift by n - 1.
            return ops.bitwise_right_shift(x, ops.where(in_range, count, ops.constant(bits - 1, dtype)))
        count = ops.where(in_range, count, zero)
        if left:
            shifted = ops.bitwise_left_shift(x, count)
        elif dtype.is_signed:  # logical: clear the `count` copies of the sign bit that entered
            sign_bit = ops.constant(-(1 << (bits - 1)), dtype)
            filled = ops.bitwise_left_shift(ops.bitwise_right_shift(sign_bit, count), ops.constant(1, dtype))
            shifted = ops.bitwise_and(ops.bitwise_right_shift(x, count), ops.bitwise_not(filled))
        else:
            shifted = ops.bitwise_right_shift(x, count)
        return ops.where(in_range, shifted, zero)

    def shift_by_constant(x, count: int, dtype: torch.dtype, left: bool, arithmetic: bool):
        """The same by a count known while compiling: settled here, so the generated code is
        what the equivalent chain of builtins gives (a logical shift: the arithmetic one and a mask)."""
        bits = torch.iinfo(dtype).bits
        if not left and arithmetic and dtype.is_signed:
            return ops.bitwise_right_shift(x, ops.constant(count if 0 <= count < bits else bits - 1, dtype))
        if not 0 <= count < bits:
            return ops.constant(0, dtype)
        if count == 0:
            return x
        if left:
            return ops.bitwise_left_shift(x, ops.constant(count, dtype))
        shifted = ops.bitwise_right_shift(x, ops.constant(count, dtype))
        if dtype.is_signed:  # logical: keep the low n - count bits
            shifted = ops.bitwise_and(shifted, ops.constant((1 << (bits - count)) - 1, dtype))
        return shifted

    def result_dtype(x, y) -> torch.dtype:
        return _contract.result_dtype(x.get_dtype(), len(x.get_size()), y.get_dtype(), len(y.get_size()))

    def as_computed(operands, dtype: torch.dtype) -> list:
        """The operands of `dtype` as bit-cast views of COMPUTED_AS's dtype for it (the others
        are converted inside the shift, section 4.1)."""
        compute = COMPUTED_AS.get(dtype, dtype)
        return [bitcast(operand, compute) if operand.get_dtype() == dtype else operand for operand in operands]

    def tensor_count_shift(x, y, direction, arithmetic):
        dtype = result_dtype(x, y)
        compute = COMPUTED_AS.get(dtype, dtype)
        bits = torch.iinfo(dtype).bits
        # An unsigned dtype's right shift is the logical one (section 2).
        left, arithmetic = _contract.is_left(_contract.BITSHIFT, direction), arithmetic and dtype.is_signed

        def fn(x_value, y_value):
            # Both operands are converted to the result dtype first (section 4.1): to the
            # low n bits, which are the same in the dtype computed in.
            x_value = ops.to_dtype(x_value, compute)
            count = ops.to_dtype(y_value, compute)
            in_range = ops.lt(count, ops.constant(bits, compute))
            if compute.is_signed:  # an unsigned count's bits >= n read as signed are < 0 or >= n
                in_range = ops.and_(in_range, ops.ge(count, ops.constant(0, compute)))
            return shift_values(x_value, count, in_range, compute, left, arithmetic)

        shifted = make_pointwise(fn, override_return_dtype=compute)(*broadcast_tensors(*as_computed((x, y), dtype)))
        return bitcast(shifted, dtype)

    def int_count_shift(x, y, direction, arithmetic):
        dtype = x.get_dtype()
        compute = COMPUTED_AS.get(dtype, dtype)
        bits = torch.iinfo(dtype).bits
        left, arithmetic = _contract.is_left(_contract.BITSHIFT, direction), arithmetic and dtype.is_signed

        def fn(x_value):
            # A Python int count is taken by its value (section 4.2).
            if isinstance(y, int):
                return shift_by_constant(x_value, y, compute, left, arithmetic)
            # A symbolic int (dynamic=True): its int64 value is compared at run time.
            value = ops.index_expr(y, torch.int64)
            in_range = ops.and_(
                ops.ge(value, ops.constant(0, torch.int64)), ops.lt(value, ops.constant(bits, torch.int64))
            )
            return shift_values(x_value, ops.to_dtype(value, compute), in_range, compute, left, arithmetic)

        return bitcast(make_pointwise(fn, override_return_dtype=compute)(*as_computed((x,), dtype)), dtype)

    def signbit_of(x):
        dtype = x.get_dtype()
        if dtype.is_floating_point:
            # The top bit of the stored value, read as a same-width integer's sign: Inductor
            # vectorizes this; its ops.signbit (std::signbit) runs lane by lane. float16 and
            # bfloat16 are widened to float32 first, as Inductor computes them anyway; the
            # widening keeps the sign bit of every value, NaNs included.
            compute = torch.float64 if dtype == torch.float64 else torch.float32
            as_int = torch.int64 if dtype == torch.float64 else torch.int32

            def fn(value):
                bits = ops.to_dtype_bitcast(ops.to_dtype(value, compute), as_int, compute)
                return ops.lt(bits, ops.constant(0, as_int))
        elif dtype.is_signed:  # bool is not
            def fn(value):
                return ops.lt(value, ops.constant(0, dtype))
        else:
            def fn(value):
                return ops.constant(False, torch.bool)
        return make_pointwise(fn, override_return_dtype=torch.bool)(x)

    def count_nonnegative(value, dtype: torch.dtype, bits: int):
        """The 1 bits of `value`, a value of `dtype` known to be in [0, 2**bits) and in [0, MAX]
        (bits is at most the width of dtype, a multiple of 8): the classic SWAR count, 2-, 4-,
        8-bit fields, then the bytes summed by shifts (a multiply could overflow), each mask
        without the sign bit, so that no partial sum reaches it (signed overflow is undefined in
        the generated C++). Shared by bitwise_count (bits: the width) and hamming_distance
        (bits=8: the xor of two bytes, on int32)."""
        largest = torch.iinfo(dtype).max

        def constant(c):
            return ops.constant(c, dtype)

        for step, pattern in ((1, 0x55), (2, 0x33)):
            mask = constant(int(f"{pattern:02x}" * (bits // 8), 16) & largest)
            value = ops.add(ops.bitwise_and(value, mask),
                            ops.bitwise_and(ops.bitwise_right_shift(value, constant(step)), mask))
        value = ops.add(value, ops.bitwise_right_shift(value, constant(4)))
        value = ops.bitwise_and(value, constant(int("0f" * (bits // 8), 16)))
        if bits == 8:  # one byte: its count, at most 8, is the value
            return value
        for step in (8, 16, 32):
            if step < bits:
                value = ops.add(value, ops.bitwise_right_shift(value, constant(step)))
        return ops.bitwise_and(value, constant(0x7F))

    def bitwise_count_of(x):
        """The 1 bits of |x| (docs/semantics.md section 7), as uint8, on the signed dtype of x's
        width (unsigned operands are bit-cast views, as the shifts'). No step may overflow a
        signed value (undefined in the generated C++): the bit count runs on values in
        [0, MAX] only, where each partial sum stays below the sign bit. A signed x is brought
        there by |x|, the most negative value (whose |x| is MAX + 1, one bit) set aside first; an
        unsigned one by clearing its top bit, which is then counted apart."""
        dtype = x.get_dtype()
        if dtype == torch.bool:
            return make_pointwise(lambda value: ops.to_dtype(value, torch.uint8), override_return_dtype=torch.uint8)(x)
        bits = torch.iinfo(dtype).bits
        compute = {8: torch.int8, 16: torch.int16, 32: torch.int32, 64: torch.int64}[bits]
        largest = (1 << (bits - 1)) - 1

        def constant(value):
            return ops.constant(value, compute)

        def fn(value):
            if dtype.is_signed:
                most_negative = ops.eq(value, constant(-largest - 1))
                value = ops.where(most_negative, constant(0), value)
                magnitude = ops.where(ops.lt(value, constant(0)), ops.neg(value), value)
                count = ops.where(most_negative, constant(1), count_nonnegative(magnitude, compute, bits))
            else:
                top = ops.to_dtype(ops.lt(value, constant(0)), compute)
                count = ops.add(count_nonnegative(ops.bitwise_and(value, constant(largest)), compute, bits), top)
            return ops.to_dtype(count, torch.uint8)

        operand = bitcast(x, compute) if dtype != compute else x
        return make_pointwise(fn, override_return_dtype=torch.uint8)(operand)

    def write_into(target, result):
        """`result` stored into `target` (in place, out=); the C++ kernel for an out= that must
        be resized (Dynamo refuses those today: "Shape mismatch with out= tensor variant";
        other producers of Inductor graphs may not)."""
        if not V.graph.sizevars.statically_known_list_equals(target.get_size(), result.get_size()):
            return _CALL_KERNEL
        return mutate_to(target, result)  # the writing overloads return what they wrote

    @lowers(_op.bitshift.default)
    def bitshift(x, y, direction, arithmetic=True):
        return tensor_count_shift(x, y, direction, arithmetic)

    @lowers(_op.bitshift.Scalar)
    def bitshift_scalar(x, y, direction, arithmetic=True):
        return int_count_shift(x, y, direction, arithmetic)

    @lowers(_op.bitshift.out)
    def bitshift_out(x, y, direction, arithmetic=True, *, out):
        return write_into(out, tensor_count_shift(x, y, direction, arithmetic))

    @lowers(_op.bitshift.Scalar_out)
    def bitshift_scalar_out(x, y, direction, arithmetic=True, *, out):
        return write_into(out, int_count_shift(x, y, direction, arithmetic))

    @lowers(_op.bitshift_.default)
    def bitshift_inplace(x, y, direction, arithmetic=True):
        return write_into(x, tensor_count_shift(x, y, direction, arithmetic))

    @lowers(_op.bitshift_.Scalar)
    def bitshift_scalar_inplace(x, y, direction, arithmetic=True):
        return write_into(x, int_count_shift(x, y, direction, arithmetic))

    @lowers(_op.signbit.default)
    def signbit(x):
        return signbit_of(x)

    @lowers(_op.signbit.out)
    def signbit_out(x, *, out):
        return write_into(out, signbit_of(x))

    @lowers(_op.bitwise_count.default)
    def bitwise_count(x):
        return bitwise_count_of(x)

    @lowers(_op.bitwise_count.out)
    def bitwise_count_out(x, *, out):
        return write_into(out, bitwise_count_of(x))

    def constant_int(value) -> int:
        """An int argument (bits, dim) as a Python int; a symbolic one (dynamic=True) is
        specialized on its value, as the result's shape depends on it."""
        return value if isinstance(value, int) else V.graph.sizevars.guard_int(value)

    def along_dim(x, dim):
        """x and the dim its fields run along (docs/semantics.md): dim=None and a 0-d x are x
        viewed as 1-d (a view: what makes x still fuses)."""
        sizes = x.get_size()
        if dim is None or not sizes:
            return view(x, [sympy_product(sizes)]), 0
        return x, constant_int(dim) % len(sizes)

    def pack_of(x, bits, dim, bitorder: str, nonzero: bool):
        """pack (packbits: `nonzero`, each element's field is x != 0) as a Pointwise over the
        bytes: each byte loads the 8 // bits elements of its group and ors their fields in,
        all on uint8 values that stay below 256 (C++ computes the shifts in int). An element
        past the end of the dim is a zero field: loaded under a mask, in the last group only.
        The group's loads are strided, so Inductor's CPU code stays scalar (its vector loops
        would gather them lane by lane)."""
        x, dim = along_dim(x, dim)
        bits = constant_int(bits)
        per_byte = 8 // bits
        dtype = x.get_dtype()
        if dtype in COMPUTED_AS:  # the same low bits and zeros, on a dtype Inductor computes
            x, dtype = bitcast(x, COMPUTED_AS[dtype]), COMPUTED_AS[dtype]
        sizes = list(x.get_size())
        length = sizes[dim]
        whole_groups = V.graph.sizevars.statically_known_multiple_of(length, per_byte)
        load = x.make_loader()

        def field(index):
            value = load(index)
            if dtype == torch.bool:  # its value is its low bit, and whether it is nonzero
                return ops.to_dtype(value, torch.uint8)
            if nonzero:
                return ops.to_dtype(ops.ne(value, ops.constant(0, dtype)), torch.uint8)
            # The low bits taken on x's dtype: what is narrowed to uint8 is already below 2**bits.
            return ops.to_dtype(ops.bitwise_and(value, ops.constant((1 << bits) - 1, dtype)), torch.uint8)

        def byte(index):
            packed = None
            for k in range(per_byte):
                element = index[dim] * per_byte + k
                at = [*index[:dim], element, *index[dim + 1:]]
                if k == 0 or whole_groups:  # the first element of a group is always there
                    value = field(at)
                else:
                    there = ops.lt(ops.index_expr(element, torch.int64), ops.index_expr(length, torch.int64))
                    value = ops.masked(there, functools.partial(field, at), 0)
                shift = (k if bitorder == "little" else per_byte - 1 - k) * bits  # "big": the first field high
                if shift:
                    value = ops.bitwise_left_shift(value, ops.constant(shift, torch.uint8))
                packed = value if packed is None else ops.bitwise_or(packed, value)
            return packed

        return Pointwise.create(device=x.get_device(), dtype=torch.uint8, inner_fn=byte,
                                ranges=[*sizes[:dim], CeilDiv(length, per_byte), *sizes[dim + 1:]])

    def unpack_of(x, bits, dim, bitorder: str, signed: bool):
        """unpack (unpackbits: bits=1) as a Pointwise over the fields: field i is byte
        i // per_byte shifted down by the field's place. Sign-extended by (v ^ h) - h,
        h = 2**(bits - 1): no shift into a sign bit. The result's length (count) is the one
        its fake tensor has; fields past the bytes (a count beyond them) are 0: their byte is
        loaded under a mask."""
        x, dim = along_dim(x, dim)
        bits = constant_int(bits)
        per_byte = 8 // bits
        sizes = list(x.get_size())
        nbytes = sizes[dim]
        available = nbytes * per_byte
        size = convert_shape_to_inductor(V.graph.current_node.meta["val"].size())[dim]
        beyond = not V.graph.sizevars.statically_known_leq(size, available)
        dtype = torch.int8 if signed else torch.uint8
        load = x.make_loader()
        # Along x's last dim a C++ vector loop runs over consecutive fields, whose bytes
        # i // per_byte it would gather one lane at a time, or not vectorize at all: there the
        # fields come in groups of the loop's lanes, each group's bytes loaded at the same
        # address in every lane (field_of_its_group). The lanes are float32's: the fields are
        # realized, a node of their own, and Inductor's CPU backend gives a loop twice as many
        # only where every node in it computes bfloat16 or float16. Inductor fuses the node
        # with its users into one loop, which stores the fields nowhere when they all are in it.
        isa = pick_vec_isa() if x.get_device().type == "cpu" and config.cpu_backend == "cpp" else None
        lanes = isa.nelements(torch.float) if isa and dim == len(sizes) - 1 and not beyond else None

        def int32(value):
            return ops.constant(value, torch.int32)

        def place(k):
            """The shift of field k (an int32 value) of a byte, or of an int32 word of bytes."""
            if bitorder != "little":  # the first field of each byte high: k's place in its byte reversed
                k = ops.bitwise_xor(k, int32(per_byte - 1))
            return ops.mul(k, int32(bits))

        def field_of_its_byte(index):
            i = index[dim]
            byte = ops.to_dtype(load([*index[:dim], FloorDiv(i, per_byte), *index[dim + 1:]]), torch.int32)
            # The place from i's value (i & (per_byte - 1)), not the index i % per_byte: Inductor's
            # CPU code vectorizes a loop only while few of its accesses are non-contiguous.
            k = ops.to_dtype(ops.bitwise_and(ops.index_expr(i, torch.int64), ops.constant(per_byte - 1, torch.int64)),
                             torch.int32)
            return ops.bitwise_right_shift(byte, place(k))  # the field in the low bits

        def field_of_its_group(index):
            """Field i from its group: the group's bytes, 4 to an int32 word (the first in the
            low bits), the word of i's place k in the group shifted down. The bytes' index
            is the same in every lane of a vector loop of `lanes` fields (broadcasts), and k
            (i % group) an arange."""
            i = index[dim]
            group = max(lanes, per_byte)  # a group's bytes are whole
            group_bytes = group // per_byte
            first = FloorDiv(i, group) * group_bytes
            whole_groups = V.graph.sizevars.statically_known_multiple_of(nbytes, group_bytes)
            words = []
            for start in range(0, group_bytes, 4):
                word = None
                for c in range(start, min(start + 4, group_bytes)):
                    # A byte past the end of the last group is one no field of the result reads.
                    at = first + c if whole_groups else sympy.Min(first + c, nbytes - 1)
                    value = ops.to_dtype(load([*index[:dim], at]), torch.int32)
                    if c > start:
                        value = ops.bitwise_left_shift(value, int32(8 * (c - start)))
                    word = value if word is None else ops.bitwise_or(word, value)
                words.append(word)
            k = ops.index_expr(ModularIndexing(i, 1, group), torch.int32)
            fields_per_word = 32 // bits
            word = words[-1]
            for w in range(len(words) - 2, -1, -1):
                word = ops.where(ops.lt(k, int32((w + 1) * fields_per_word)), words[w], word)
            # By less than 32; the arithmetic shift of a word with its top bit set is masked below.
            return ops.bitwise_right_shift(word, place(ops.bitwise_and(k, int32(fields_per_word - 1))))

        def field(index):
            value = field_of_its_group(index) if lanes else field_of_its_byte(index)
            value = ops.bitwise_and(value, int32((1 << bits) - 1))
            if signed:
                half = int32(1 << (bits - 1))
                value = ops.sub(ops.bitwise_xor(value, half), half)
            return ops.to_dtype(value, dtype)

        def fields(index):
            if not beyond:
                return field(index)
            there = ops.lt(ops.index_expr(index[dim], torch.int64), ops.index_expr(available, torch.int64))
            return ops.masked(there, functools.partial(field, index), 0)

        result = Pointwise.create(device=x.get_device(), dtype=dtype, inner_fn=fields,
                                  ranges=[*sizes[:dim], size, *sizes[dim + 1:]])
        if lanes:
            result.realize()
        return result

    @lowers(_op.packbits.default)
    def packbits(x, dim=-1, bitorder="big"):
        return pack_of(x, 1, dim, bitorder, nonzero=True)

    @lowers(_op.packbits.out)
    def packbits_out(x, dim=-1, bitorder="big", *, out):
        return write_into(out, pack_of(x, 1, dim, bitorder, nonzero=True))

    @lowers(_op.pack.default)
    def pack(x, bits, dim=-1, bitorder="big"):
        return pack_of(x, bits, dim, bitorder, nonzero=False)

    @lowers(_op.pack.out)
    def pack_out(x, bits, dim=-1, bitorder="big", *, out):
        return write_into(out, pack_of(x, bits, dim, bitorder, nonzero=False))

    @lowers(_op.unpackbits.default)
    def unpackbits(x, dim=-1, count=None, bitorder="big"):
        return unpack_of(x, 1, dim, bitorder, signed=False)

    @lowers(_op.unpackbits.out)
    def unpackbits_out(x, dim=-1, count=None, bitorder="big", *, out):
        return write_into(out, unpack_of(x, 1, dim, bitorder, signed=False))

    @lowers(_op.unpack.default)
    def unpack(x, bits, dim=-1, count=None, bitorder="big", signed=False):
        return unpack_of(x, bits, dim, bitorder, signed)

    @lowers(_op.unpack.out)
    def unpack_out(x, bits, dim=-1, count=None, bitorder="big", signed=False, *, out):
        return write_into(out, unpack_of(x, bits, dim, bitorder, signed))

    def hamming_distance_of(x1, x2):
        """hamming_distance (docs/semantics.md section 16) as a Reduction: the int32 sum over the
        B bytes of the bit count of x1[..., i, b] ^ x2[..., j, b], the batch dims broadcast.
        Each byte is loaded as int32 (an int8 sign-extended) and the xor masked to its low 8
        bits, so the count runs on values in [0, 256) (count_nonnegative, as bitwise_count's):
        no step could overflow, and the sum is at most 8 * B, as the kernels' int32. Inductor
        fuses the bit count into the reduction's loop: no (..., M, N, B) tensor is made. Codes
        made by a pointwise producer (packbits(x > 0)) are read N or M times each: Inductor
        realizes them first when recomputing them would cost (mark_reuse)."""
        sizes1, sizes2 = list(x1.get_size()), list(x2.get_size())
        batch = list(broadcast_symbolic_shapes(sizes1[:-2], sizes2[:-2]))
        rows1, rows2, nbytes = sizes1[-2], sizes2[-2], sizes1[-1]
        masked = torch.int8 in (x1.get_dtype(), x2.get_dtype())  # sign-extended bits above the byte
        for codes in (x1, x2):
            codes.mark_reuse(2)
        load1, load2 = x1.make_loader(), x2.make_loader()

        def batch_index(index, sizes):
            """The output's batch index as an operand of batch dims `sizes` reads it: aligned
            to the right, a dim of size 1 broadcast."""
            own = index[len(batch) - len(sizes):len(batch)] if sizes else []
            return [sympy.S.Zero if V.graph.sizevars.is_size_one_or_false(size) else i for size, i in zip(sizes, own)]

        def distance(index, reduction_index):
            (b,) = reduction_index
            i, j = index[len(batch)], index[len(batch) + 1]
            byte1 = ops.to_dtype(load1([*batch_index(index, sizes1[:-2]), i, b]), torch.int32)
            byte2 = ops.to_dtype(load2([*batch_index(index, sizes2[:-2]), j, b]), torch.int32)
            xor = ops.bitwise_xor(byte1, byte2)
            if masked:
                xor = ops.bitwise_and(xor, ops.constant(0xFF, torch.int32))
            return count_nonnegative(xor, torch.int32, 8)

        result = Reduction.create(device=x1.get_device(), dst_dtype=torch.int32, src_dtype=torch.int32,
                                  inner_fn=distance, ranges=[*batch, rows1, rows2], reduction_ranges=[nbytes],
                                  reduction_type="sum")
        if isinstance(result.data.data, Reduction):  # not unrolled into a Pointwise (few bytes)
            result.realize()
        return result

    @lowers(_op.hamming_distance.default)
    def hamming_distance(x1, x2):
        return hamming_distance_of(x1, x2)

    @lowers(_op.hamming_distance.out)
    def hamming_distance_out(x1, x2, *, out):
        return write_into(out, hamming_distance_of(x1, x2))

    # hamming_topk: the C++ kernel, always (KERNEL_CALL_OPS).
    @lowers(_op.hamming_topk.default)
    def hamming_topk(queries, database, k):
        return _CALL_KERNEL

    @lowers(_op.hamming_topk.out)
    def hamming_topk_out(queries, database, k, *, values, indices):
        return _CALL_KERNEL

    return table
