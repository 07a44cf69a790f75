"""torchops.bitshift values, promotion, broadcasting, layouts, in-place, out=
and threading, all checked against tests/model.py (and, where they define the
same answer, against torch's and NumPy's own shifts)."""

import functools
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import model
import torchops
from conftest import (
    APIS, INT_DTYPES, NUMPY_DTYPES, OPERATION_IDS, OPERATIONS, OUT_KINDS, TORCH_SHIFT_DTYPES, WIDE_DTYPES,
    dtype_id, every_8bit_pair, expected_shift, interesting_counts, interesting_values, make_out, make_tensor,
    random_counts, random_values, shift, shift_,
)

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = [pytest.mark.usefixtures("call_path"), pytest.mark.kernels]

operations = pytest.mark.parametrize("direction, arithmetic", OPERATIONS, ids=OPERATION_IDS)
all_int_dtypes = pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)


# --------------------------------------------------------------------------
# Exhaustive 8-bit sweep: every (x, count) pair (conftest.every_8bit_pair).
@functools.lru_cache(maxsize=None)
def _expected_all_8bit(dtype, direction, arithmetic):
    xs, counts = every_8bit_pair(dtype)
    return model.shift_model(xs, counts, dtype, direction, arithmetic)


@pytest.mark.parametrize("api", APIS)
@operations
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8], ids=dtype_id)
def test_every_8bit_pair(api, dtype, direction, arithmetic, cpu_capability):
    xs, counts = every_8bit_pair(dtype)
    result = shift(api, make_tensor(xs, dtype), make_tensor(counts, dtype), direction, arithmetic)
    assert result.dtype == dtype
    assert result.tolist() == _expected_all_8bit(dtype, direction, arithmetic)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8], ids=dtype_id)
def test_every_8bit_pair_left_ignores_arithmetic_flag(dtype):
    xs, counts = every_8bit_pair(dtype)
    x, y = make_tensor(xs, dtype), make_tensor(counts, dtype)
    assert torch.equal(shift("bitshift", x, y, "LEFT", True), shift("bitshift", x, y, "LEFT", False))


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_every_8bit_pair_lower_case_direction_is_the_same(direction):
    xs, counts = every_8bit_pair(torch.int8)
    x, y = make_tensor(xs, torch.int8), make_tensor(counts, torch.int8)
    for arithmetic in (True, False):
        assert torch.equal(shift("bitshift", x, y, direction, arithmetic),
                           shift("bitshift", x, y, direction.lower(), arithmetic))


@pytest.mark.parametrize("api", ["bitshift", "paddle"])
@pytest.mark.parametrize("arithmetic", [True, False])
def test_numpy_bool_flag_is_the_bool(api, arithmetic):
    # The typed API takes a flag as torch's functions do: a bool or NumPy's (other types:
    # TypeError, tests/test_hostile.py).
    xs, counts = every_8bit_pair(torch.int8)
    expected = _expected_all_8bit(torch.int8, "RIGHT", arithmetic)
    x, y = make_tensor(xs, torch.int8), make_tensor(counts, torch.int8)
    flag = np.bool_(arithmetic)
    assert shift(api, x, y, "RIGHT", flag).tolist() == expected
    out = torch.empty_like(x)
    assert shift(api, x, y, "RIGHT", flag, out=out) is out and out.tolist() == expected
    assert shift_(api, x.clone(), y, "RIGHT", flag).tolist() == expected
    assert shift_(api, x.clone(), 3, "RIGHT", flag).tolist() == model.shift_model(xs, [3] * len(xs), torch.int8,
                                                                                   "RIGHT", arithmetic)


