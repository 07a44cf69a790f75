"""Every kernel level against the model, where SIMD code goes wrong: sizes around each
vector width (tails), unaligned starts, strided rows, counts around the bit width, and a
size large enough to be split across threads."""
import itertools
import math

import numpy as np
import pytest
import torch

import model
import torchops
from conftest import (
    FLOAT_DTYPES, FLOAT_FORMATS, INT_DTYPES, OPERATION_IDS, OPERATIONS, dtype_id, interesting_counts,
    interesting_values, make_tensor, only_compiled_levels, random_counts, random_values,
)

pytestmark = pytest.mark.kernels

WIDTHS = [8, 16, 32, 64]
SIZES = sorted({0, 1} | {s for w in WIDTHS for s in (w - 1, w, w + 1, 2 * w - 1, 2 * w + 1)})
PARALLEL_SIZE = 3 * 32768 + 5  # beyond TensorIterator's grain: split across threads, odd tail


def pattern(values, size, salt):
    """`size` values cycling through `values` with a stride coprime to their number, so
    that neighbours (and so lanes of a vector) differ."""
    step = next(s for s in (7, 5, 3, 11, 13) if math.gcd(s, len(values)) == 1)
    return [values[(i * step + salt) % len(values)] for i in range(size)]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_tensor_counts_at_every_size_and_offset(cpu_capability, dtype, direction, arithmetic, rng):
    values, counts = interesting_values(dtype), interesting_counts(dtype)
    for size, offset in itertools.product(SIZES + [PARALLEL_SIZE], (0, 1)):
        inputs = [(pattern(values, size + offset, 0), pattern(counts, size + offset, 3))]
        if size != PARALLEL_SIZE:  # random values and counts too, where the model is quick
            inputs.append((random_values(dtype, size + offset, rng), random_counts(dtype, size + offset, rng)))
        for xs, cs in inputs:
            # A view that starts `offset` elements in: unaligned loads for every vector.
            x = make_tensor(xs, dtype)[offset:]
            y = make_tensor(cs, dtype)[offset:]
            got = torchops.bitshift(x, y, direction, arithmetic)
            want = model.shift_model(xs[offset:], cs[offset:], dtype, direction, arithmetic)
            assert got.tolist() == want, (size, offset)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_scalar_counts_at_every_size(cpu_capability, dtype, direction, arithmetic):
    n = model.width(dtype)
    values = interesting_values(dtype)
    for size in SIZES + [PARALLEL_SIZE]:
        xs = pattern(values, size + 1, 0)
        x = make_tensor(xs, dtype)[1:]
        for count in (-1, 0, 1, n - 1, n, n + 1, 2**40):
            got = torchops.bitshift(x, count, direction, arithmetic)
            want = model.shift_model(xs[1:], [count] * size, dtype, direction, arithmetic)
            assert got.tolist() == want, (size, count)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_strided_and_broadcast_rows(cpu_capability, dtype, direction, arithmetic):
    values, counts = interesting_values(dtype), interesting_counts(dtype)
    rows, cols = 5, 2 * 64 + 3
    xs = pattern(values, rows * cols * 2, 1)
    x = make_tensor(xs, dtype).reshape(rows, 2 * cols)[:, ::2]  # inner stride 2
    x_values = np.array(xs, dtype=object).reshape(rows, 2 * cols)[:, ::2]
    cs = pattern(counts, cols, 2)
    y_row = make_tensor(cs, dtype)  # broadcast along rows
    y_col = make_tensor(cs[:rows], dtype).reshape(rows, 1)  # one count per row: stride 0 inside a row
    for y, y_values in ((y_row, np.broadcast_to(np.array(cs, dtype=object), (rows, cols))),
                        (y_col, np.broadcast_to(np.array(cs[:rows], dtype=object).reshape(rows, 1), (rows, cols)))):
        got = torchops.bitshift(x, y, direction, arithmetic)
        want = np.array(model.shift_model(list(x_values.flat), list(y_values.flat), dtype, direction, arithmetic),
                        dtype=object).reshape(rows, cols)
        assert got.tolist() == want.tolist()
        # The transposed view walks the same data with a non-unit inner stride.
        got_t = torchops.bitshift(x.t(), y.expand(rows, cols).t(), direction, arithmetic)
        assert got_t.tolist() == want.T.tolist()


