"""Shared dtype lists, tensor builders and call helpers for the torchops tests.

Test modules import the plain helpers with `from conftest import ...`; the
fixtures are picked up by pytest as usual.
"""

import os
import re
import sys
import zlib

import numpy as np
import pytest
import torch
from hypothesis import settings

# Make `import model` / `from conftest import ...` work whatever pytest's
# import mode is.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import model  # noqa: E402

settings.register_profile("torchops", deadline=None, max_examples=40, derandomize=True)
settings.load_profile("torchops")

# --------------------------------------------------------------------------
# dtype lists
SIGNED_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64]
UNSIGNED_DTYPES = [torch.uint8, torch.uint16, torch.uint32, torch.uint64]
INT_DTYPES = SIGNED_DTYPES + UNSIGNED_DTYPES
WIDE_DTYPES = [torch.int32, torch.int64, torch.uint32, torch.uint64]
# Integer dtypes torch's own bitwise_left_shift / bitwise_right_shift support on CPU.
TORCH_SHIFT_DTYPES = SIGNED_DTYPES + [torch.uint8]
FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
COMPLEX_DTYPES = [torch.complex64, torch.complex128]
# dtypes bitshift refuses with TypeError.
NON_INTEGER_DTYPES = [torch.bool] + FLOAT_DTYPES + COMPLEX_DTYPES
# dtypes signbit refuses with TypeError ("complex and other dtypes").
SIGNBIT_REFUSED_DTYPES = COMPLEX_DTYPES + [torch.float8_e4m3fn, torch.float8_e5m2]

NUMPY_DTYPES = {
    torch.int8: np.int8, torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64,
    torch.uint8: np.uint8, torch.uint16: np.uint16, torch.uint32: np.uint32, torch.uint64: np.uint64,
}

DIRECTIONS = ["LEFT", "RIGHT", "left", "right"]
# (direction, arithmetic) pairs: the three distinct operations plus the
# lower-case spellings and the redundant LEFT/arithmetic=False.
OPERATIONS = [("LEFT", True), ("RIGHT", True), ("RIGHT", False)]
OPERATION_IDS = ["left", "right_arith", "right_logical"]

# Which public entry point a test goes through.
#   bitshift: torchops.bitshift(x, y, direction, arithmetic)
#   paddle:   torchops.bitwise_{left,right}_shift(x, y, is_arithmetic)
#   ops:      torch.ops.torchops.bitshift (overload picked by the dispatcher)
APIS = ["bitshift", "paddle", "ops"]


def dtype_id(dtype):
    return str(dtype).replace("torch.", "")


# c10 spells dtypes differently from Python ("Float" vs "float32"); an error
# message naming either is fine.
_C10_NAMES = {
    torch.bool: "Bool", torch.float16: "Half", torch.bfloat16: "BFloat16",
    torch.float32: "Float", torch.float64: "Double",
    torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble",
    torch.int8: "Char", torch.int16: "Short", torch.int32: "Int", torch.int64: "Long",
    torch.uint8: "Byte", torch.uint16: "UInt16", torch.uint32: "UInt32", torch.uint64: "UInt64",
    torch.float8_e4m3fn: "Float8_e4m3fn", torch.float8_e5m2: "Float8_e5m2",
}


def dtype_pattern(dtype):
    """Regex matching an error message that names `dtype`."""
    names = {dtype_id(dtype), _C10_NAMES[dtype]}
    return "(" + "|".join(re.escape(name) for name in sorted(names)) + ")"


# --------------------------------------------------------------------------
# building tensors from Python ints (works for uint16/32/64 too)
def make_tensor(values, dtype):
    """A tensor of `dtype` holding the Python ints `values` (any nesting,
    0-d for a bare int).  Out-of-range values are a test bug and raise."""
    low, high = model.value_range(dtype)
    flat = np.asarray(values, dtype=object).reshape(-1)
    assert all(low <= int(v) <= high for v in flat), f"value out of range for {dtype}"
    array = np.array(values, dtype=object).astype(NUMPY_DTYPES[dtype])
    return torch.from_numpy(np.ascontiguousarray(array)).clone()


