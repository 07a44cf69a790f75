"""Triton kernels of torchops's compute ops, for CUDA and XPU: one launcher per compute op,
named after it (``<op>_compute``). The ops they compute: bitshift and bitshift_
(``bitshift_compute``, ``bitshift_scalar_compute``), signbit, bitwise_count, packbits and
pack (``pack_compute``; packbits with 1-bit fields), unpackbits and unpack
(``unpack_compute``), hamming_distance and hamming_topk.

The C++ entry has already checked the arguments, chosen the result dtype and allocated
or resized `out`; the launchers here only compute, in one kernel launch per call (none
for an empty tensor), but hamming_topk's: a search launch and a merge launch per pass of at
most TOPK_MAX_K nearest. The rules of the shifts, signbit and bitwise_count are those of
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


# Hamming distance and top-k search. The codes are rows of bytes (uint8 or int8: only the
# bits count) along the last dim; a distance is the number of bits in which two rows differ.
# Both ops read the codes as words of the widest integer type their layout allows (_code_words)
# and count the bits of each xor with _bit_count_32, which LLVM compiles to the GPU's
# popcount instruction (seen in the PTX for sm_80 and sm_90) and the interpreter runs as is.
# hamming_distance is one launch; hamming_topk two a pass (a search and a merge), one pass
# for k <= TOPK_MAX_K.


@triton.jit
def _differing_bits(a, b, U: tl.constexpr, WORD_BYTES: tl.constexpr):
    # The 1 bits of a ^ b, an int32 per lane; a and b are words of the signed type of
    # WORD_BYTES bytes, U the unsigned one (its zero extension keeps the count).
    v = (a ^ b).to(U, bitcast=True)
    if WORD_BYTES == 8:
        count = _bit_count_32(v.to(tl.uint32)) + _bit_count_32((v >> 32).to(tl.uint32))
    else:
        count = _bit_count_32(v.to(tl.uint32))
    return count.to(tl.int32)


@triton.jit
def _hamming_distance_kernel(out_ptr, x1_ptr, x2_ptr, m, n, words, tiles_m, tiles_n,
                             out_row, out_col, x1_row, x1_word, x2_row, x2_word,
                             batch_sizes, out_batch, x1_batch, x2_batch,
                             U: tl.constexpr, WORD_BYTES: tl.constexpr, NDIM: tl.constexpr,
                             INDEX_64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # One program per (batch element, tile of BLOCK_M rows of x1, tile of BLOCK_N rows of x2):
    # each word of a row is loaded once per tile and serves every row of the other operand.
    pid = tl.program_id(0)
    if INDEX_64:
        pid = pid.to(tl.int64)
    tile_n = pid % tiles_n
    rest = pid // tiles_n
    tile_m = rest % tiles_m
    batch = rest // tiles_m
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < m
    col_ok = cols < n
    # Pointers stepped by a word's stride: w * stride could overflow 32 bits, a step cannot.
    a_ptrs = x1_ptr + _offset(batch, batch_sizes, x1_batch, NDIM) + rows * x1_row
    b_ptrs = x2_ptr + _offset(batch, batch_sizes, x2_batch, NDIM) + cols * x2_row
    distance = tl.full([BLOCK_M, BLOCK_N], 0, tl.int32)
    for _ in range(words):
        a = tl.load(a_ptrs, mask=row_ok, other=0)
        b = tl.load(b_ptrs, mask=col_ok, other=0)
        distance += _differing_bits(a[:, None], b[None, :], U, WORD_BYTES)
        a_ptrs += x1_word
        b_ptrs += x2_word
    out_ptrs = (out_ptr + _offset(batch, batch_sizes, out_batch, NDIM)
                + rows[:, None] * out_row + cols[None, :] * out_col)
    tl.store(out_ptrs, distance, mask=row_ok[:, None] & col_ok[None, :])


# The top-k search orders the candidates of a query by one int64 key, distance << shift |
# index, shift being the bits of the largest index: keys are distinct, and their order is the
# result's order (nearest first, the smaller index first among equal distances), so every
# selection below is exact and no split of the work can change the answer. _NO_KEY, above
# every key, fills what holds no candidate.
_NO_KEY: tl.constexpr = tl.constexpr(2**63 - 1)


@triton.jit
def _compare_exchange(x, R: tl.constexpr, C: tl.constexpr, J: tl.constexpr, DIRECTION: tl.constexpr):
    # One step of a bitonic network along dim 1 of x ([R, C]): lanes l and l + J (l's bit J
    # clear, J a power of two) exchange their keys so that the lower lane holds the smaller,
    # or the larger where l's bit DIRECTION is clear (DIRECTION 0: nowhere; C: everywhere).
    # The pairs are made by a reshape, a permute and a split, which the compiler resolves
    # at compile time (a tl.gather by computed lanes goes through local memory). The networks
    # use Triton's builtins alone, not tl.sort, tl.topk or tl.min: library functions are
    # JITFunctions in a process that imported Triton before TRITON_INTERPRET was set, which
    # an interpreted kernel cannot call (commit 8f4a0fa).
    low, high = tl.split(tl.permute(tl.reshape(x, [R, C // (2 * J), 2, J]), [0, 1, 3, 2]))
    smaller = tl.minimum(low, high)
    larger = tl.maximum(low, high)
    if DIRECTION == 0:
        low, high = smaller, larger
    else:
        lane = tl.arange(0, C // (2 * J))[:, None] * (2 * J) + tl.arange(0, J)[None, :]
        descending = ((lane & DIRECTION) == 0)[None, :, :]
        low = tl.where(descending, larger, smaller)
        high = tl.where(descending, smaller, larger)
    return tl.reshape(tl.permute(tl.join(low, high), [0, 1, 3, 2]), [R, C])


@triton.jit
def _halves(x, R: tl.constexpr, C: tl.constexpr):
    # Lanes [0, C/2) and [C/2, C) of x ([R, C]). Halves rather than neighbouring lanes: split
    # from a [R, C/2, 2] reshape, the compiled kernel spills to local memory where R is 1 or 2.
    return tl.split(tl.permute(tl.reshape(x, [R, 2, C // 2]), [0, 2, 1]))


@triton.jit
def _sort_blocks(x, R: tl.constexpr, C: tl.constexpr, LOG_KP: tl.constexpr):
    # Sorts each block of KP = 2**LOG_KP lanes of x ([R, C]) into the orders _smallest takes:
    # descending in the first half of x and ascending in the second (descending if KP = C).
    for s in tl.static_range(1, LOG_KP + 1):
        # Blocks of 2**s lanes sorted from halves sorted in opposite orders (a bitonic
        # sequence); below KP, in alternate orders, for the next stage.
        for t in tl.static_range(s):
            if s < LOG_KP:
                x = _compare_exchange(x, R, C, 1 << (s - 1 - t), 1 << s)
            else:
                x = _compare_exchange(x, R, C, 1 << (s - 1 - t), C // 2 if C > (1 << LOG_KP) else C)
    return x


@triton.jit
def _merge_blocks(x, R: tl.constexpr, C: tl.constexpr, LOG_KP: tl.constexpr, DIRECTION: tl.constexpr):
    # Sorts each block of KP = 2**LOG_KP lanes of x ([R, C]) that holds a bitonic sequence:
    # descending where a lane's bit DIRECTION is clear (see _compare_exchange).
    for t in tl.static_range(LOG_KP):
        x = _compare_exchange(x, R, C, 1 << (LOG_KP - 1 - t), DIRECTION)
    return x


@triton.jit
def _smallest(x, R: tl.constexpr, C: tl.constexpr, LOG_KP: tl.constexpr, FOLDS: tl.constexpr):
    # The KP = 2**LOG_KP smallest keys of each row of x ([R, C], C = KP << FOLDS), sorted
    # descending, from blocks of KP sorted keys, descending in the first half of x and
    # ascending in the second. Bitonic top-k: the lane-wise minimum of a descending block and
    # an ascending one holds the KP smallest of their keys as a bitonic sequence, which one
    # merge sorts; each fold halves the width, its result again in those orders.
    for f in tl.static_range(FOLDS):
        # C >> (f + 1) lanes after the fold (written out: a constexpr cannot be reassigned).
        first, second = _halves(x, R, C >> f)
        x = _merge_blocks(tl.minimum(first, second), R, C >> (f + 1), LOG_KP,
                          C >> (f + 2) if f + 1 < FOLDS else C >> (f + 1))
    return x


@triton.jit
def _insert(best, candidates, R: tl.constexpr, LOG_KP: tl.constexpr):
    # The KP smallest of best (ascending) and candidates (descending), ascending.
    return _merge_blocks(tl.minimum(best, candidates), R, 1 << LOG_KP, LOG_KP, 0)


@triton.jit
def _any(flags, SIZE: tl.constexpr, LOG_SIZE: tl.constexpr):
    # Whether any of the SIZE >= 2 flags is set, as a scalar, by halving (see _compare_exchange
    # for why not a reduction). The reshapes keep the flags' order (Triton deprecates
    # can_reorder=True, which let the compiler keep each thread's own and warns from the
    # Triton of torch 2.15's wheels on).
    x = tl.reshape(flags.to(tl.int32), [SIZE])
    for f in tl.static_range(LOG_SIZE - 1):
        first, second = tl.split(tl.reshape(x, [SIZE >> (f + 1), 2]))
        x = tl.maximum(first, second)
    first, second = tl.split(x)
    return tl.maximum(first, second) != 0


@triton.jit
def _last(x, R: tl.constexpr, LOG_C: tl.constexpr):
    # x[:, -1:] ([R, 1]) of x ([R, 2**LOG_C]), by halving (see _compare_exchange for why not a
    # reduction or a gather).
    for f in tl.static_range(LOG_C):
        _, x = _halves(x, R, 1 << (LOG_C - f))
    return x


@triton.jit
def _hamming_topk_partial_kernel(partial_ptr, lower_ptr, q_ptr, db_ptr, q_count, n, words, splits,
                                 rows_per_split, q_pad, shift, q_row, q_word, db_row, db_word,
                                 U: tl.constexpr, WORD_BYTES: tl.constexpr, INDEX_64: tl.constexpr,
                                 QT: tl.constexpr, BN: tl.constexpr, LOG_KP: tl.constexpr,
                                 FOLDS: tl.constexpr, LOG_TILE: tl.constexpr):
    # One program per (tile of QT queries, split of the database): the KP smallest keys above
    # each query's lower bound among the split's rows, ascending, into partial[split, query].
    # The rows come BN at a time; a tile's keys are sorted and folded into the program's
    # best only when one of them is below a query's KP-th best (after the first tiles,
    # most are not).
    KP: tl.constexpr = 1 << LOG_KP
    pid = tl.program_id(0)
    if INDEX_64:
        pid = pid.to(tl.int64)
    split = pid % splits
    queries = (pid // splits) * QT + tl.arange(0, QT)
    q_ok = queries < q_count
    lower = tl.load(lower_ptr + queries)  # q_pad of them: the padding queries' too
    start = split * rows_per_split
    end = tl.minimum(start + rows_per_split, n)
    best = tl.full([QT, KP], _NO_KEY, tl.int64)
    for tile in range(start, end, BN):
        rows = tile + tl.arange(0, BN)
        row_ok = rows < end
        a_ptrs = q_ptr + queries * q_row
        b_ptrs = db_ptr + rows * db_row
        distance = tl.full([QT, BN], 0, tl.int32)
        for _ in range(words):
            a = tl.load(a_ptrs, mask=q_ok, other=0)
            b = tl.load(b_ptrs, mask=row_ok, other=0)
            distance += _differing_bits(a[:, None], b[None, :], U, WORD_BYTES)
            a_ptrs += q_word
            b_ptrs += db_word
        keys = (distance.to(tl.int64) << shift) | rows[None, :].to(tl.int64)
        keys = tl.where(row_ok[None, :] & (keys > lower[:, None]), keys, _NO_KEY)
        worst = _last(best, QT, LOG_KP)  # the KP-th best, best being ascending
        # A loop of 0 or 1 iterations, not an if: Triton 3.8's RemoveLayoutConversions pass
        # does not finish on this network inside an scf.if (it does inside an scf.for).
        for _ in range(_any(keys < worst, QT * BN, LOG_TILE).to(tl.int32)):
            candidates = _smallest(_sort_blocks(keys, QT, BN, LOG_KP), QT, BN, LOG_KP, FOLDS)
            best = _insert(best, candidates, QT, LOG_KP)
    lanes = tl.arange(0, KP)
    tl.store(partial_ptr + ((split * q_pad + queries) * KP)[:, None] + lanes[None, :], best)


@triton.jit
def _hamming_topk_merge_kernel(values_ptr, indices_ptr, lower_ptr, partial_ptr, q_count, splits, q_pad,
                               first, count, shift, index_mask, values_row, values_col,
                               indices_row, indices_col,
                               INDEX_64: tl.constexpr, QT: tl.constexpr, LISTS: tl.constexpr,
                               LOG_KP: tl.constexpr, LOG_LISTS: tl.constexpr):
    # One program per tile of QT queries: the KP smallest of the splits' lists (LISTS lists
    # at a time), of which the first `count` are written to columns first, first + 1, ... of
    # values and indices; the last of them becomes the queries' lower bound for the next pass.
    KP: tl.constexpr = 1 << LOG_KP
    pid = tl.program_id(0)
    if INDEX_64:
        pid = pid.to(tl.int64)
    queries = pid * QT + tl.arange(0, QT)
    q_ok = queries < q_count
    lanes = tl.arange(0, LISTS * KP)
    list_of = lanes // KP
    # The first half of the lists read backwards, descending: the orders _smallest takes.
    along = tl.where(list_of < LISTS // 2, KP - 1 - lanes % KP, lanes % KP)
    best = tl.full([QT, KP], _NO_KEY, tl.int64)
    for chunk in range(0, splits, LISTS):
        split = chunk + list_of
        if INDEX_64:
            split = split.to(tl.int64)
        ptrs = partial_ptr + ((split * q_pad)[None, :] + queries[:, None]) * KP + along[None, :]
        keys = tl.load(ptrs, mask=(split < splits)[None, :], other=_NO_KEY)
        best = _insert(best, _smallest(keys, QT, LISTS * KP, LOG_KP, LOG_LISTS), QT, LOG_KP)
    j = tl.arange(0, KP)[None, :]
    if INDEX_64:
        j = j.to(tl.int64)
    written = q_ok[:, None] & (j < count)
    column = first + j
    tl.store(values_ptr + queries[:, None] * values_row + column * values_col, (best >> shift).to(tl.int32),
             mask=written)
    tl.store(indices_ptr + queries[:, None] * indices_row + column * indices_col, best & index_mask,
             mask=written)
    # One lane a query stores, the key at column first + count - 1.
    tl.store(lower_ptr + queries[:, None] + j * 0, best, mask=q_ok[:, None] & (j == count - 1))


# Codes read as words of a wider type: (bytes, torch dtype), the widest first.
_CODE_WORDS = ((8, torch.int64), (4, torch.int32), (2, torch.int16))

# The most keys a program keeps for a query: a larger k is answered in ceil(k / TOPK_MAX_K)
# passes over the database, each the next TOPK_MAX_K keys above the last pass's last.
TOPK_MAX_K = 256
# The programs a top-k search aims at, so that one query fills a GPU: the database is
# split among them (few under the interpreter, whose cost is per program and per op).
TOPK_PROGRAMS = 1024
INTERPRETED_TOPK_PROGRAMS = 4


def _code_words(codes):
    """The codes (int8 or uint8, the bytes along the last dim) viewed as words of the widest
    signed dtype that divides every code's length, strides and address, with the word's size
    in bytes; int8 bytes where none does (a code's bytes not adjacent, an odd length)."""
    length = codes[0].shape[-1]
    for width, dtype in _CODE_WORDS:
        if length % width == 0 and all(
                c.stride(-1) == 1 and c.data_ptr() % width == 0
                and all(s % width == 0 for s in c.stride()[:-1]) for c in codes):
            try:
                return [c.view(dtype) for c in codes], width
            except RuntimeError:  # a storage offset the view refuses (an unaligned storage)
                pass
    return [c.view(torch.int8) for c in codes], 1


def _word_constexprs(width):
    return dict(U=_UNSIGNED[_SIGNED_OF_WIDTH[width]], WORD_BYTES=width)


def _reach(sizes, strides):
    """The largest offset over these sizes and (non-negative) strides."""
    return sum((size - 1) * stride for size, stride in zip(sizes, strides) if size > 0)


def _power_of_2_at_least(n):
    return 1 << max(0, n - 1).bit_length()


def hamming_distance_compute(out, x1, x2):
    """out (int32, (*batch, M, N)) = the bits in which row i of x1 ((*batch, M, B)) and row j
    of x2 ((*batch, N, B)) differ, at [..., i, j]; x1 and x2 int8 or uint8, their batch dims
    out's (stride 0 where broadcast)."""
    if out.numel() == 0:
        return
    m, n, length = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    if length == 0:
        out.fill_(0)  # nothing to read
        return
    batch = tuple(out.shape[:-2])
    x1, x2 = x1.expand(*batch, m, length), x2.expand(*batch, n, length)
    (x1, x2), width = _code_words([x1, x2])
    block = _block_for(out)
    # A tile of out of `block` elements, about square where M and N allow.
    block_n = min(_power_of_2_at_least(n), 1 << (block.bit_length() // 2))
    block_m = min(_power_of_2_at_least(m), block // block_n)
    tiles_m, tiles_n = triton.cdiv(m, block_m), triton.cdiv(n, block_n)
    sizes, (out_batch, x1_batch, x2_batch), _, _ = _plan(
        batch, [out.stride()[:-2], x1.stride()[:-2], x2.stride()[:-2]], 0)
    programs = tiles_m * tiles_n
    for size in sizes:
        programs *= size
    # Offsets of masked-off rows too (the last tiles run past M and N).
    reaches = (_reach(sizes, out_batch) + _reach((tiles_m * block_m, tiles_n * block_n), out.stride()[-2:]),
               _reach(sizes, x1_batch) + _reach((tiles_m * block_m, x1.shape[-1]), x1.stride()[-2:]),
               _reach(sizes, x2_batch) + _reach((tiles_n * block_n, x2.shape[-1]), x2.stride()[-2:]))
    index_64 = programs > _INT32_MAX or max(reaches) > _INT32_MAX
    with _device_of(out):
        _hamming_distance_kernel[(programs,)](
            out, x1, x2, m, n, x1.shape[-1], tiles_m, tiles_n, *out.stride()[-2:], *x1.stride()[-2:],
            *x2.stride()[-2:], sizes, out_batch, x1_batch, x2_batch, NDIM=len(sizes), INDEX_64=index_64,
            BLOCK_M=block_m, BLOCK_N=block_n, **_word_constexprs(width))


def hamming_topk_compute(values, indices, queries, database, k):
    """For each query (row of queries, (Q, B)), the k rows of database ((N, B)) nearest in
    Hamming distance, nearest first and the smaller index first among equal distances:
    their distances into values (int32, (Q, k)), their indices into indices (int64, (Q, k)).
    1 <= k <= N, Q >= 1; the codes int8 or uint8, of any strides.

    A grid of programs, each a tile of QT queries against a split of the database, keeps the
    KP smallest keys (KP = k rounded up to a power of 2, at most TOPK_MAX_K) of each query;
    a second kernel merges the splits' lists. Scratch: splits * ceil(Q / QT) * QT * KP keys
    (int64) and a lower bound per query, whatever N. A k above TOPK_MAX_K takes more passes.
    """
    q, n, length = queries.shape[0], database.shape[0], queries.shape[1]
    if length == 0:
        width = 1  # every distance 0; no word is read
        queries, database = queries.view(torch.int8), database.view(torch.int8)
    else:
        (queries, database), width = _code_words([queries, database])
    words = queries.shape[1]
    # The index's bits in a key (the distance's, above them, leave 63 - shift: enough while
    # 8 * B < 2**(63 - shift), i.e. any database that fits in memory).
    shift = max(1, (n - 1).bit_length())
    block = _block_for(values)
    interpreted = values.device.type == "cpu"
    kp = _power_of_2_at_least(min(k, TOPK_MAX_K))
    # Tiles of `block` keys: QT queries against BN rows, BN >= 2 * KP where the block allows;
    # QT at most 16 (compiled: more queries would leave too few programs for the database).
    qt = min(_power_of_2_at_least(q), 16, max(1, block // (2 * kp)))
    bn = max(kp, block // qt)
    q_tiles = triton.cdiv(q, qt)
    q_pad = q_tiles * qt
    tiles = triton.cdiv(n, bn)
    programs = INTERPRETED_TOPK_PROGRAMS if interpreted else TOPK_PROGRAMS
    splits = min(tiles, max(1, programs // q_tiles))
    rows_per_split = triton.cdiv(tiles, splits) * bn
    splits = triton.cdiv(n, rows_per_split)  # none left empty
    # The merge: the same QT queries against LISTS >= 2 lists of KP keys, about `block` keys.
    lists = max(2, min(_power_of_2_at_least(splits), block // (qt * kp)))
    partial = torch.empty((splits, q_pad, kp), dtype=torch.int64, device=values.device)
    lower = torch.full((q_pad,), -1, dtype=torch.int64, device=values.device)
    # Offsets of masked-off lanes too: padding queries, rows past a split's end, lists past
    # the last, columns past k.
    columns = triton.cdiv(k, kp) * kp
    index_64 = max(
        triton.cdiv(splits, lists) * lists * q_pad * kp, q_tiles * splits,
        _reach((q_pad, words), queries.stride()), _reach(((tiles + 1) * bn, words), database.stride()),
        _reach((q_pad, columns), values.stride()), _reach((q_pad, columns), indices.stride())) > _INT32_MAX
    with _device_of(values):
        for first in range(0, k, kp):
            _hamming_topk_partial_kernel[(q_tiles * splits,)](
                partial, lower, queries, database, q, n, words, splits, rows_per_split, q_pad, shift,
                *queries.stride(), *database.stride(), INDEX_64=index_64, QT=qt, BN=bn,
                LOG_KP=kp.bit_length() - 1, FOLDS=(bn // kp).bit_length() - 1,
                LOG_TILE=(qt * bn).bit_length() - 1, **_word_constexprs(width))
            _hamming_topk_merge_kernel[(q_tiles,)](
                values, indices, lower, partial, q, splits, q_pad, first, min(kp, k - first), shift,
                (1 << shift) - 1, *values.stride(), *indices.stride(), INDEX_64=index_64, QT=qt,
                LISTS=lists, LOG_KP=kp.bit_length() - 1, LOG_LISTS=lists.bit_length() - 1)
