"""Triton kernels of torchops's compute ops, for CUDA and XPU: one launcher per compute op.

The C++ entry has already checked the arguments, chosen the result dtype and allocated
or resized `out`; the launchers here only compute, in one kernel launch per call (none
for an empty tensor). The rules of the shifts, signbit and bitwise_count are those of
docs/semantics.md (sections 2, 4, 6 and 7), and those of pack and unpack its packing
section's.

Operands of any strides, broadcast (stride-0) dims included, are read in place: each
launcher expands its operands to out's shape, merges the dims that are contiguous with
each other in every operand (as TensorIterator does) and hands the kernel the remaining
sizes and strides, from which it computes each element's offsets. With tuple arguments
the kernel takes any number of dims (one compiled variant per count), so no layout needs
a fallback copy. Pack and unpack change the size of one dim: their plan keeps that dim
apart (never merged), its index computed with the offsets, and x read along it from there.
"""

import contextlib

import torch
import triton
import triton.language as tl

BLOCK = 1024
# CPU tensors run through Triton's interpreter (TORCHOPS_CPU_KERNELS=triton), whose cost is
# per program and per op, not per element: larger blocks make the tests' sweeps many times
# faster there, and a 64K-element sweep still spans several programs and a masked tail.
INTERPRETED_BLOCK = 8192
_INT32_MAX = 2**31 - 1

# The launchers' `op` codes: csrc/kernels/kernels.h's ShiftOp, which the C++ entries pass
# (the kernels test the same numbers).
LEFT, LOGICAL_RIGHT, ARITHMETIC_RIGHT = 0, 1, 2

# The unsigned type of each width: logical right shifts are done on it, since `>>` of a
# signed Triton value is arithmetic.
_UNSIGNED = {
    torch.int8: tl.uint8, torch.uint8: tl.uint8,
    torch.int16: tl.uint16, torch.uint16: tl.uint16,
    torch.int32: tl.uint32, torch.uint32: tl.uint32,
    torch.int64: tl.uint64, torch.uint64: tl.uint64,
}

# signbit reads a float's bits as the signed integer of its width: `< 0` is then the sign
# bit, for -0.0 and NaNs too.
_SAME_WIDTH_INT = {
    torch.float16: torch.int16, torch.bfloat16: torch.int16,
    torch.float32: torch.int32, torch.float64: torch.int64,
}