@pytest.mark.parametrize("api", ["bitshift", "paddle"])
@pytest.mark.parametrize("integer", [np.int8, np.uint8, np.int64, np.uint64, np.array], ids=lambda t: t.__name__)
def test_numpy_integers_are_ints(api, integer):
    # As torch's builtins take them: anything with __index__, for counts and for x.
    xs, _ = every_8bit_pair(torch.int8)
    x = make_tensor(sorted(set(xs)), torch.int8)
    for count in (0, 3, 7, 8, 100):
        expected = model.shift_model(x.tolist(), [count] * x.numel(), torch.int8, "RIGHT", False)
        assert shift(api, x, integer(count), "RIGHT", False).tolist() == expected
        out = torch.empty_like(x)
        assert shift(api, x, integer(count), "RIGHT", False, out=out) is out and out.tolist() == expected
        assert shift_(api, x.clone(), integer(count), "RIGHT", False).tolist() == expected
    counts = make_tensor(list(range(-2, 10)), torch.int8)
    expected = model.shift_model([5] * counts.numel(), counts.tolist(), torch.int8, "LEFT")
    assert shift(api, integer(5), counts, "LEFT").tolist() == expected


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_paddle_signatures_out_and_name_by_position(direction):
    # Paddle: bitwise_*_shift(x, y, is_arithmetic=True, out=None, name=None), and the same
    # parameters for the in-place forms, whose `out` can only be x.
    fn = torchops.bitwise_left_shift if direction == "LEFT" else torchops.bitwise_right_shift
    fn_ = torchops.bitwise_left_shift_ if direction == "LEFT" else torchops.bitwise_right_shift_
    xs, counts = every_8bit_pair(torch.int8)
    x, y = make_tensor(xs, torch.int8), make_tensor(counts, torch.int8)
    expected = model.shift_model(xs, counts, torch.int8, direction, False)
    out = torch.empty_like(x)
    assert fn(x, y, False, out, "a name") is out and out.tolist() == expected
    assert fn(x, y, False, None, "a name").tolist() == expected
    shifted = x.clone()
    assert fn_(shifted, y, False, shifted, "a name") is shifted and shifted.tolist() == expected
    shifted = x.clone()
    assert fn_(shifted, y, False, name="a name") is shifted and shifted.tolist() == expected
    shifted, other = x.clone(), torch.zeros_like(x)
    with pytest.raises(ValueError, match=rf"^torchops\.{fn_.__name__}: out must be None or x itself"):
        fn_(shifted, y, False, other)
    assert torch.equal(shifted, x) and not other.any()


# Python-int counts, taken by value: every 8-bit x with counts far outside
# the 8-bit range too.
PYTHON_INT_COUNTS = [-2**63, -2**40, -257, -256, -9, -8, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17,
                     31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 257, 2**31, 2**32 + 1, 2**40, 2**63 - 1]


@pytest.mark.parametrize("api", APIS)
@operations
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8], ids=dtype_id)
def test_every_8bit_value_with_python_int_counts(api, dtype, direction, arithmetic, cpu_capability):
    low, high = model.value_range(dtype)
    xs = list(range(low, high + 1))
    x = make_tensor(xs, dtype)
    for count in PYTHON_INT_COUNTS:
        result = shift(api, x, count, direction, arithmetic)
        assert result.dtype == dtype
        assert result.tolist() == model.shift_model(xs, count, dtype, direction, arithmetic), count