def interesting_values(dtype):
    """Boundaries, small values and alternating bit patterns of `dtype`."""
    n = model.width(dtype)
    low, high = model.value_range(dtype)
    candidates = {low, low + 1, high - 1, high, 0, 1, 2, 3, 5, 7, -1, -2, -3, -45, -102}
    candidates |= {1 << k for k in range(n)} | {-(1 << k) for k in range(n)}
    candidates |= {(1 << k) - 1 for k in range(n)}
    pattern_55 = int("01" * (n // 2), 2)
    candidates |= {pattern_55, pattern_55 << 1, pattern_55 | (1 << (n - 1))}
    return sorted({model.wrap(v, dtype) for v in candidates})


def interesting_counts(dtype):
    """Counts around the edges of the valid range [0, n), as values of `dtype`
    (a tensor count has the result dtype)."""
    n = model.width(dtype)
    low, high = model.value_range(dtype)
    candidates = {-n - 1, -n, -1, 0, 1, n // 2, n - 1, n, n + 1, 127, low, high, low + 1, high - 1}
    return sorted({model.wrap(v, dtype) for v in candidates})


def random_values(dtype, size, rng):
    """`size` random values of `dtype` (uniform over all bit patterns), as Python ints."""
    low, high = model.value_range(dtype)
    values = rng.integers(low, high, size=size, endpoint=True, dtype=NUMPY_DTYPES[dtype])
    return values.tolist()


def random_counts(dtype, size, rng):
    """`size` counts of `dtype`: mostly in [0, n), some just outside, some anywhere."""
    n = model.width(dtype)
    in_range = rng.integers(0, n, size=size).tolist()
    near = rng.integers(-n - 2, 2 * n + 2, size=size).tolist()
    anywhere = random_values(dtype, size, rng)
    choice = rng.integers(0, 4, size=size).tolist()
    counts = [anywhere[i] if c == 0 else near[i] if c == 1 else in_range[i] for i, c in enumerate(choice)]
    return [model.wrap(c, dtype) for c in counts]


def expected_shift(x, y, direction, arithmetic=True):
    """Model answer for a tensor-tensor call: result dtype by torch's
    promotion, both operands converted to it, then the rule."""
    result_dtype = torch.result_type(x, y)
    xs = [model.wrap(v, result_dtype) for v in np.asarray(x.tolist(), dtype=object).reshape(-1)]
    ys = [model.wrap(v, result_dtype) for v in np.asarray(y.tolist(), dtype=object).reshape(-1)]
    xs = np.array(xs, dtype=object).reshape(tuple(x.shape))
    ys = np.array(ys, dtype=object).reshape(tuple(y.shape))
    return model.shift_model(xs, ys, result_dtype, direction, arithmetic), result_dtype


def assert_matches(result, expected, dtype):
    assert isinstance(result, torch.Tensor)
    assert result.dtype == dtype
    assert result.tolist() == expected


# --------------------------------------------------------------------------
# calling the ops through each entry point
def shift(api, x, y, direction, arithmetic=True, out=None):
    import torchops

    if api == "bitshift":
        return torchops.bitshift(x, y, direction, arithmetic, out=out)
    if api == "paddle":
        fn = torchops.bitwise_left_shift if direction.upper() == "LEFT" else torchops.bitwise_right_shift
        return fn(x, y, is_arithmetic=arithmetic, out=out)
    if api == "ops":
        if out is None:
            return torch.ops.torchops.bitshift(x, y, direction, arithmetic)
        overload = torch.ops.torchops.bitshift.out if isinstance(y, torch.Tensor) else torch.ops.torchops.bitshift.Scalar_out
        assert overload(x, y, direction, arithmetic, out=out) is None
        return out
    raise AssertionError(api)


def shift_(api, x, y, direction, arithmetic=True):
    """In-place shift; returns whatever the entry point returns (ops: x)."""
    import torchops

    if api in ("bitshift", "paddle"):
        fn = torchops.bitwise_left_shift_ if direction.upper() == "LEFT" else torchops.bitwise_right_shift_
        return fn(x, y, is_arithmetic=arithmetic)
    if api == "ops":
        assert torch.ops.torchops.bitshift_(x, y, direction, arithmetic) is None
        return x
    raise AssertionError(api)


def snapshot(*tensors):
    """Clones plus metadata, to check later that nothing was touched."""
    return [(t, t.clone(), t.shape, t.stride(), t.dtype) for t in tensors if isinstance(t, torch.Tensor)]


def assert_unchanged(snapshots):
    for tensor, clone, shape, stride, dtype in snapshots:
        assert tensor.dtype == dtype
        assert tensor.shape == shape
        assert tensor.stride() == stride
        assert torch.equal(tensor, clone)


# --------------------------------------------------------------------------
# fixtures
@pytest.fixture
def rng(request):
    """A NumPy generator seeded from the test's id, so every test is reproducible."""
    seed = zlib.crc32(request.node.nodeid.encode())
    return np.random.default_rng(seed)


@pytest.fixture
def restore_num_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)
