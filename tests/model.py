"""A plain-Python model of the torchops contract (docs/semantics.md).

Everything here works on Python ints (arbitrary precision, so there is no
overflow to reason about) or on raw bit patterns read through NumPy.  It never
calls torchops and never uses a torch shift: it is the reference the
implementation is checked against.

Bit-shift rules, n = bit width of the result dtype:
  * LEFT: a count < 0 or >= n gives 0; otherwise shift and keep the low n bits
    (bits moved past the top, sign bit included, are dropped).
  * RIGHT, arithmetic, signed dtype: sign-extending; a count < 0 or >= n gives
    the sign fill alone (-1 for negative x, 0 otherwise).
  * RIGHT otherwise (unsigned dtype, or arithmetic=False): zero-filling on the
    n-bit pattern; a count < 0 or >= n gives 0.
"""

import numpy as np
import torch

# dtype -> (bit width, signed)
INTEGER_DTYPES = {
    torch.int8: (8, True),
    torch.int16: (16, True),
    torch.int32: (32, True),
    torch.int64: (64, True),
    torch.uint8: (8, False),
    torch.uint16: (16, False),
    torch.uint32: (32, False),
    torch.uint64: (64, False),
}

DIRECTIONS = {"LEFT": "LEFT", "left": "LEFT", "RIGHT": "RIGHT", "right": "RIGHT"}


def width(dtype):
    return INTEGER_DTYPES[dtype][0]


def is_signed(dtype):
    return INTEGER_DTYPES[dtype][1]


def value_range(dtype):
    n, signed = INTEGER_DTYPES[dtype]
    return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)


def wrap(value, dtype):
    """Convert a Python int to `dtype` the way a C cast does: keep the low n
    bits and read them as two's complement for signed dtypes."""
    n, signed = INTEGER_DTYPES[dtype]
    bits = value & ((1 << n) - 1)
    if signed and bits >> (n - 1):
        bits -= 1 << n
    return bits


def shift_scalar(x, count, dtype, direction, arithmetic=True):
    """One element: `x` must already be a value of `dtype`; `count` is taken
    by value (any Python int)."""
    n, signed = INTEGER_DTYPES[dtype]
    low, high = value_range(dtype)
    assert low <= x <= high, f"{x} is not a {dtype} value"
    direction = DIRECTIONS[direction]
    in_range = 0 <= count < n

    if direction == "LEFT":
        return wrap(x << count, dtype) if in_range else 0
    if arithmetic and signed:
        if not in_range:
            return -1 if x < 0 else 0
        return x >> count  # Python's >> on ints is floor division: sign-extending
    if not in_range:
        return 0
    unsigned_bits = x & ((1 << n) - 1)
    return wrap(unsigned_bits >> count, dtype)


def shift_model(x_values, counts, dtype, direction, arithmetic=True):
    """Elementwise model with NumPy broadcasting.

    `x_values` and `counts` are (nested) Python ints, already values of the
    result dtype (callers convert tensor counts with `wrap` first, which is
    what the contract says happens to a tensor count).  Returns a nested list
    shaped like the broadcast result, comparable with `Tensor.tolist()`.
    """
    xs = np.asarray(x_values, dtype=object)
    cs = np.asarray(counts, dtype=object)
    xs, cs = np.broadcast_arrays(xs, cs)
    answers = {}  # test inputs repeat their pairs: each is modelled once
    flat = []
    for a, c in zip(xs.flat, cs.flat):
        pair = (int(a), int(c))
        if pair not in answers:
            answers[pair] = shift_scalar(*pair, dtype, direction, arithmetic)
        flat.append(answers[pair])
    return np.array(flat, dtype=object).reshape(xs.shape).tolist()