@triton.jit
def _indices(numel, INDEX_64: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if INDEX_64:
        pid = pid.to(tl.int64)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    return idx, idx < numel


@triton.jit
def _offset(idx, sizes, strides, NDIM: tl.constexpr):
    # Offset (in elements) of linear index `idx` in one operand; dims innermost first.
    # The outermost dim needs no `%`: masked-off lanes may point anywhere.
    off = 0
    for d in tl.static_range(NDIM - 1):
        off += (idx % sizes[d]) * strides[d]
        idx = idx // sizes[d]
    return off + idx * strides[NDIM - 1]


@triton.jit
def _shift(a, c, OP: tl.constexpr, N_BITS: tl.constexpr, U: tl.constexpr):
    # OP: 0 left, 1 logical right, 2 arithmetic right; `a` and `c` are of the result
    # dtype (`c` may be a scalar). LLVM makes a shift by >= the width poison, so every
    # count is brought into range before any shift and the out-of-range result is
    # selected afterwards.
    in_range = (c >= 0) & (c < N_BITS)
    if OP == 2:
        # Arithmetic right, signed dtype: out of range equals a shift by n - 1.
        return a >> tl.where(in_range, c, N_BITS - 1)
    c = tl.where(in_range, c, 0)
    if OP == 0:
        r = a << c
    else:
        r = (a.to(U, bitcast=True) >> c.to(U, bitcast=True)).to(a.dtype, bitcast=True)
    return tl.where(in_range, r, 0)


@triton.jit
def _bitshift_kernel(out_ptr, x_ptr, y_ptr, numel, sizes, out_strides, x_strides, y_strides,
                     OP: tl.constexpr, N_BITS: tl.constexpr, U: tl.constexpr,
                     NDIM: tl.constexpr, INDEX_64: tl.constexpr, BLOCK: tl.constexpr):
    idx, mask = _indices(numel, INDEX_64, BLOCK)
    # `.to` keeps the low bits, sign-extending a signed source and zero-extending an
    # unsigned one: the conversion of `tensor.to(R)`.
    r_dtype = out_ptr.dtype.element_ty
    a = tl.load(x_ptr + _offset(idx, sizes, x_strides, NDIM), mask=mask).to(r_dtype)
    c = tl.load(y_ptr + _offset(idx, sizes, y_strides, NDIM), mask=mask).to(r_dtype)
    tl.store(out_ptr + _offset(idx, sizes, out_strides, NDIM), _shift(a, c, OP, N_BITS, U), mask=mask)


# `count` is never specialized to a constant: one compiled variant serves every count.
@triton.jit(do_not_specialize=["count"])
def _bitshift_scalar_kernel(out_ptr, x_ptr, count, numel, sizes, out_strides, x_strides,
                            OP: tl.constexpr, N_BITS: tl.constexpr, U: tl.constexpr,
                            NDIM: tl.constexpr, INDEX_64: tl.constexpr, BLOCK: tl.constexpr):
    idx, mask = _indices(numel, INDEX_64, BLOCK)
    a = tl.load(x_ptr + _offset(idx, sizes, x_strides, NDIM), mask=mask)
    c = count.to(a.dtype)  # 0 <= count <= 64 fits every dtype
    tl.store(out_ptr + _offset(idx, sizes, out_strides, NDIM), _shift(a, c, OP, N_BITS, U), mask=mask)


@triton.jit
def _signbit_kernel(out_ptr, x_ptr, numel, sizes, out_strides, x_strides,
                    NDIM: tl.constexpr, INDEX_64: tl.constexpr, BLOCK: tl.constexpr):
    idx, mask = _indices(numel, INDEX_64, BLOCK)
    x = tl.load(x_ptr + _offset(idx, sizes, x_strides, NDIM), mask=mask)
    tl.store(out_ptr + _offset(idx, sizes, out_strides, NDIM), x < 0, mask=mask)


@triton.jit
def _bit_count_32(v):
    # The 1 bits of v, a uint32: adjacent fields of 1, 2, 4, 8, 16 bits summed pairwise (Hacker's
    # Delight's pop without its multiply; the first step's difference is each 2-bit field's sum).
    # A field of k bits holds at most k, so no sum carries into the next field and nothing wraps.
    # The constants, ints of at most 31 bits, take v's type.
    v = v - ((v >> 1) & 0x55555555)
    v = (v & 0x33333333) + ((v >> 2) & 0x33333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F
    v = v + (v >> 8)
    v = v + (v >> 16)
    return v & 0x3F


@triton.jit
def _bitwise_count_kernel(out_ptr, x_ptr, numel, sizes, out_strides, x_strides,
                          N_BITS: tl.constexpr, U: tl.constexpr, SIGNED: tl.constexpr,
                          NDIM: tl.constexpr, INDEX_64: tl.constexpr, BLOCK: tl.constexpr):
    idx, mask = _indices(numel, INDEX_64, BLOCK)
    x = tl.load(x_ptr + _offset(idx, sizes, x_strides, NDIM), mask=mask)
    if N_BITS == 1:  # bool: its value (a bool converts by zero extension)
        count = x.to(tl.uint8)
    else:
        v = x.to(U, bitcast=True)
        if SIGNED:
            # |x| on the unsigned bits: (v ^ s) + 1 for a negative x, s all ones (~v + 1 is at most
            # 2^(n-1), the most negative value's magnitude, one bit): nothing overflows or wraps.
            s = (x >> (N_BITS - 1)).to(U, bitcast=True)
            v = (v ^ s) + (x < 0).to(U)
        if N_BITS == 64:
            count = _bit_count_32(v.to(tl.uint32)) + _bit_count_32((v >> 32).to(tl.uint32))
        else:
            count = _bit_count_32(v.to(tl.uint32))  # zero-extended
        count = count.to(tl.uint8)
    tl.store(out_ptr + _offset(idx, sizes, out_strides, NDIM), count, mask=mask)


@triton.jit
def _offsets_along(idx, sizes, out_strides, x_strides, KEPT: tl.constexpr, NDIM: tl.constexpr):
    # _offset's decomposition for out and x at once, which also returns the index along
    # dim KEPT (the packed one), where x's stride is the kernel's own business.
    out_off = 0
    x_off = 0
    along = 0
    for d in tl.static_range(NDIM):
        if d < NDIM - 1:
            i = idx % sizes[d]
            idx = idx // sizes[d]
        else:
            i = idx
        out_off += i * out_strides[d]
        x_off += i * x_strides[d]
        if d == KEPT:
            along = i
    return out_off, x_off, along


@triton.jit
def _pack_kernel(out_ptr, x_ptr, n, x_step, numel, sizes, out_strides, x_strides,
                 BITS: tl.constexpr, PER_BYTE: tl.constexpr, NONZERO: tl.constexpr, LITTLE: tl.constexpr,
                 KEPT: tl.constexpr, NDIM: tl.constexpr, INDEX_64: tl.constexpr, BLOCK: tl.constexpr):
    # One output byte per lane, from the PER_BYTE elements of its group, one field at a time:
    # x_strides holds PER_BYTE * x_step along the packed dim (a group's first element),
    # x_step is the step to the next element of the group, n the dim's size in x.
    idx, mask = _indices(numel, INDEX_64, BLOCK)
    out_off, x_off, group = _offsets_along(idx, sizes, out_strides, x_strides, KEPT, NDIM)
    byte = tl.full([BLOCK], 0, tl.int32)
    ptrs = x_ptr + x_off  # stepped by x_step: k * x_step could overflow 32 bits, a step cannot
    for k in tl.static_range(PER_BYTE):
        # Past the end of the dim (the last group's padding) the fields are 0.
        present = mask & (group * PER_BYTE + k < n)
        e = tl.load(ptrs, mask=present, other=0)
        ptrs += x_step
        if NONZERO:
            field = (e != 0).to(tl.int32)
        else:
            # Two's complement low bits, of any width (bool and unsigned dtypes come as the
            # signed integer of their width: the same bits).
            field = (e & ((1 << BITS) - 1)).to(tl.int32)
        if LITTLE:
            byte |= field << (k * BITS)
        else:
            byte |= field << ((PER_BYTE - 1 - k) * BITS)
    tl.store(out_ptr + out_off, byte.to(tl.uint8), mask=mask)


@triton.jit
def _unpack_kernel(out_ptr, x_ptr, nbytes, x_step, numel, sizes, out_strides, x_strides,
                   BITS: tl.constexpr, PER_BYTE: tl.constexpr, LITTLE: tl.constexpr, SIGNED: tl.constexpr,
                   KEPT: tl.constexpr, NDIM: tl.constexpr, INDEX_64: tl.constexpr, BLOCK: tl.constexpr):
    # One output field per lane: field i along the packed dim is field i % PER_BYTE of byte
    # i // PER_BYTE (x_strides holds 0 along that dim; x_step is x's stride there), 0 past
    # the last of the nbytes.
    idx, mask = _indices(numel, INDEX_64, BLOCK)
    out_off, x_off, i = _offsets_along(idx, sizes, out_strides, x_strides, KEPT, NDIM)
    byte_index = i // PER_BYTE
    byte = tl.load(x_ptr + (x_off + byte_index * x_step), mask=mask & (byte_index < nbytes), other=0)
    k = (i % PER_BYTE).to(tl.int32)
    if LITTLE:
        shift = k * BITS
    else:
        shift = (PER_BYTE - 1 - k) * BITS
    field = (byte.to(tl.int32) >> shift) & ((1 << BITS) - 1)
    if SIGNED:
        # Sign extension from BITS bits: the top bit of the field counts -2**(BITS-1).
        field -= (field >> (BITS - 1)) << BITS
    tl.store(out_ptr + out_off, field.to(out_ptr.dtype.element_ty), mask=mask)


def _plan(shape, strides, block, keep=None):
    """Sizes and per-operand strides of the dims left after merging, innermost first.

    `strides` holds one stride list per operand, out's first. Size-1 dims are dropped;
    the rest are ordered by out's strides, so that writes run through memory in order,
    and a dim is merged into the one inside it when that is contiguous with it in every
    operand. Dim `keep` (pack's and unpack's dim) stays, alone, whatever its size: its
    position among the dims left is returned too. Also says whether the offsets need 64-bit
    arithmetic.
    """
    # Out does not overlap itself, so its strides differ over dims of size > 1.
    dims = sorted((d for d in range(len(shape)) if shape[d] != 1 or d == keep), key=lambda d: strides[0][d])
    sizes, merged, kept = [], [[] for _ in strides], None
    for d in dims:
        if (sizes and d != keep and kept != len(sizes) - 1
                and all(st[d] == m[-1] * sizes[-1] for st, m in zip(strides, merged))):
            sizes[-1] *= shape[d]
        else:
            if d == keep:
                kept = len(sizes)
            sizes.append(shape[d])
            for st, m in zip(strides, merged):
                m.append(st[d])
    if not sizes:  # one element
        sizes, merged = [1], [[0] for _ in strides]
    numel = 1
    for n in sizes:
        numel *= n
    # The last block runs past numel; an operand's largest offset is the sum below.
    index_64 = numel + block > _INT32_MAX or any(
        sum((n - 1) * s for n, s in zip(sizes, m)) > _INT32_MAX for m in merged)
    return tuple(sizes), [tuple(m) for m in merged], index_64, kept


def _device_of(out):
    """The launch goes to the current device: a guard that makes it out's."""
    if out.device.type == "cpu":
        return contextlib.nullcontext()
    return torch.get_device_module(out.device).device(out.device)


def _block_for(out):
    """A program's elements of out: more under the interpreter (see INTERPRETED_BLOCK)."""
    return INTERPRETED_BLOCK if out.device.type == "cpu" else BLOCK


def _launch(kernel, out, tensors, scalars, **constexprs):
    """Runs `kernel` over out's elements; `tensors` (out first) are already of out's shape."""
    block = _block_for(out)
    sizes, strides, index_64, _ = _plan(out.shape, [t.stride() for t in tensors], block)
    grid = (triton.cdiv(out.numel(), block),)
    with _device_of(out):
        kernel[grid](*tensors, *scalars, out.numel(), sizes, *strides,
                     NDIM=len(sizes), INDEX_64=index_64, BLOCK=block, **constexprs)


def _shift_constexprs(dtype, op):
    if op not in (LEFT, ARITHMETIC_RIGHT, LOGICAL_RIGHT):
        raise ValueError(f"unknown shift op {op}")
    if op == ARITHMETIC_RIGHT and not dtype.is_signed:
        op = LOGICAL_RIGHT  # on unsigned dtypes the two right shifts are one operation
    return dict(OP=op, N_BITS=dtype.itemsize * 8, U=_UNSIGNED[dtype])


def bitshift_compute(out, x, y, op):
    """out = shift(x, y) with x and y converted to out.dtype; op is LEFT, LOGICAL_RIGHT or
    ARITHMETIC_RIGHT. x and y broadcast to out's shape; out may be x or y."""
    if out.numel() == 0:
        return
    x, y = x.expand(out.shape), y.expand(out.shape)
    _launch(_bitshift_kernel, out, (out, x, y), (), **_shift_constexprs(out.dtype, op))


def bitshift_scalar_compute(out, x, count, op):
    """out = shift(x, count); x of out's dtype and shape (may be out), count an int in
    [0, 64] (the caller clamps it; anything >= the width is out of range)."""
    if out.numel() == 0:
        return
    _launch(_bitshift_scalar_kernel, out, (out, x), (count,), **_shift_constexprs(out.dtype, op))


def signbit_compute(out, x):
    """out (bool, x's shape) = the sign bit of x: IEEE sign bit for floats, x < 0 for
    signed ints, False for unsigned ints and bool."""
    if out.numel() == 0:
        return
    if x.dtype == torch.bool or not (x.dtype.is_floating_point or x.dtype.is_signed):
        out.fill_(False)  # nothing to read
        return
    x = x.view(_SAME_WIDTH_INT.get(x.dtype, x.dtype))
    _launch(_signbit_kernel, out, (out, x), ())


def bitwise_count_compute(out, x):
    """out (uint8, x's shape) = the 1 bits of |x| for ints, x's value for bool (docs/semantics.md
    section 7). out may be x (a uint8 x)."""
    if out.numel() == 0:
        return
    if x.dtype == torch.bool:
        constexprs = dict(N_BITS=1, U=tl.uint8, SIGNED=False)  # U unused
    else:
        constexprs = dict(N_BITS=x.dtype.itemsize * 8, U=_UNSIGNED[x.dtype], SIGNED=x.dtype.is_signed)
    _launch(_bitwise_count_kernel, out, (out, x), (), **constexprs)


# Pack reads x's bits: a dtype Triton has no type for (bool, uint16/32/64) as the signed
# integer of its width.
_SIGNED_OF_WIDTH = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _launch_along(kernel, out, x, dim, x_along, reach, scalars, **constexprs):
    """Runs `kernel` over out's elements, dim `dim` kept apart (see _plan): x is of out's shape
    but along `dim`, where its plan stride is `x_along`, and `reach` is the largest offset in x
    the kernel computes (masked lanes included), for the choice of 64-bit offsets."""
    block = _block_for(out)
    x_strides = list(x.stride())
    x_strides[dim] = x_along
    sizes, strides, index_64, kept = _plan(out.shape, [out.stride(), x_strides], block, keep=dim)
    index_64 = index_64 or reach > _INT32_MAX
    grid = (triton.cdiv(out.numel(), block),)
    with _device_of(out):
        kernel[grid](out, x, *scalars, out.numel(), sizes, *strides,
                     KEPT=kept, NDIM=len(sizes), INDEX_64=index_64, BLOCK=block, **constexprs)


def _reach_besides(x, dim):
    """x's largest offset over every dim but `dim` (strides are never negative)."""
    return sum((size - 1) * stride for d, (size, stride) in enumerate(zip(x.shape, x.stride())) if d != dim)


def pack_compute(out, x, bits, dim, nonzero, little):
    """out (uint8, x's shape but ceil(n / (8 // bits)) at dim) = x's groups of 8 // bits
    elements along dim, each packed into a byte: an element's field is x != 0 when
    `nonzero` (packbits), else its low `bits` bits; the first field in the most significant
    bits unless `little`; the last group padded with zero fields."""
    if out.numel() == 0:
        return
    dim %= x.dim()
    per_byte = 8 // bits
    x = x.view(_SIGNED_OF_WIDTH[x.itemsize])
    step = x.stride(dim)
    groups = out.shape[dim]
    reach = _reach_besides(x, dim) + (groups * per_byte - 1) * step
    _launch_along(_pack_kernel, out, x, dim, per_byte * step, reach, (x.shape[dim], step),
                  BITS=bits, PER_BYTE=per_byte, NONZERO=bool(nonzero), LITTLE=bool(little))


def unpack_compute(out, x, bits, dim, little, signed):
    """out (uint8, or int8 when `signed`; x's shape but any size at dim) = the fields of x's
    bytes along dim, 8 // bits of them a byte in the order of `little` (as pack_compute's),
    0 past the last byte, sign-extended from `bits` bits when `signed`."""
    if out.numel() == 0:
        return
    dim %= x.dim()
    per_byte = 8 // bits
    step = x.stride(dim)
    reach = _reach_besides(x, dim) + (out.shape[dim] - 1) // per_byte * step
    _launch_along(_unpack_kernel, out, x, dim, 0, reach, (x.shape[dim], step),
                  BITS=bits, PER_BYTE=per_byte, LITTLE=bool(little), SIGNED=bool(signed))