# --------------------------------------------------------------------------
# 16-bit: every value against the interesting counts.
def _sixteen_bit_counts(dtype):
    n = model.width(dtype)
    large = model.value_range(dtype)[1]
    return tuple(sorted({model.wrap(c, dtype) for c in [-n - 1, -1, 0, 1, n // 2, n - 1, n, n + 1, 127, 1000, large]}))


def _every_16bit_value(dtype):
    return torch.arange(-2**15, 2**15, dtype=torch.int32).to(torch.int16).view(dtype)


# 65,536 values against a dozen counts: the NumPy model (tests/model.py::shift_model_arrays,
# held to the scalar one on every 8-bit pair and on 16-bit samples in test_levels.py).
@operations
@pytest.mark.parametrize("dtype", [torch.int16, torch.uint16], ids=dtype_id)
def test_every_16bit_value_with_interesting_tensor_counts(dtype, direction, arithmetic, cpu_capability):
    x = _every_16bit_value(dtype)
    counts = _sixteen_bit_counts(dtype)
    # (len(counts), 1) against (65536,): also exercises broadcasting.
    y = make_tensor([[c] for c in counts], dtype)
    result = shift("bitshift", x, y, direction, arithmetic)
    assert result.shape == (len(counts), 2**16)
    expected = model.shift_model_arrays(x.numpy(), y.numpy(), dtype, direction, arithmetic)
    assert np.array_equal(result.numpy(), expected)


@operations
@pytest.mark.parametrize("dtype", [torch.int16, torch.uint16], ids=dtype_id)
def test_every_16bit_value_with_python_int_counts(dtype, direction, arithmetic):
    x = _every_16bit_value(dtype)
    n = model.width(dtype)
    for count in [-17, -1, 0, 1, 8, 15, 16, 17, 127, 2**16 + 1, 2**40, -2**40]:
        result = shift("bitshift", x, count, direction, arithmetic)
        # A Python int count out of [0, n) acts as any out-of-range count (docs/semantics.md).
        expected = model.shift_model_arrays(x.numpy(), count if 0 <= count < n else n, dtype, direction, arithmetic)
        assert np.array_equal(result.numpy(), expected), count


# --------------------------------------------------------------------------
# All dtypes: interesting values x interesting counts, and random samples.
@pytest.mark.parametrize("api", APIS)
@operations
@all_int_dtypes
def test_interesting_values_and_counts(api, dtype, direction, arithmetic, cpu_capability):
    values, counts = interesting_values(dtype), interesting_counts(dtype)
    xs = [[v] for v in values]  # (V, 1) against (C,)
    result = shift(api, make_tensor(xs, dtype), make_tensor(counts, dtype), direction, arithmetic)
    assert result.dtype == dtype
    assert result.tolist() == model.shift_model(xs, counts, dtype, direction, arithmetic)


@operations
@pytest.mark.parametrize("dtype", WIDE_DTYPES, ids=dtype_id)
def test_random_wide_values(dtype, direction, arithmetic, rng, cpu_capability):
    xs = random_values(dtype, 20000, rng)
    counts = random_counts(dtype, 20000, rng)
    result = shift("bitshift", make_tensor(xs, dtype), make_tensor(counts, dtype), direction, arithmetic)
    assert result.tolist() == model.shift_model(xs, counts, dtype, direction, arithmetic)


@operations
@all_int_dtypes
def test_python_int_counts_by_value(dtype, direction, arithmetic, rng):
    xs = random_values(dtype, 300, rng) + interesting_values(dtype)
    x = make_tensor(xs, dtype)
    n = model.width(dtype)
    for count in sorted({-2**63, -2**40, -n - 1, -n, -1, 0, 1, n // 2, n - 1, n, n + 1, 127, 257,
                         2**32 + 3, 2**40, 2**63 - 1}):
        result = shift("bitshift", x, count, direction, arithmetic)
        assert result.dtype == dtype
        assert result.tolist() == model.shift_model(xs, count, dtype, direction, arithmetic), count


@pytest.mark.parametrize("api", ["bitshift", "paddle"])
@operations
@all_int_dtypes
def test_python_int_counts_beyond_int64_by_value(api, dtype, direction, arithmetic):
    # "taken by its value, never wrapped": no 64-bit wrap either (2**64 + 1 is not 1).
    xs = interesting_values(dtype)
    x = make_tensor(xs, dtype)
    for count in (2**63, 2**64, 2**64 + 1, 2**64 + 3, 2**70, -2**63 - 1, -2**64 + 1, -2**70):
        result = shift(api, x, count, direction, arithmetic)
        assert result.dtype == dtype
        assert result.tolist() == model.shift_model(xs, count, dtype, direction, arithmetic), count


def _pairs(dtype):
    low, high = model.value_range(dtype)
    n = model.width(dtype)
    values = st.one_of(st.integers(low, high), st.sampled_from(interesting_values(dtype)))
    counts = st.one_of(st.integers(0, n - 1), st.integers(low, high), st.integers(-n - 2, 2 * n + 2))
    return st.lists(st.tuples(values, counts.map(lambda c: model.wrap(c, dtype))), min_size=1, max_size=64)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
def test_property_tensor_counts(dtype):
    @given(pairs=_pairs(dtype), operation=st.sampled_from(OPERATIONS), api=st.sampled_from(APIS))
    def check(pairs, operation, api):
        direction, arithmetic = operation
        xs = [p[0] for p in pairs]
        counts = [p[1] for p in pairs]
        result = shift(api, make_tensor(xs, dtype), make_tensor(counts, dtype), direction, arithmetic)
        assert result.tolist() == model.shift_model(xs, counts, dtype, direction, arithmetic)

    check()


@pytest.mark.parametrize("dtype", WIDE_DTYPES, ids=dtype_id)
def test_property_python_int_counts(dtype):
    low, high = model.value_range(dtype)

    @given(xs=st.lists(st.integers(low, high), min_size=1, max_size=32),
           count=st.integers(-2**63, 2**63 - 1) | st.integers(-70, 70),
           operation=st.sampled_from(OPERATIONS))
    def check(xs, count, operation):
        direction, arithmetic = operation
        result = shift("bitshift", make_tensor(xs, dtype), count, direction, arithmetic)
        assert result.tolist() == model.shift_model(xs, count, dtype, direction, arithmetic)

    check()


# --------------------------------------------------------------------------
# Agreement with torch and NumPy where they define the same answer.
@pytest.mark.parametrize("dtype", TORCH_SHIFT_DTYPES, ids=dtype_id)
def test_agrees_with_torch_builtin_for_in_range_counts(dtype, rng):
    n = model.width(dtype)
    x = make_tensor(random_values(dtype, 5000, rng) + interesting_values(dtype), dtype)
    y = make_tensor(rng.integers(0, n, size=x.numel()).tolist(), dtype)
    assert torch.equal(shift("bitshift", x, y, "LEFT"), torch.bitwise_left_shift(x, y))
    assert torch.equal(shift("bitshift", x, y, "RIGHT", True), torch.bitwise_right_shift(x, y))
    for count in range(n):
        assert torch.equal(shift("bitshift", x, count, "LEFT"), torch.bitwise_left_shift(x, count))
        assert torch.equal(shift("bitshift", x, count, "RIGHT"), torch.bitwise_right_shift(x, count))


def _unsigned_numpy(dtype):
    return NUMPY_DTYPES[{torch.int8: torch.uint8, torch.int16: torch.uint16, torch.int32: torch.uint32,
                         torch.int64: torch.uint64}.get(dtype, dtype)]


@all_int_dtypes
def test_agrees_with_numpy_for_in_range_counts(dtype, rng):
    n = model.width(dtype)
    np_dtype = NUMPY_DTYPES[dtype]
    xs = np.array(random_values(dtype, 5000, rng) + interesting_values(dtype), dtype=np_dtype)
    counts = rng.integers(0, n, size=xs.size).astype(np_dtype)
    x, y = torch.from_numpy(xs), torch.from_numpy(counts)

    np.testing.assert_array_equal(shift("bitshift", x, y, "LEFT").numpy(), np.left_shift(xs, counts))
    # NumPy's >> is arithmetic for signed types and logical for unsigned ones.
    np.testing.assert_array_equal(shift("bitshift", x, y, "RIGHT", True).numpy(), np.right_shift(xs, counts))
    # Logical right shift = NumPy's shift on the same bits read as unsigned.
    unsigned = _unsigned_numpy(dtype)
    logical = np.right_shift(xs.view(unsigned), counts.astype(unsigned)).view(np_dtype)
    np.testing.assert_array_equal(shift("bitshift", x, y, "RIGHT", False).numpy(), logical)


# --------------------------------------------------------------------------
# Type promotion and conversion of counts.
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("x_dtype, y_dtype, result_dtype", [
    (torch.int8, torch.int32, torch.int32),
    (torch.int32, torch.int8, torch.int32),
    (torch.uint8, torch.int8, torch.int16),
    (torch.int8, torch.uint8, torch.int16),
    (torch.int16, torch.int64, torch.int64),
    (torch.uint8, torch.int64, torch.int64),
    (torch.uint8, torch.uint8, torch.uint8),
    (torch.uint64, torch.uint64, torch.uint64),
], ids=lambda d: dtype_id(d) if isinstance(d, torch.dtype) else d)
@operations
def test_promotion_of_two_1d_tensors(api, x_dtype, y_dtype, result_dtype, direction, arithmetic, rng):
    x = make_tensor(random_values(x_dtype, 200, rng) + interesting_values(x_dtype), x_dtype)
    y = make_tensor(random_counts(y_dtype, x.numel(), rng), y_dtype)
    assert torch.result_type(x, y) == result_dtype  # documents torch's rule the contract relies on
    expected, _ = expected_shift(x, y, direction, arithmetic)
    result = shift(api, x, y, direction, arithmetic)
    assert result.dtype == result_dtype
    assert result.tolist() == expected


@pytest.mark.parametrize("api", APIS)
def test_promotion_hand_written(api):
    # int8 -1 widened to int32 before shifting: no wrap at 8 bits.
    result = shift(api, make_tensor([-1, 100], torch.int8), make_tensor([8, 1], torch.int32), "LEFT")
    assert result.dtype == torch.int32 and result.tolist() == [-256, 200]
    # uint8 200 with an int8 count: result int16, 200 << 1 = 400.
    result = shift(api, make_tensor([200], torch.uint8), make_tensor([1], torch.int8), "LEFT")
    assert result.dtype == torch.int16 and result.tolist() == [400]
    # uint8 200 is positive in int16, so even the logical/arithmetic right shifts agree.
    result = shift(api, make_tensor([200], torch.uint8), make_tensor([20], torch.int8), "RIGHT")
    assert result.dtype == torch.int16 and result.tolist() == [0]


# (x dtype, 0-d int64 count, converted count the contract implies)
ZERO_DIM_COUNTS = [
    (torch.int8, 257, 1),
    (torch.int8, -255, 1),
    (torch.int8, 2**40 + 3, 3),
    (torch.int8, 128, -128),
    (torch.uint8, -1, 255),
    (torch.uint8, 264, 8),
    (torch.uint8, 263, 7),
    (torch.int16, 65536 + 15, 15),
    (torch.int32, 2**32 + 5, 5),
    (torch.int32, 2**31, -2**31),
    (torch.uint32, -1, 2**32 - 1),
    (torch.uint32, 2**32 + 31, 31),
    (torch.uint64, -1, 2**64 - 1),
    (torch.int64, 2**63 - 1, 2**63 - 1),
]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("dtype, count, converted", ZERO_DIM_COUNTS,
                         ids=[f"{dtype_id(d)}-{c}" for d, c, _ in ZERO_DIM_COUNTS])
@operations
def test_zero_dim_count_tensor_is_converted_to_result_dtype(api, dtype, count, converted, direction, arithmetic):
    assert model.wrap(count, dtype) == converted  # the model's conversion is the C cast
    xs = interesting_values(dtype)
    y = torch.tensor(count, dtype=torch.int64)
    # A 0-d count does not take part in promotion (uint16/32/64 included).
    assert torch.result_type(make_tensor(xs, dtype), y) == dtype
    result = shift(api, make_tensor(xs, dtype), y, direction, arithmetic)
    assert result.dtype == dtype
    assert result.tolist() == model.shift_model(xs, converted, dtype, direction, arithmetic)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("x_dtype", [torch.int8, torch.uint8, torch.int32, torch.uint16], ids=dtype_id)
@pytest.mark.parametrize("count_dtype", [torch.int8, torch.uint8, torch.int16, torch.int64], ids=dtype_id)
@operations
def test_zero_dim_count_of_any_dtype(api, x_dtype, count_dtype, direction, arithmetic):
    xs = interesting_values(x_dtype)
    x = make_tensor(xs, x_dtype)
    for count in interesting_counts(count_dtype):
        y = make_tensor(count, count_dtype)
        expected, result_dtype = expected_shift(x, y, direction, arithmetic)
        assert result_dtype == x_dtype  # a 0-d count never changes the dtype of a 1-d x
        result = shift(api, x, y, direction, arithmetic)
        assert result.dtype == x_dtype
        assert result.tolist() == expected, count


@pytest.mark.parametrize("api", APIS)
def test_zero_dim_int8_count_with_int64_x_stays_int64(api):
    x = make_tensor([1, -1, 2**40], torch.int64)
    result = shift(api, x, torch.tensor(40, dtype=torch.int8), "LEFT")
    assert result.dtype == torch.int64
    assert result.tolist() == [2**40, -(2**40), 0]


@pytest.mark.parametrize("api", APIS)
def test_zero_dim_x_with_1d_count(api):
    # result_type(0-d int64, 1-d int8) is int8: x = 3 converted to int8.
    result = shift(api, torch.tensor(3, dtype=torch.int64), make_tensor([0, 1, 6, 7, 8], torch.int8), "LEFT")
    assert result.dtype == torch.int8
    assert result.tolist() == [3, 6, -64, -128, 0]
    # 0-d int64 x = 256 + 5 becomes int8 5.
    result = shift(api, torch.tensor(261), make_tensor([0, 2], torch.int8), "RIGHT")
    assert result.tolist() == [5, 1]


# --------------------------------------------------------------------------
# Python int x with a tensor count.
PYTHON_INT_X = [
    (5, torch.int8, "LEFT", True, [0, 1, 2, 4, 8], [5, 10, 20, 80, 0]),
    (-1, torch.int8, "RIGHT", True, [0, 3, 7, 8, -1], [-1, -1, -1, -1, -1]),
    (-1, torch.int8, "RIGHT", False, [0, 3, 7, 8, -1], [-1, 31, 1, 0, 0]),
    (-128, torch.int8, "RIGHT", False, [7], [1]),
    (200, torch.uint8, "LEFT", True, [1, 0], [144, 200]),
    (2**64 - 1, torch.uint64, "RIGHT", True, [63, 64, 0], [1, 0, 2**64 - 1]),
    (2**31 - 1, torch.int32, "LEFT", True, [1], [-2]),
    (1, torch.uint16, "LEFT", False, [15, 16], [32768, 0]),
]


@pytest.mark.parametrize("x, dtype, direction, arithmetic, counts, expected", PYTHON_INT_X,
                         ids=[f"{x}-{dtype_id(d)}-{di}-{a}" for x, d, di, a, _, _ in PYTHON_INT_X])
@pytest.mark.parametrize("api", ["bitshift", "paddle"])
def test_python_int_x_becomes_tensor_of_y_dtype(api, x, dtype, direction, arithmetic, counts, expected):
    result = shift(api, x, make_tensor(counts, dtype), direction, arithmetic)
    assert result.dtype == dtype
    assert result.tolist() == expected
    assert expected == model.shift_model(x, counts, dtype, direction, arithmetic)


@pytest.mark.parametrize("api", ["bitshift", "paddle"])
def test_python_int_x_broadcasts_to_y_shape(api):
    y = make_tensor([[1, 2], [3, 4]], torch.int16)
    result = shift(api, 3, y, "LEFT")
    assert result.shape == (2, 2)
    assert result.tolist() == [[6, 12], [24, 48]]
    result = shift(api, 3, torch.tensor(1, dtype=torch.int16), "LEFT")
    assert result.shape == () and result.item() == 6


# --------------------------------------------------------------------------
# Broadcasting.
BROADCAST_SHAPES = [
    ((3, 1), (1, 4)),
    ((1, 4), (3, 1)),
    ((4,), (3, 1)),
    ((3, 1), (4,)),
    ((2, 1, 3), (5, 1)),
    ((5, 1), (2, 1, 3)),
    ((1,), (7,)),
    ((7,), (1,)),
    ((2, 3, 0), (3, 1)),
    ((), (2, 3)),
    ((2, 3), ()),
]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("x_shape, y_shape", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint16, torch.int64], ids=dtype_id)
@operations
def test_broadcasting(api, x_shape, y_shape, dtype, direction, arithmetic, rng):
    xs = np.array(random_values(dtype, int(np.prod(x_shape)), rng), dtype=object).reshape(x_shape)
    ys = np.array(random_counts(dtype, int(np.prod(y_shape)), rng), dtype=object).reshape(y_shape)
    x, y = make_tensor(xs, dtype).reshape(x_shape), make_tensor(ys, dtype).reshape(y_shape)
    result = shift(api, x, y, direction, arithmetic)
    assert result.shape == torch.broadcast_shapes(x_shape, y_shape)
    assert result.tolist() == model.shift_model(xs, ys, dtype, direction, arithmetic)


# --------------------------------------------------------------------------
# Layouts: values right, and the output's strides equal those of
# torch.bitwise_and(x, y), PyTorch's own pointwise op on the same inputs.
def _contiguous(t):
    return t


def _transposed(t):
    return t.transpose(0, 1).contiguous().transpose(0, 1) if t.dim() >= 2 else t


def _every_other_column(t):
    # Same shape, but a strided view into a wider tensor with an offset.
    wide = torch.zeros(t.shape[:-1] + (2 * t.shape[-1] + 1,), dtype=t.dtype)
    wide[..., 1::2] = t
    return wide[..., 1::2]


def _channels_last(t):
    return t.contiguous(memory_format=torch.channels_last)


def _permuted(t):
    order = list(range(t.dim()))[::-1]
    inverse = [int(i) for i in np.argsort(order)]
    return t.permute(order).contiguous().permute(inverse)


def _expanded(t):
    # A stride-0 view with t's values (t must be constant along dim 0).
    return t[:1].expand(t.shape)


LAYOUTS = [
    # (name, x shape, y shape, x layout, y layout)
    ("contiguous", (3, 4), (3, 4), _contiguous, _contiguous),
    ("x_transposed", (3, 4), (3, 4), _transposed, _contiguous),
    ("y_transposed", (3, 4), (3, 4), _contiguous, _transposed),
    ("both_transposed", (5, 6), (5, 6), _transposed, _transposed),
    ("x_strided_offset", (4, 5), (4, 5), _every_other_column, _contiguous),
    ("both_strided", (4, 5), (4, 5), _every_other_column, _every_other_column),
    ("x_transposed_y_row", (3, 4), (4,), _transposed, _contiguous),
    ("x_expanded", (4, 6), (4, 6), _expanded, _contiguous),
    ("channels_last_both", (2, 3, 4, 5), (2, 3, 4, 5), _channels_last, _channels_last),
    ("channels_last_x", (2, 3, 4, 5), (2, 3, 4, 5), _channels_last, _contiguous),
    ("channels_last_x_broadcast_y", (2, 3, 4, 5), (1, 3, 1, 1), _channels_last, _contiguous),
    ("zero_dim_both", (), (), _contiguous, _contiguous),
    ("zero_dim_x", (), (5,), _contiguous, _contiguous),
    ("zero_dim_y", (2, 5), (), _transposed, _contiguous),
    ("empty", (0, 3), (0, 3), _contiguous, _contiguous),
    ("empty_broadcast", (0, 3), (3,), _contiguous, _contiguous),
    ("empty_transposed", (3, 0), (3, 0), _transposed, _contiguous),
    ("six_dims", (2, 1, 3, 1, 2, 2), (1, 2, 1, 3, 1, 2), _contiguous, _contiguous),
    ("six_dims_permuted", (2, 3, 2, 2, 3, 2), (2, 3, 2, 2, 3, 2), _permuted, _permuted),
    ("six_dims_permuted_x", (2, 3, 2, 2, 3, 2), (2, 3, 2, 2, 3, 2), _permuted, _contiguous),
]
LAYOUT_DTYPES = [torch.int8, torch.uint16, torch.int32, torch.uint64]


def _layout_tensors(layout, dtype, rng):
    _, x_shape, y_shape, x_layout, y_layout = layout
    xs = np.array(random_values(dtype, int(np.prod(x_shape)), rng), dtype=object).reshape(x_shape)
    ys = np.array(random_counts(dtype, int(np.prod(y_shape)), rng), dtype=object).reshape(y_shape)
    if x_layout is _expanded:
        xs = np.broadcast_to(xs[:1], x_shape)
    x = x_layout(make_tensor(xs.tolist(), dtype).reshape(x_shape))
    y = y_layout(make_tensor(ys.tolist(), dtype).reshape(y_shape))
    assert x.tolist() == xs.tolist() and y.tolist() == ys.tolist()
    # Object arrays, not lists: a list loses an empty tensor's shape.
    return x, y, xs, ys


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
@pytest.mark.parametrize("dtype", LAYOUT_DTYPES, ids=dtype_id)
@operations
def test_layouts_tensor_count(api, layout, dtype, direction, arithmetic, rng):
    x, y, xs, ys = _layout_tensors(layout, dtype, rng)
    result = shift(api, x, y, direction, arithmetic)
    reference = torch.bitwise_and(x, y)
    assert result.shape == reference.shape
    assert result.stride() == reference.stride()
    assert result.tolist() == model.shift_model(xs, ys, dtype, direction, arithmetic)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
@pytest.mark.parametrize("dtype", LAYOUT_DTYPES, ids=dtype_id)
@operations
def test_layouts_python_int_count(api, layout, dtype, direction, arithmetic, rng):
    x, _, xs, _ = _layout_tensors(layout, dtype, rng)
    count = int(rng.integers(0, model.width(dtype)))
    result = shift(api, x, count, direction, arithmetic)
    reference = torch.bitwise_and(x, 1)
    assert result.shape == reference.shape
    assert result.stride() == reference.stride()
    assert result.tolist() == model.shift_model(xs, count, dtype, direction, arithmetic)


def test_result_does_not_alias_inputs():
    x = make_tensor([1, 2, 3], torch.int32)
    y = make_tensor([0, 0, 0], torch.int32)
    result = shift("bitshift", x, y, "LEFT")
    assert result.data_ptr() not in (x.data_ptr(), y.data_ptr())
    result = shift("bitshift", x, 0, "LEFT")
    assert result.data_ptr() != x.data_ptr()


# --------------------------------------------------------------------------
# In place.
INPLACE_LAYOUTS = [layout for layout in LAYOUTS
                   if torch.broadcast_shapes(layout[1], layout[2]) == layout[1] and layout[3] is not _expanded]


@pytest.mark.parametrize("api", ["paddle", "ops"])
@pytest.mark.parametrize("layout", INPLACE_LAYOUTS, ids=[layout[0] for layout in INPLACE_LAYOUTS])
@pytest.mark.parametrize("dtype", LAYOUT_DTYPES, ids=dtype_id)
@operations
def test_in_place_tensor_count(api, layout, dtype, direction, arithmetic, rng):
    x, y, xs, ys = _layout_tensors(layout, dtype, rng)
    functional = shift("bitshift", x, y, direction, arithmetic)
    stride, data_ptr = x.stride(), x.data_ptr()
    returned = shift_(api, x, y, direction, arithmetic)
    assert returned is x
    assert x.stride() == stride and x.data_ptr() == data_ptr and x.dtype == dtype
    assert torch.equal(x, functional)
    assert x.tolist() == model.shift_model(xs, ys, dtype, direction, arithmetic)


@pytest.mark.parametrize("api", ["paddle", "ops"])
@pytest.mark.parametrize("layout", INPLACE_LAYOUTS, ids=[layout[0] for layout in INPLACE_LAYOUTS])
@pytest.mark.parametrize("dtype", LAYOUT_DTYPES, ids=dtype_id)
@operations
def test_in_place_python_int_count(api, layout, dtype, direction, arithmetic, rng):
    x, _, xs, _ = _layout_tensors(layout, dtype, rng)
    for count in (1, model.width(dtype) - 1, model.width(dtype), -1, 2**40):
        expected = model.shift_model(xs, count, dtype, direction, arithmetic)
        returned = shift_(api, x, count, direction, arithmetic)
        assert returned is x
        assert x.tolist() == expected, count
        xs = np.array(expected, dtype=object).reshape(x.shape)


@pytest.mark.parametrize("api", ["paddle", "ops"])
def test_in_place_leaves_the_rest_of_the_storage_alone(api):
    base = make_tensor(list(range(1, 21)), torch.int16).reshape(4, 5)
    before = base.clone()
    view = base[1:3, ::2]
    expected = model.shift_model(view.tolist(), 2, torch.int16, "LEFT")
    shift_(api, view, make_tensor([2, 2, 2], torch.int16), "LEFT")
    assert view.tolist() == expected
    untouched = torch.ones_like(base, dtype=torch.bool)
    untouched[1:3, ::2] = False
    assert torch.equal(base[untouched], before[untouched])


@pytest.mark.parametrize("api", ["paddle", "ops"])
def test_in_place_promotion_that_keeps_x_dtype(api):
    # int32 x with a 0-d int64 count: result dtype int32 = x's, so it is allowed.
    x = make_tensor([1, -1, 3], torch.int32)
    shift_(api, x, torch.tensor(2**32 + 4), "LEFT")
    assert x.dtype == torch.int32 and x.tolist() == [16, -16, 48]
    # int64 x with an int8 1-d count: result int64.
    x = make_tensor([1, -1, 3], torch.int64)
    shift_(api, x, make_tensor([1, 2, 3], torch.int8), "LEFT")
    assert x.tolist() == [2, -4, 24]


# --------------------------------------------------------------------------
# out=
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
@pytest.mark.parametrize("count_kind", ["tensor", "python_int"])
@pytest.mark.parametrize("out_kind", OUT_KINDS)
@operations
def test_out(api, layout, count_kind, out_kind, direction, arithmetic, rng):
    dtype = torch.int16
    x, y, xs, ys = _layout_tensors(layout, dtype, rng)
    if count_kind == "python_int":
        y = ys = 5
    shape = torch.broadcast_shapes(x.shape, torch.Size() if count_kind == "python_int" else y.shape)
    out, builtin_out = (make_out(out_kind, shape, dtype, 7) for _ in range(2))
    with warnings.catch_warnings():
        # Resizing a non-empty out warns in PyTorch; the contract only asks for the resize.
        warnings.simplefilter("ignore")
        torch.bitwise_and(x, y, out=builtin_out)
        returned = shift(api, x, y, direction, arithmetic, out=out)
    assert returned is out
    assert out.dtype == dtype
    assert out.shape == builtin_out.shape == shape
    assert out.stride() == builtin_out.stride()
    assert out.tolist() == model.shift_model(xs, ys, dtype, direction, arithmetic)


@pytest.mark.parametrize("api", APIS)
@operations
def test_out_may_be_x_itself(api, direction, arithmetic):
    # Full overlap of out and an input is fine for PyTorch's builtins too.
    xs = interesting_values(torch.int16)
    counts = [c % 20 - 2 for c in range(len(xs))]
    x, y = make_tensor(xs, torch.int16), make_tensor(counts, torch.int16)
    returned = shift(api, x, y, direction, arithmetic, out=x)
    assert returned is x
    assert x.tolist() == model.shift_model(xs, counts, torch.int16, direction, arithmetic)


@pytest.mark.parametrize("api", ["paddle", "ops"])
@operations
def test_in_place_with_x_as_its_own_count(api, direction, arithmetic):
    xs = interesting_values(torch.int8)
    x = make_tensor(xs, torch.int8)
    returned = shift_(api, x, x, direction, arithmetic)
    assert returned is x
    assert x.tolist() == model.shift_model(xs, xs, torch.int8, direction, arithmetic)


@pytest.mark.parametrize("api", APIS)
def test_out_with_promoted_dtype(api):
    x = make_tensor([-1, 3], torch.int8)
    y = make_tensor([9, 1], torch.int32)
    out = torch.empty(2, dtype=torch.int32)
    returned = shift(api, x, y, "LEFT", out=out)
    assert returned is out
    assert out.tolist() == [-512, 6]


@pytest.mark.parametrize("api", ["bitshift", "paddle"])
def test_out_with_python_int_x(api):
    out = torch.empty(3, dtype=torch.uint8)
    returned = shift(api, 200, make_tensor([0, 1, 8], torch.uint8), "LEFT", out=out)
    assert returned is out
    assert out.tolist() == [200, 144, 0]


# --------------------------------------------------------------------------
# Threads: the same answers with 1 and 2 intra-op threads on a big tensor.
@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.uint64], ids=dtype_id)
@operations
def test_thread_count_does_not_change_results(dtype, direction, arithmetic, rng, restore_num_threads):
    size = 150_001
    xs = random_values(dtype, size, rng)
    counts = random_counts(dtype, size, rng)
    x, y = make_tensor(xs, dtype), make_tensor(counts, dtype)
    x2d = x[:150_000].reshape(300, 500).t()  # non-contiguous
    y2d = y[:150_000].reshape(500, 300)

    results = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        results.append((
            shift("bitshift", x, y, direction, arithmetic),
            shift("bitshift", x, 3, direction, arithmetic),
            shift("bitshift", x2d, y2d, direction, arithmetic),
        ))
    for single, double in zip(*results):
        assert torch.equal(single, double)

    sample = slice(0, size, 101)
    assert results[0][0][sample].tolist() == model.shift_model(xs[sample], counts[sample], dtype, direction, arithmetic)
    assert results[0][1][sample].tolist() == model.shift_model(xs[sample], 3, dtype, direction, arithmetic)