def shift_model_arrays(x, counts, dtype, direction, arithmetic=True):
    """shift_model for large inputs: the same rules on NumPy integer arrays of `dtype`'s
    NumPy type (values of the result dtype, broadcast together), giving an array of that
    type. Counts are compared by value before any shift, so no shift reaches NumPy with a
    count outside [0, n) (which C leaves undefined)."""
    n, signed = INTEGER_DTYPES[dtype]
    unsigned = np.dtype(f"u{n // 8}")
    x, counts = np.broadcast_arrays(np.asarray(x), np.asarray(counts))
    in_range = (counts >= 0) & (counts < n) if signed else counts < n
    safe = np.where(in_range, counts, 0).astype(unsigned)
    direction = DIRECTIONS[direction]
    if direction == "RIGHT" and arithmetic and signed:
        # sign-extending; out of range, the sign fill alone: a shift by n - 1
        return x >> np.where(in_range, safe, n - 1).astype(x.dtype)
    bits = x.view(unsigned)
    shifted = bits << safe if direction == "LEFT" else bits >> safe
    return np.where(in_range, shifted, 0).astype(unsigned).view(x.dtype)


# float dtype -> (same-width signed torch int dtype, NumPy unsigned view dtype)
_FLOAT_BITS = {
    torch.float16: (torch.int16, np.uint16),
    torch.bfloat16: (torch.int16, np.uint16),
    torch.float32: (torch.int32, np.uint32),
    torch.float64: (torch.int64, np.uint64),
}


def raw_bits(tensor):
    """The raw bit pattern of every element of a float tensor, as a NumPy
    unsigned array (bfloat16 has no NumPy dtype, so go through a torch view to
    a same-width int first)."""
    int_dtype, unsigned = _FLOAT_BITS[tensor.dtype]
    return tensor.detach().contiguous().view(int_dtype).numpy().view(unsigned)


def signbit_model(tensor):
    """Expected torchops.signbit(tensor) as a NumPy bool array."""
    if tensor.dtype in _FLOAT_BITS:
        bits = raw_bits(tensor)
        top = bits.dtype.itemsize * 8 - 1
        return (bits >> top).astype(bool)
    if tensor.dtype == torch.bool or not is_signed(tensor.dtype):
        return np.zeros(tuple(tensor.shape), dtype=bool)
    values = np.array(tensor.tolist(), dtype=object).reshape(tuple(tensor.shape))
    return (values < 0).astype(bool)


def bitwise_count_model(tensor):
    """np.bitwise_count's rule: the number of 1 bits in |x|, as Python's int.bit_count
    counts them (bool: its value), as a uint8 array."""
    counts = [abs(int(value)).bit_count() for value in tensor.reshape(-1).tolist()]
    return np.array(counts, dtype=np.uint8).reshape(tuple(tensor.shape))


# --------------------------------------------------------------------------
# Bit packing (docs/semantics.md): NumPy's packbits/unpackbits, and fields of 2 and 4 bits.
#
# Along the packed dim, each group of per_byte = 8 // bits consecutive elements makes one
# byte; field k of a group (k = 0 first) sits at bit shift (per_byte - 1 - k) * bits for
# bitorder "big" and k * bits for "little". A field is the element's low `bits` bits (two's
# complement: -1 gives all ones), or for packbits 1 where the element is nonzero. The last
# group is padded with zero fields. Unpacking reads the fields back, `count` of them: all
# (None), the first count (more than there are: zero fields appended), or all but -count
# (dropped from the end); signed ones sign-extended from `bits` bits. dim=None packs x
# flattened (row-major), and a 0-d x is one element: both give a 1-d result.
# Written with NumPy's array arithmetic, never np.packbits or np.unpackbits (the tests
# compare the ops with those as a second reference).


def _as_array(x):
    """x (a tensor, a NumPy array, nested lists) as a NumPy array."""
    if isinstance(x, torch.Tensor):
        return x.detach().contiguous().numpy()
    return np.asarray(x)


def _packed_dim_last(array, dim):
    """The array with the packed dim last (a 1-d array for dim None or a 0-d array) and
    the dim where the result puts it back."""
    if dim is None or array.ndim == 0:
        return array.reshape(-1), 0
    dim = dim % array.ndim
    return np.moveaxis(array, dim, -1), dim


def _shifts(bits, bitorder):
    """The shift of field k of a byte, k = 0 first."""
    per_byte = 8 // bits
    shifts = np.arange(per_byte) * bits
    return shifts[::-1] if bitorder == "big" else shifts