def bit_patterns(dtype, size):
    """Floats and ints as raw bits: both signs of zero, infinities, NaNs, subnormals."""
    int_dtype = {torch.float16: torch.int16, torch.bfloat16: torch.int16,
                 torch.float32: torch.int32, torch.float64: torch.int64}.get(dtype, dtype)
    n = model.width(int_dtype)
    raw = [model.wrap(v, int_dtype) for v in (0, 1 << (n - 1), -1, 1, (1 << (n - 1)) - 1, 0x7C00, 0xFC00,
                                               0x7FC0, 0xFFC0, 0x7F800000, 0xFF800000, 3 << (n - 2))]
    return make_tensor(pattern(raw, size, 0), int_dtype).view(dtype)


def random_bits(dtype, size, rng):
    """Floats and ints of random bit patterns (uniform over all of them)."""
    int_dtype = FLOAT_FORMATS[dtype][2] if dtype in FLOAT_FORMATS else dtype
    return make_tensor(random_values(int_dtype, size, rng), int_dtype).view(dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=dtype_id)
def test_signbit_at_every_size_offset_and_stride(cpu_capability, dtype, rng):
    for size in SIZES + [PARALLEL_SIZE]:
        for x in (bit_patterns(dtype, 2 * size + 1), random_bits(dtype, 2 * size + 1, rng)):
            for view in (x[1 : size + 1], x[1::2]):
                assert torchops.signbit(view).tolist() == model.signbit_model(view).tolist(), size


STREAMING_BYTES = 32 << 20  # csrc/ops/bitshift.cpp: kStreamingMinBytes


