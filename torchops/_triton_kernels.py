"""Triton kernels of torchops's compute ops, for CUDA and XPU: one launcher per compute op.

The C++ entry has already checked the arguments, chosen the result dtype and allocated
or resized `out`; the launchers here only compute, in one kernel launch per call (none
for an empty tensor). The rules of the shifts, signbit and bitwise_count are those of
docs/semantics.md (sections 2, 4, 6 and 7).

Operands of any strides, broadcast (stride-0) dims included, are read in place: each
launcher expands its operands to out's shape, merges the dims that are contiguous with
each other in every operand (as TensorIterator does) and hands the kernel the remaining
sizes and strides, from which it computes each element's offsets. With tuple arguments
the kernel takes any number of dims (one compiled variant per count), so no layout needs
a fallback copy.
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


def _plan(shape, strides, block):
    """Sizes and per-operand strides of the dims left after merging, innermost first.

    `strides` holds one stride list per operand, out's first. Size-1 dims are dropped;
    the rest are ordered by out's strides, so that writes run through memory in order,
    and a dim is merged into the one inside it when that is contiguous with it in every
    operand. Also says whether the offsets need 64-bit arithmetic.
    """
    # Out does not overlap itself, so its strides differ over dims of size > 1.
    dims = sorted((d for d in range(len(shape)) if shape[d] != 1), key=lambda d: strides[0][d])
    sizes, merged = [], [[] for _ in strides]
    for d in dims:
        if sizes and all(st[d] == m[-1] * sizes[-1] for st, m in zip(strides, merged)):
            sizes[-1] *= shape[d]
        else:
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
    return tuple(sizes), [tuple(m) for m in merged], index_64


def _launch(kernel, out, tensors, scalars, **constexprs):
    """Runs `kernel` over out's elements; `tensors` (out first) are already of out's shape."""
    block = INTERPRETED_BLOCK if out.device.type == "cpu" else BLOCK
    sizes, strides, index_64 = _plan(out.shape, [t.stride() for t in tensors], block)
    grid = (triton.cdiv(out.numel(), block),)
    # The launch goes to the current device: make it out's.
    guard = (contextlib.nullcontext() if out.device.type == "cpu"
             else torch.get_device_module(out.device).device(out.device))
    with guard:
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