def pack_model(x, bits, dim=-1, bitorder="big", nonzero=False):
    """torchops.pack(x, bits, dim, bitorder) as a uint8 array; packbits with nonzero=True."""
    array, dim = _packed_dim_last(_as_array(x), dim)
    per_byte = 8 // bits
    if nonzero:
        fields = array != 0
    else:  # the low bits, two's complement for a negative value (a bool is 0 or 1)
        fields = (array.astype(np.uint8) if array.dtype == np.bool_ else array) & (2**bits - 1)
    n = array.shape[-1]
    nbytes = -(-n // per_byte)
    padded = np.zeros(array.shape[:-1] + (nbytes * per_byte,), dtype=np.uint8)
    padded[..., :n] = fields
    groups = padded.reshape(array.shape[:-1] + (nbytes, per_byte)).astype(np.uint64)
    packed = np.bitwise_or.reduce(groups << _shifts(bits, bitorder).astype(np.uint64), axis=-1)
    return np.moveaxis(packed.astype(np.uint8), -1, dim)


def packbits_model(x, dim=-1, bitorder="big"):
    """torchops.packbits(x, dim, bitorder) as a uint8 array: np.packbits(x, axis=dim, bitorder)."""
    return pack_model(x, 1, dim, bitorder, nonzero=True)


def unpacked_size(available, count):
    """The fields unpack gives of `available` along the dim, or ValueError for a count
    that drops more than there are."""
    if count is None:
        return available
    if count >= 0:
        return count
    if available + count < 0:
        raise ValueError(f"count {count} drops more than the {available} fields")
    return available + count


def unpack_model(x, bits, dim=-1, count=None, bitorder="big", signed=False):
    """torchops.unpack(x, bits, dim, count, bitorder, signed) of uint8 bytes, as a uint8
    array (int8 when signed)."""
    array, dim = _packed_dim_last(_as_array(x).astype(np.uint8), dim)
    per_byte = 8 // bits
    fields = (array[..., None].astype(np.uint64) >> _shifts(bits, bitorder).astype(np.uint64)) & (2**bits - 1)
    fields = fields.reshape(array.shape[:-1] + (array.shape[-1] * per_byte,))
    size = unpacked_size(fields.shape[-1], count)
    result = np.zeros(array.shape[:-1] + (size,), dtype=np.int16)
    kept = min(size, fields.shape[-1])
    result[..., :kept] = fields[..., :kept]
    if signed:
        result = np.where(result >= 2 ** (bits - 1), result - 2**bits, result)
    return np.moveaxis(result.astype(np.int8 if signed else np.uint8), -1, dim)


def unpackbits_model(x, dim=-1, count=None, bitorder="big"):
    """torchops.unpackbits(x, dim, count, bitorder) as a uint8 array: np.unpackbits's bits,
    zeros past the end where NumPy leaves them unwritten."""
    return unpack_model(x, 1, dim, count, bitorder)


def hamming_distance_model(x1, x2):
    """torchops.hamming_distance(x1, x2) as an int32 array: for each pair of rows, the bits in
    which their bytes differ (Python's int.bit_count of each byte's xor), batch dims broadcast."""
    a = _as_array(x1).astype(np.int64) & 0xFF
    b = _as_array(x2).astype(np.int64) & 0xFF
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    result = np.zeros(batch + (a.shape[-2], b.shape[-2]), dtype=np.int32)
    for index in np.ndindex(*result.shape):
        *where, i, j = index
        pair = zip(a[(*where, i)].tolist(), b[(*where, j)].tolist())
        result[index] = sum((p ^ q).bit_count() for p, q in pair)
    return result


def hamming_topk_model(queries, database, k):
    """torchops.hamming_topk(queries, database, k) as (int32 values, int64 indices) arrays: each
    query's database rows sorted by (distance, index), the first k."""
    distances = hamming_distance_model(queries, database)
    values = np.zeros((distances.shape[0], k), dtype=np.int32)
    indices = np.zeros((distances.shape[0], k), dtype=np.int64)
    for q, row in enumerate(distances.tolist()):
        nearest = sorted(range(len(row)), key=lambda j: (row[j], j))[:k]
        values[q] = [row[j] for j in nearest]
        indices[q] = nearest
    return values, indices