@only_compiled_levels
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint16, torch.int32, torch.int64], ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_outputs_large_enough_for_streaming_stores(cpu_capability, dtype, direction, arithmetic):
    """Outputs from 32 MiB up are written with non-temporal stores: an aligned body between
    an unaligned head and a partial tail. Compared with the portable level (itself checked
    against the model above), which never streams."""
    n = STREAMING_BYTES // model.width(dtype) * 8 + 37
    values, counts = interesting_values(dtype), interesting_counts(dtype)
    x = make_tensor(pattern(values, 4099, 0), dtype).repeat(n // 4099 + 1)[:n]
    y = make_tensor(pattern(counts, 4099, 3), dtype).repeat(n // 4099 + 1)[:n]
    out = torch.empty(n + 1, dtype=dtype)[1:]  # starts one element past an aligned address
    got = {
        "tensor": torchops.bitshift(x, y, direction, arithmetic, out=out).clone(),
        "scalar": torchops.bitshift(x, 3, direction, arithmetic),
        "broadcast": torchops.bitshift(x.reshape(-1, 1)[:-37].reshape(8, -1), y[:8].reshape(8, 1), direction, arithmetic),
    }
    torch.ops.torchops._set_cpu_capability("default")
    want = {
        "tensor": torchops.bitshift(x, y, direction, arithmetic),
        "scalar": torchops.bitshift(x, 3, direction, arithmetic),
        "broadcast": torchops.bitshift(x.reshape(-1, 1)[:-37].reshape(8, -1), y[:8].reshape(8, 1), direction, arithmetic),
    }
    for case in got:
        assert torch.equal(got[case].view(torch.uint8), want[case].view(torch.uint8)), case


# --------------------------------------------------------------------------
# Layouts through the CPU loops' row driver (csrc/ops/common.h, run_rows): rows handed to
# the kernels in place with their strides, and tiles for strided operands (or, at a level
# whose shift by a count tensor is a scalar loop, those operands read in place with their
# element strides: kernels.h's strided_shift_in_place), at sizes that
# span several tiles (4096 bytes of the widest element; 64 bytes of rows when an operand
# is read across its rows) with partial ones at both edges, and on both sides of the
# row length where a count per row goes to the scalar kernel (1024 bytes). Checked
# against the vectorized model, itself held to the scalar one on every 8-bit pair here.
def numpy_values(tensor):
    return tensor.contiguous().numpy()


def random_bit_tensor(dtype, shape, generator):
    raw = torch.randint(0, 256, (math.prod(shape) * dtype.itemsize,), dtype=torch.uint8, generator=generator)
    return raw.view(dtype).reshape(shape)


def random_count_tensor(dtype, shape, generator):
    """Counts around the width, negative ones for signed dtypes, and each extreme."""
    n = model.width(dtype)
    low = -3 if dtype.is_signed else 0
    counts = torch.randint(low, n + 3, shape, generator=generator).to(dtype)
    info = torch.iinfo(dtype)
    counts.view(-1)[:2] = torch.tensor([info.min, info.max], dtype=dtype) if counts.numel() >= 2 else counts.view(-1)[:2]
    return counts


def layout_cases(dtype, generator):
    """(name, x, count (a tensor or a Python int), out (None: functional; or the tensor to write))."""
    def bits(*shape):
        return random_bit_tensor(dtype, shape, generator)

    def counts(*shape):
        return random_count_tensor(dtype, shape, generator)

    yield "x transposed", bits(131, 150).t(), counts(150, 131), None
    yield "count transposed", bits(150, 131), counts(131, 150).t(), None
    yield "out transposed", bits(150, 131), counts(150, 131), torch.empty(131, 150, dtype=dtype).t()
    yield "x transposed, out transposed", bits(131, 150).t(), counts(150, 131), torch.empty(131, 150, dtype=dtype).t()
    yield "x every other column, long rows", bits(3, 10002)[:, 1::2], counts(3, 5001), None
    yield "x every other column, short rows", bits(400, 14)[:, ::2], counts(400, 7), None
    yield "x every third column", bits(40, 300)[:, ::3], counts(40, 100), None
    # Rows of 256 bytes and more take the count once per row (the per-row kernel); shorter
    # rows are merged, the count repeated along each.
    per_row_from = 256 // (model.width(dtype) // 8)
    for cols in (7, per_row_from - 1, per_row_from, 300, 1100):
        yield f"count per row, rows of {cols}", bits(70, cols), counts(70, 1), None
    yield "count per row, x transposed", bits(300, 70).t(), counts(70, 1), None
    yield "count per row, x transposed, long rows", bits(1100, 70).t(), counts(70, 1), None
    yield "count per row, out transposed", bits(70, 1100), counts(70, 1), torch.empty(1100, 70, dtype=dtype).t()
    yield "count per row, x every other column", bits(70, 2200)[:, ::2], counts(70, 1), None
    yield "count per column, rows of 7", bits(600, 7), counts(7), None
    # Rows of one or two full vector steps (and a partial one) by a repeated count row, whose
    # vectors the vector levels keep in registers: 256, 300 and 600 bytes.
    for row_bytes in (256, 300, 600):
        cols = row_bytes // (model.width(dtype) // 8)
        yield f"count per column, rows of {cols}", bits(40, cols), counts(cols), None
    yield "channels_last, per-channel count, 300 bytes a pixel", bits(2, 300 // (model.width(dtype) // 8), 3, 5).contiguous(
        memory_format=torch.channels_last), counts(300 // (model.width(dtype) // 8), 1, 1), None
    channels_last = bits(3, 37, 5, 7).contiguous(memory_format=torch.channels_last)
    yield "channels_last, per-channel count", channels_last, counts(1, 37, 1, 1), None
    rgb = bits(2, 3, 50, 41).contiguous(memory_format=torch.channels_last)
    yield "channels_last RGB, per-channel count", rgb, counts(3, 1, 1), None
    yield "x short rows sliced", bits(300, 10)[:, :7], counts(300, 7), None
    yield "x expanded along rows", bits(1, 333).expand(50, 333), counts(50, 333), None
    yield "x expanded along each row", bits(50, 1).expand(50, 333), counts(50, 333), None
    yield "out rows sliced", bits(60, 333), counts(60, 333), torch.empty(60, 340, dtype=dtype)[:, 2:335]
    # Every array at its own step (x86-64's portable level reads these in place).
    yield "out every other column", bits(60, 333), counts(60, 333), torch.empty(60, 666, dtype=dtype)[:, ::2]
    yield "x and count transposed, out contiguous", bits(131, 150).t(), counts(131, 150).t(), torch.empty(150, 131,
                                                                                                         dtype=dtype)
    yield "0-d count, x transposed", bits(131, 150).t(), counts(), None
    yield "Python-int count, x transposed", bits(131, 150).t(), 3, None
    yield "Python-int count, x every other column", bits(3, 10002)[:, 1::2], model.width(dtype) - 1, None
    yield "Python-int count, out transposed", bits(150, 131), 1, torch.empty(131, 150, dtype=dtype).t()
    yield "Python-int count out of range, x transposed", bits(131, 150).t(), model.width(dtype), None


def test_the_vectorized_model_is_the_scalar_one():
    for dtype in (torch.int8, torch.uint8):
        values = torch.arange(256, dtype=torch.int16).to(dtype)
        xs, cs = (v.numpy() for v in torch.cartesian_prod(values, values).unbind(1))
        for direction, arithmetic in OPERATIONS:
            got = model.shift_model_arrays(xs, cs, dtype, direction, arithmetic).tolist()
            assert got == model.shift_model(xs.tolist(), cs.tolist(), dtype, direction, arithmetic), (dtype, direction)
    # 16 bits (the every-value sweeps of test_bitshift.py): every 257th value, every count
    # class (in range, the edges, negative, beyond the width).
    for dtype in (torch.int16, torch.uint16):
        xs = torch.arange(-2**15, 2**15, 257, dtype=torch.int32).to(torch.int16).view(dtype).numpy()[:, None]
        cs = np.array([model.wrap(c, dtype) for c in (-17, -1, 0, 1, 7, 8, 15, 16, 17, 127, 1000)])
        cs = cs.astype(xs.dtype)[None, :]
        for direction, arithmetic in OPERATIONS:
            got = model.shift_model_arrays(xs, cs, dtype, direction, arithmetic).tolist()
            assert got == model.shift_model(xs.tolist(), cs.tolist(), dtype, direction, arithmetic), (dtype, direction)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_layouts_through_the_row_driver(cpu_capability, dtype, direction, arithmetic, restore_num_threads):
    generator = torch.Generator().manual_seed(model.width(dtype))
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for name, x, count, out in layout_cases(dtype, generator):
            counts = count if isinstance(count, int) else numpy_values(count)
            want = model.shift_model_arrays(numpy_values(x), counts, dtype, direction, arithmetic)
            if out is None:
                got = torchops.bitshift(x, count, direction, arithmetic)
                reference = torch.bitwise_and(x, count)
                assert got.stride() == reference.stride(), name
            else:
                got = torchops.bitshift(x, count, direction, arithmetic, out=out)
                assert got is out, name
            assert np.array_equal(numpy_values(got), want), (name, threads)
            if not x.is_contiguous() and x.stride()[-1] != 0 and 0 not in x.stride():
                in_place = x.clone(memory_format=torch.preserve_format)  # a transposed x stays transposed
                strides = in_place.stride()
                torch.ops.torchops.bitshift_(in_place, count, direction, arithmetic)
                assert in_place.stride() == strides and np.array_equal(numpy_values(in_place), want), (name, "in place")
        large = random_bit_tensor(dtype, (300, 300), generator).t()  # split across threads mid-row
        large_counts = random_count_tensor(dtype, (300, 300), generator)
        want = model.shift_model_arrays(numpy_values(large), numpy_values(large_counts), dtype, direction, arithmetic)
        assert np.array_equal(numpy_values(torchops.bitshift(large, large_counts, direction, arithmetic)), want)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=dtype_id)
def test_signbit_layouts_through_the_row_driver(cpu_capability, dtype, rng, restore_num_threads):
    def bits(*shape):
        return random_bits(dtype, math.prod(shape), rng).reshape(shape)

    cases = [("x transposed", bits(131, 150).t(), None),
             ("x every other column", bits(400, 14)[:, ::2], None),
             ("x expanded along each row", bits(50, 1).expand(50, 333), None),
             ("out transposed", bits(150, 131), torch.empty(131, 150, dtype=torch.bool).t()),
             ("x split across threads mid-row", bits(300, 300).t(), None)]
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for name, x, out in cases:
            got = torchops.signbit(x) if out is None else torchops.signbit(x, out=out)
            assert np.array_equal(got.contiguous().numpy(), model.signbit_model(x.contiguous())), (name, threads)
