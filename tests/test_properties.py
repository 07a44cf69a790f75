"""Property-based tests: random dtypes, shapes, layouts and counts, every
result checked against the model of the contract (tests/model.py).

What is drawn (docs/semantics.md sections 2-7):
  * dtypes: every test is parametrized over x's dtype (all eight integer
    types for the shifts; every float type, every integer type and bool for
    signbit), so each dtype gets its share of examples; a tensor count draws
    its own dtype (mixed pairs promote, or are refused with TypeError when
    torch.result_type cannot promote them);
  * shapes: 0-d to 6-d, empty dims, size-1 dims that broadcast, sometimes one
    long dim (vector loops, their tails, the 256-element blocks of strided rows);
  * layouts: contiguous, sliced with steps, permuted (transposed), channels_last,
    expanded (stride 0), storage offsets, and all of these mixed;
  * values: the whole range of the dtype (raw bit patterns for floats: NaNs of
    both signs, -0.0, infinities, subnormals);
  * counts: tensors over the whole range of their dtype (weighted to the edges
    of [0, n)), Python ints of any size (far outside int64 too);
  * the functional, in-place and out= forms through every API (conftest.APIS).

Every example runs all three operations (left, arithmetic right, logical
right; upper- or lower-case direction, a drawn flag for the left shift) at
every kernel level the CPU supports (switched inside the test).  Results are
compared with tests/model.py; inputs must be left untouched, in-place writes
must stay inside x's elements, new outputs must have the strides PyTorch's own
pointwise ops give.

Profiles: by default (CI) a fixed, derandomized run (no example database) of
CI_EXAMPLES examples per test and dtype; TORCHOPS_HYPOTHESIS=long runs
LONG_EXAMPLES random examples per test and dtype (a failure prints a blob to
reproduce it with @reproduce_failure).  Run with --hypothesis-show-statistics
to see what was drawn (events: layouts, dtypes, outcomes, counts).
"""

import dataclasses
import math
import os
import re
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import torchops

import model
from conftest import (
    FLOAT_DTYPES, INT_DTYPES, NUMPY_DTYPES, assert_unchanged, dtype_id, dtype_pattern, expected_shift,
    interesting_counts, interesting_values, make_tensor, shift, shift_, snapshot,
)

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = pytest.mark.usefixtures("call_path")

# --------------------------------------------------------------------------
# profiles (registered under names of their own: conftest's "torchops" profile
# stays the loaded one for the other test files)
CI_EXAMPLES = 25
LONG_EXAMPLES = 500
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
               HealthCheck.function_scoped_fixture]

settings.register_profile("torchops-properties-ci", max_examples=CI_EXAMPLES, derandomize=True, database=None,
                          deadline=None, suppress_health_check=_SUPPRESSED, print_blob=True)
settings.register_profile("torchops-properties-long", max_examples=LONG_EXAMPLES, derandomize=False, database=None,
                          deadline=None, suppress_health_check=_SUPPRESSED, print_blob=True)
PROFILE_NAME = ("torchops-properties-long" if os.environ.get("TORCHOPS_HYPOTHESIS") == "long"
                else "torchops-properties-ci")
PROPERTY_SETTINGS = settings.get_profile(PROFILE_NAME)

# --------------------------------------------------------------------------
# kernel levels
LEVELS = list(torch.ops.torchops._supported_cpu_capabilities())


def at_every_level(check):
    """Call check(level) with the kernel level forced to each supported one;
    restores the level that was active."""
    before = torch.ops.torchops._cpu_capability()
    try:
        for level in LEVELS:
            torch.ops.torchops._set_cpu_capability(level)
            assert torch.ops.torchops._cpu_capability() == level
            check(level)
    finally:
        torch.ops.torchops._set_cpu_capability(before)


# --------------------------------------------------------------------------
# shapes
MAX_NDIM = 6
MAX_NUMEL = 600     # the model is plain Python: keep each example cheap
LONG_DIM = 300      # longer than every vector width and than the 256-element block of strided rows


def one_in(draw, k):
    """True with probability about 1/k.  (Hypothesis favours the ends of an
    integer range, 0 above all, so the rare branch is a value in the middle.)"""
    return draw(st.integers(1, 2 * k)) in (k, k + 1)


@st.composite
def shapes(draw, min_ndim=0, max_ndim=MAX_NDIM):
    """0-d to 6-d shapes of small dims (1 frequent, 0 now and then), sometimes with one
    long dim so the vector loops and their tails both run."""
    ndim = draw(st.integers(min_ndim, max_ndim))
    dims = draw(st.lists(st.sampled_from([1, 1, 2, 2, 3, 4, 5]), min_size=ndim, max_size=ndim))
    if ndim and one_in(draw, 2):
        dims[draw(st.integers(0, ndim - 1))] = draw(st.integers(6, LONG_DIM))
    if ndim and one_in(draw, 10):
        dims[draw(st.integers(0, ndim - 1))] = 0
    while math.prod(dims) > MAX_NUMEL:
        largest = dims.index(max(dims))
        dims[largest] //= 2
    return tuple(dims)


@st.composite
def broadcast_operand_shape(draw, shape, full_percent=50):
    """A shape that broadcasts to `shape`: trailing dims, some of them 1."""
    if draw(st.integers(1, 100)) <= full_percent:
        return tuple(shape)
    ndim = draw(st.integers(0, len(shape)))
    trailing = shape[len(shape) - ndim:]
    return tuple(1 if draw(st.booleans()) else d for d in trailing)


# --------------------------------------------------------------------------
# layouts
LAYOUTS = ["contiguous", "sliced", "permuted", "channels_last", "expanded", "offset", "mixed"]
MAX_STORAGE = 2000


@dataclasses.dataclass(frozen=True)
class Layout:
    kind: str
    order: tuple      # dims from the outermost in memory to the innermost
    steps: tuple      # a slice step per dim
    offset: int       # storage offset of the first element
    expanded: tuple   # dims that are stride-0 views of a size-1 dim


@st.composite
def layouts(draw, shape, allow_expand=True):
    ndim = len(shape)
    kinds = [k for k in LAYOUTS if allow_expand or k != "expanded"]
    kind = draw(st.sampled_from(kinds))
    order, steps, offset, expanded = list(range(ndim)), [1] * ndim, 0, set()
    if kind in ("sliced", "mixed"):
        steps = draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=ndim, max_size=ndim))
        offset = draw(st.integers(0, 3))
    if kind in ("permuted", "mixed"):
        order = draw(st.permutations(range(ndim)))
    if kind == "channels_last":
        # N, C, H, W stored as N, H, W, C (and the 3-d form for 5-d); other ranks:
        # the channels dim (or the first) innermost.
        channels = 1 if ndim >= 2 else 0
        order = [d for d in range(ndim) if d != channels] + [channels] if ndim else []
    if kind in ("expanded", "mixed") and allow_expand and ndim:
        expanded = draw(st.sets(st.sampled_from(range(ndim)), min_size=1 if kind == "expanded" else 0))
    if kind == "offset":
        offset = draw(st.integers(1, 7))
    return Layout(kind, tuple(order), tuple(steps), offset, tuple(sorted(expanded)))


def storage_geometry(shape, layout):
    """(base shape, strides, storage size) of a view of `shape` with `layout`
    (before the stride-0 expansion)."""
    ndim = len(shape)
    base_shape = [1 if d in layout.expanded else shape[d] for d in range(ndim)]
    steps = list(layout.steps)
    padded = [max(base_shape[d], 1) * steps[d] for d in range(ndim)]
    if math.prod(padded) > MAX_STORAGE:  # too many gaps: keep one stepped dim, the innermost
        steps = [1] * ndim
        steps[layout.order[-1]] = 2
        padded = [max(base_shape[d], 1) * steps[d] for d in range(ndim)]
    strides = [0] * ndim
    inner = 1
    for d in reversed(layout.order):
        strides[d] = inner * steps[d]
        inner *= padded[d]
    return tuple(base_shape), tuple(strides), layout.offset + inner + 1


# --------------------------------------------------------------------------
# tensors built from drawn Python ints
@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """How to build a tensor: `storage` (the Python ints of the whole storage,
    gaps included), read as `dtype`, viewed with `layout`."""
    dtype: torch.dtype
    shape: tuple
    layout: Layout
    storage: tuple

    def build(self):
        base_shape, strides, size = storage_geometry(self.shape, self.layout)
        assert len(self.storage) == size
        if self.dtype in NUMPY_DTYPES:
            flat = torch.from_numpy(np.array(self.storage, dtype=object).astype(NUMPY_DTYPES[self.dtype]))
        elif self.dtype == torch.bool:
            flat = torch.from_numpy(np.array(self.storage, dtype=np.uint8)).view(torch.bool)
        else:  # floats: the drawn ints are raw bit patterns
            unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}[self.dtype.itemsize]
            flat = torch.from_numpy(np.array(self.storage, dtype=object).astype(unsigned)).view(self.dtype)
        flat = flat.clone()  # storage of its own, resizable (an out= may be resized)
        view = flat.as_strided(base_shape, strides, self.layout.offset)
        out = view.expand(self.shape)
        assert out.shape == tuple(self.shape) and out.dtype == self.dtype
        return out

    def __repr__(self):
        base_shape, strides, _ = storage_geometry(self.shape, self.layout)
        return (f"TensorSpec({str(self.dtype)}, shape={self.shape}, layout={self.layout.kind}, "
                f"strides={strides}, offset={self.layout.offset}, expanded={self.layout.expanded}, "
                f"storage={self.storage})")


@st.composite
def storages(draw, size, elements):
    """`size` Python ints: up to 64 drawn one by one; longer storages repeat the
    drawn ones in a drawn random order (cheap, yet every lane sees varied values)."""
    pool = draw(st.lists(elements, min_size=min(size, 64), max_size=min(size, 64)))
    if size <= len(pool):
        return tuple(pool[:size])
    seed = draw(st.integers(0, 2**32 - 1))
    index = np.random.default_rng(seed).integers(0, len(pool), size=size)
    return tuple(pool[i] for i in index)


def value_elements(dtype):
    """x values: the whole range, with the boundaries and bit patterns often."""
    low, high = model.value_range(dtype)
    return st.one_of(st.sampled_from(interesting_values(dtype)), st.integers(low, high))


def count_elements(dtype):
    """Tensor counts of `dtype`: mostly around [0, n), some wrapping when
    converted to a narrower result dtype, some anywhere in the range."""
    n = model.width(dtype)
    low, high = model.value_range(dtype)

    def clip(v):
        return min(max(v, low), high)

    return st.one_of(
        st.integers(0, n - 1),
        st.integers(-n - 2, 2 * n + 2).map(clip),
        st.builds(lambda k, m: clip(k + 256 * m), st.integers(-2, 66), st.integers(-3, 3)),
        st.sampled_from(interesting_counts(dtype)),
        st.integers(low, high),
    )


FLOAT_SPECIAL_BITS = {
    2: [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x0001, 0x8001, 0x7F80, 0xFF80, 0x7FC0,
        0xFFC0, 0x7F81, 0xFF81, 0x3C00, 0xBC00],
    4: [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001,
        0x00000001, 0x80000001, 0x3F800000, 0xBF800000, 0x7FFFFFFF, 0xFFFFFFFF],
    8: [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
        0x7FF0000000000001, 0xFFF0000000000001, 1, (1 << 63) | 1, 0x3FF0000000000000, 0xBFF0000000000000,
        (1 << 64) - 1, (1 << 63) - 1],
}


def signbit_elements(dtype):
    if dtype == torch.bool:
        return st.integers(0, 1)
    if dtype in NUMPY_DTYPES:
        return value_elements(dtype)
    bits = dtype.itemsize * 8
    return st.one_of(st.sampled_from(FLOAT_SPECIAL_BITS[dtype.itemsize]), st.integers(0, (1 << bits) - 1))


@st.composite
def tensors(draw, dtype, shape, elements, allow_expand=True):
    layout = draw(layouts(shape, allow_expand=allow_expand))
    _, _, size = storage_geometry(shape, layout)
    return TensorSpec(dtype, tuple(shape), layout, draw(storages(size, elements)))


# --------------------------------------------------------------------------
# counts given as Python ints: any size
def python_counts():
    return st.one_of(
        st.integers(-2, 70),
        st.integers(0, 63),
        st.sampled_from([-1, 0, 7, 8, 15, 16, 31, 32, 63, 64, 65, 127, 128, 255, 256, 257, 264, -255, -256,
                         2**31, 2**32 + 1, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1, 2**64, 2**64 + 1,
                         -2**63, -2**63 - 1, 2**100, -2**100, 10**40]),
        st.integers(-2**64, 2**64),
        st.integers(-2**200, 2**200),
    )


# torch.ops.torchops takes a count through c10::Scalar: [-2^63, 2^64) (section 4.2)
OPS_COUNT_RANGE = (-2**63, 2**64 - 1)

APIS = ["bitshift", "paddle", "ops"]
IN_PLACE_APIS = ["paddle", "ops"]


# --------------------------------------------------------------------------
# checks
def assert_values(result, expected, dtype, shape, where):
    assert result.dtype == dtype, where
    assert tuple(result.shape) == tuple(shape), where
    got = result.tolist()
    if got != expected:
        # A short message: pytest's diff of two long nested lists takes minutes.
        flat_got = np.asarray(got, dtype=object).reshape(-1).tolist()
        flat_want = np.asarray(expected, dtype=object).reshape(-1).tolist()
        wrong = [i for i, (a, b) in enumerate(zip(flat_got, flat_want)) if a != b]
        shown = ", ".join(f"[{i}] got {flat_got[i]} want {flat_want[i]}" for i in wrong[:5])
        raise AssertionError(f"{where}: {len(wrong)} of {len(flat_want)} elements wrong: {shown}")


def result_dtype_or_none(x, y):
    try:
        return torch.result_type(x, y)
    except RuntimeError:
        return None


# Float stand-ins that reproduce which operands of a promoting call get converted
# (TensorIterator copies a converted input first, and the copy's strides can
# differ, which changes the output's layout): keyed by (x converted, y converted).
_STAND_INS = {(False, False): (torch.float32, torch.float32), (True, False): (torch.float32, torch.float64),
              (False, True): (torch.float64, torch.float32), (True, True): (torch.float16, torch.bfloat16)}


def reference_strides(inputs, shape, result_dtype=None):
    """The strides PyTorch's own pointwise op (torch.add / torch.neg on float
    tensors of the same sizes and strides, converted the same way) gives
    (section 8: a new output has the layout PyTorch's pointwise ops give)."""
    if len(inputs) == 1:
        result = torch.neg(torch.empty_strided(inputs[0].shape, inputs[0].stride(), dtype=torch.float32))
    else:
        converted = tuple(t.dtype != result_dtype for t in inputs)
        floats = [torch.empty_strided(t.shape, t.stride(), dtype=d) for t, d in zip(inputs, _STAND_INS[converted])]
        assert (torch.result_type(*floats) != floats[0].dtype) == converted[0]
        result = floats[0] + floats[1]
    assert tuple(result.shape) == tuple(shape)
    return result.stride()


def count_to_tensor_if_int(x, like):
    """Section 4.3: a Python-int x becomes a tensor of y's dtype."""
    if isinstance(x, torch.Tensor):
        return x
    return make_tensor(x, like.dtype)


# --------------------------------------------------------------------------
# strategies for whole calls
@st.composite
def tensor_count_calls(draw, x_dtype):
    """x (a tensor, or sometimes a Python int) and a tensor count y that
    broadcast to a common shape; y of x's dtype or of any other."""
    shape = draw(shapes())
    y_dtype = draw(st.sampled_from(INT_DTYPES)) if one_in(draw, 3) else x_dtype
    y = draw(tensors(y_dtype, draw(broadcast_operand_shape(shape)), count_elements(y_dtype)))
    if one_in(draw, 8):
        low, high = model.value_range(y_dtype)
        x = draw(st.one_of(st.sampled_from(interesting_values(y_dtype)), st.integers(low - 3, high + 3),
                           st.integers(-2**70, 2**70)))
    else:
        x = draw(tensors(x_dtype, draw(broadcast_operand_shape(shape)), value_elements(x_dtype)))
    return x, y


def build(spec):
    return spec.build() if isinstance(spec, TensorSpec) else spec


def describe_result(expected):
    """An event: whether the expected values (of all operations) are more than
    the fills 0 and -1 that every out-of-range count gives."""
    flat = np.concatenate([np.asarray(e, dtype=object).reshape(-1) for e in expected.values()])
    event("result: " + ("empty" if flat.size == 0 else "only 0/-1" if set(flat.tolist()) <= {0, -1} else "varied"))


def describe(name, spec):
    """Hypothesis events (shown with --hypothesis-show-statistics): what was drawn."""
    if not isinstance(spec, TensorSpec):
        event(f"{name}: Python int")
        return
    event(f"{name}: {spec.layout.kind}")
    event(f"{name}: ndim={len(spec.shape)}")
    numel = math.prod(spec.shape)
    event(f"{name}: numel " + ("0" if numel == 0 else "1" if numel == 1 else "2-63" if numel < 64 else ">=64"))


@st.composite
def out_specs(draw, dtype, shape):
    """An out= tensor for a result of `shape` and `dtype`:
    right_shape (any layout but expanded), empty (resized silently), or
    wrong_shape (resized with PyTorch's UserWarning)."""
    kind = draw(st.sampled_from(["right_shape", "right_shape", "empty", "wrong_shape"]))
    if kind == "right_shape":
        return kind, draw(tensors(dtype, shape, st.just(0x5A), allow_expand=False))
    if kind == "empty":
        layout = Layout("contiguous", (0,), (1,), 0, ())
        return kind, TensorSpec(dtype, (0,), layout, (0x5A,) * storage_geometry((0,), layout)[2])
    wrong = draw(shapes(min_ndim=1, max_ndim=3).filter(lambda s: 0 not in s and s != tuple(shape)))
    return kind, draw(tensors(dtype, wrong, st.just(0x5A), allow_expand=False))


RESIZE_WARNING = re.compile(r"resized")


def assert_resize_warnings(out_kind, resize_warnings):
    """Only a non-empty out of the wrong shape may be resized with a warning.
    (Section 5 says that one warns with a Python UserWarning; through
    torch.ops PyTorch prints its C++ warning to stderr instead, so its
    presence is not asserted here.)"""
    if out_kind != "wrong_shape":
        assert not resize_warnings, [str(w.message) for w in resize_warnings]


def call_recording_warnings(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [w for w in caught if issubclass(w.category, UserWarning) and RESIZE_WARNING.search(str(w.message))]


# --------------------------------------------------------------------------
# the three operations, every example
@st.composite
def operation_spellings(draw):
    """How this example spells its operations: upper or lower case, and the
    (ineffective) flag of the left shift.  Every example runs all three
    operations: drawn one per example, Hypothesis's preference for the first
    choice would leave the right shifts of some dtypes nearly untested."""
    return draw(st.sampled_from(["upper", "lower"])), draw(st.booleans())


def operations(spelling):
    case, left_flag = spelling
    spell = str.upper if case == "upper" else str.lower
    return [(spell("LEFT"), left_flag), (spell("RIGHT"), True), (spell("RIGHT"), False)]


def at_every_level_and_operation(spelling, check):
    """check(level, direction, arithmetic) for every kernel level and operation."""
    at_every_level(lambda level: [check(level, d, a) for d, a in operations(spelling)])


def describe_dtypes(x_dtype, y_dtype=None, result_dtype=None):
    event(f"x dtype: {dtype_name(x_dtype)}")
    if y_dtype is not None:
        event(f"y dtype: {dtype_name(y_dtype)}")
    if result_dtype is not None:
        event(f"result dtype: {dtype_name(result_dtype)}")


def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


# --------------------------------------------------------------------------
# tensor counts
def draw_tensor_count_call(data, x_dtype, api):
    """Draws and describes x and y for the tensor-count tests; returns (x_spec, y_spec,
    api, y0, x_does_not_fit). The ops API takes tensors only: with a Python-int x (a
    feature of the Python functions, section 4.3) the call goes through bitshift instead.
    x_does_not_fit: a Python-int x outside y's dtype, which must be a ValueError."""
    x_spec, y_spec = data.draw(tensor_count_calls(x_dtype), label="x, y")
    describe("x", x_spec)
    describe("y", y_spec)
    python_int_x = not isinstance(x_spec, TensorSpec)
    if api == "ops" and python_int_x:
        api = "bitshift"
    y0 = y_spec.build()
    low, high = model.value_range(y0.dtype)
    return x_spec, y_spec, api, y0, python_int_x and not low <= x_spec <= high


@pytest.mark.parametrize("x_dtype", INT_DTYPES, ids=dtype_id)
@PROPERTY_SETTINGS
@given(data=st.data(), api=st.sampled_from(APIS), spelling=operation_spellings())
def test_tensor_count_functional(x_dtype, data, api, spelling):
    x_spec, y_spec, api, y0, x_does_not_fit = draw_tensor_count_call(data, x_dtype, api)
    if x_does_not_fit:
        def check_too_big(level, direction, arithmetic):
            y = y_spec.build()
            before = snapshot(y)
            with pytest.raises(ValueError, match=re.escape(str(x_spec))):
                shift(api, x_spec, y, direction, arithmetic)
            assert_unchanged(before)
        event("outcome: ValueError (x does not fit)")
        at_every_level_and_operation(spelling, check_too_big)
        return
    x0 = count_to_tensor_if_int(build(x_spec), y0)
    dtype = result_dtype_or_none(x0, y0)
    shape = torch.broadcast_shapes(x0.shape, y0.shape)
    describe_dtypes(x0.dtype, y0.dtype, dtype)
    if dtype is None:
        def check_refused(level, direction, arithmetic):
            x, y = build(x_spec), y_spec.build()
            before = snapshot(x, y)
            with pytest.raises(TypeError) as info:
                shift(api, x, y, direction, arithmetic)
            assert re.search(dtype_pattern(x0.dtype), str(info.value)), str(info.value)
            assert re.search(dtype_pattern(y0.dtype), str(info.value)), str(info.value)
            assert_unchanged(before)
        event("outcome: TypeError (no common dtype)")
        at_every_level_and_operation(spelling, check_refused)
        return
    event("outcome: computed")
    expected = {op: expected_shift(x0, y0, *op)[0] for op in operations(spelling)}
    describe_result(expected)
    strides = reference_strides([x0, y0], shape, dtype)  # a Python-int x counts as a 0-d tensor

    def check(level, direction, arithmetic):
        x, y = build(x_spec), y_spec.build()
        before = snapshot(x, y)
        result = shift(api, x, y, direction, arithmetic)
        where = f"level={level}, {direction}, arithmetic={arithmetic}"
        assert_values(result, expected[direction, arithmetic], dtype, shape, where)
        assert result.stride() == strides, f"{where}: output layout"
        assert_unchanged(before)

    at_every_level_and_operation(spelling, check)


@pytest.mark.parametrize("x_dtype", INT_DTYPES, ids=dtype_id)
@PROPERTY_SETTINGS
@given(data=st.data(), api=st.sampled_from(APIS), spelling=operation_spellings())
def test_tensor_count_out(x_dtype, data, api, spelling):
    x_spec, y_spec, api, y0, x_does_not_fit = draw_tensor_count_call(data, x_dtype, api)
    if x_does_not_fit:
        out_kind, out_spec = data.draw(out_specs(y0.dtype, tuple(y0.shape)))

        def check_too_big(level, direction, arithmetic):
            y, out = y_spec.build(), out_spec.build()
            before = snapshot(y, out)
            with pytest.raises(ValueError, match=re.escape(str(x_spec))):
                shift(api, x_spec, y, direction, arithmetic, out=out)
            assert_unchanged(before)

        event("outcome: ValueError (x does not fit)")
        at_every_level_and_operation(spelling, check_too_big)
        return
    x0 = count_to_tensor_if_int(build(x_spec), y0)
    dtype = result_dtype_or_none(x0, y0)
    describe_dtypes(x0.dtype, y0.dtype, dtype)
    shape = torch.broadcast_shapes(x0.shape, y0.shape)
    out_kind, out_spec = data.draw(out_specs(dtype or x0.dtype, shape))
    if dtype is None:
        def check_refused(level, direction, arithmetic):
            x, y, out = build(x_spec), y_spec.build(), out_spec.build()
            before = snapshot(x, y, out)
            with pytest.raises(TypeError):
                shift(api, x, y, direction, arithmetic, out=out)
            assert_unchanged(before)
        event("outcome: TypeError (no common dtype)")
        at_every_level_and_operation(spelling, check_refused)
        return
    event(f"outcome: computed, out {out_kind}")
    expected = {op: expected_shift(x0, y0, *op)[0] for op in operations(spelling)}
    describe_result(expected)

    def check(level, direction, arithmetic):
        x, y, out = build(x_spec), y_spec.build(), out_spec.build()
        before = snapshot(x, y)
        out_stride, out_pointer = out.stride(), out.data_ptr()
        result, resize_warnings = call_recording_warnings(lambda: shift(api, x, y, direction, arithmetic, out=out))
        where = f"level={level}, {direction}, arithmetic={arithmetic}, out={out_kind}"
        assert result is out
        assert_values(out, expected[direction, arithmetic], dtype, shape, where)
        if out_kind == "right_shape":
            assert (out.stride(), out.data_ptr()) == (out_stride, out_pointer), "a right-shaped out was reallocated"
        assert_resize_warnings(out_kind, resize_warnings)
        assert_unchanged(before)

    at_every_level_and_operation(spelling, check)


@st.composite
def in_place_calls(draw, x_dtype):
    """x (never expanded) and a count y that mostly fits in place: y's shape
    broadcasts to x's and its dtype usually keeps x's."""
    x_shape = draw(shapes())
    x = draw(tensors(x_dtype, x_shape, value_elements(x_dtype), allow_expand=False))
    if one_in(draw, 6):  # grows x: must be refused
        ones = [d for d, size in enumerate(x_shape) if size == 1]
        if ones and draw(st.booleans()):
            grown = list(x_shape)
            grown[draw(st.sampled_from(ones))] = draw(st.integers(2, 4))
            y_shape = tuple(grown)
        else:
            y_shape = (draw(st.integers(1, 3)),) + tuple(x_shape)
    else:
        y_shape = draw(broadcast_operand_shape(x_shape))
    y_dtype = draw(st.sampled_from(INT_DTYPES)) if one_in(draw, 4) else x_dtype
    y = draw(tensors(y_dtype, y_shape, count_elements(y_dtype)))
    return x, y


def x_storage_outside_view(x):
    """The storage elements that are not elements of the view x (gaps of a
    sliced view, the offset, the tail): an in-place write must not touch them."""
    if x.numel() == 0:
        return None
    flat = torch.empty(0, dtype=x.dtype).set_(x.untyped_storage(), 0, (x.untyped_storage().nbytes() // x.itemsize,))
    mask = torch.ones(flat.numel(), dtype=torch.bool)
    index = torch.as_strided(torch.arange(flat.numel()), x.shape, x.stride(), x.storage_offset())
    mask[index.reshape(-1)] = False
    return flat[mask].tolist()


@pytest.mark.parametrize("x_dtype", INT_DTYPES, ids=dtype_id)
@PROPERTY_SETTINGS
@given(data=st.data(), api=st.sampled_from(IN_PLACE_APIS), spelling=operation_spellings())
def test_tensor_count_in_place(x_dtype, data, api, spelling):
    call = data.draw(in_place_calls(x_dtype), label="x, y")
    x_spec, y_spec = call
    describe("x", x_spec)
    describe("y", y_spec)
    x0, y0 = x_spec.build(), y_spec.build()
    dtype = result_dtype_or_none(x0, y0)
    describe_dtypes(x0.dtype, y0.dtype, dtype)
    shape = torch.broadcast_shapes(x0.shape, y0.shape)
    if dtype is None or dtype != x0.dtype or tuple(shape) != tuple(x0.shape):
        exception = TypeError if dtype is None else RuntimeError
        event(f"outcome: refused with {exception.__name__}")

        def check_refused(level, direction, arithmetic):
            x, y = x_spec.build(), y_spec.build()
            before = snapshot(x, y)
            with pytest.raises(exception):
                shift_(api, x, y, direction, arithmetic)
            assert_unchanged(before)

        at_every_level_and_operation(spelling, check_refused)
        return
    event("outcome: computed in place")
    expected = {op: expected_shift(x0, y0, *op)[0] for op in operations(spelling)}
    describe_result(expected)

    def check(level, direction, arithmetic):
        x, y = x_spec.build(), y_spec.build()
        x_meta = (x.shape, x.stride(), x.storage_offset(), x.data_ptr())
        storage_before = x_storage_outside_view(x)
        before = snapshot(y)
        result = shift_(api, x, y, direction, arithmetic)
        where = f"level={level}, {direction}, arithmetic={arithmetic}"
        assert result is x
        assert (x.shape, x.stride(), x.storage_offset(), x.data_ptr()) == x_meta
        assert_values(x, expected[direction, arithmetic], dtype, shape, where)
        assert x_storage_outside_view(x) == storage_before, f"{where}: wrote outside x's elements"
        assert_unchanged(before)

    at_every_level_and_operation(spelling, check)


# --------------------------------------------------------------------------
# Python-int counts
@st.composite
def scalar_count_calls(draw, dtype, allow_expand=True):
    shape = draw(shapes())
    x = draw(tensors(dtype, shape, value_elements(dtype), allow_expand=allow_expand))
    kind = draw(st.integers(1, 10))
    if kind <= 4:
        count = draw(st.integers(0, model.width(dtype) - 1))
    elif kind <= 8:
        count = draw(python_counts())
    else:  # beyond what int64 and uint64 hold
        count = draw(st.sampled_from([1, -1])) * draw(st.sampled_from([2**64, 2**64 + 1, 2**64 + 63, 2**100, 2**200])
                                                      | st.integers(2**64, 2**300))
    return x, count


def ops_refuses_count(api, count):
    return api == "ops" and not OPS_COUNT_RANGE[0] <= count <= OPS_COUNT_RANGE[1]


def describe_count(count, dtype):
    n = model.width(dtype)
    event("count: " + ("in [0, n)" if 0 <= count < n else "in [-2^63, 2^64)" if -2**63 <= count < 2**64
                       else "beyond int64/uint64"))


@pytest.mark.parametrize("x_dtype", INT_DTYPES, ids=dtype_id)
@PROPERTY_SETTINGS
@given(data=st.data(), api=st.sampled_from(APIS), spelling=operation_spellings())
def test_python_int_count_functional_and_out(x_dtype, data, api, spelling):
    """A Python int count is taken by value (section 4.2), whatever its size
    through the Python functions; torch.ops raises OverflowError outside the
    range c10::Scalar holds."""
    x_spec, count = data.draw(scalar_count_calls(x_dtype), label="x, count")
    describe("x", x_spec)
    x0 = x_spec.build()
    describe_dtypes(x0.dtype)
    describe_count(count, x0.dtype)
    shape = tuple(x0.shape)
    with_out = data.draw(st.booleans(), label="with_out")
    out_kind, out_spec = data.draw(out_specs(x0.dtype, shape)) if with_out else (None, None)
    expected = {op: model.shift_model(x0.tolist(), count, x0.dtype, *op) for op in operations(spelling)}
    describe_result(expected)
    strides = reference_strides([x0], shape)

    def check(level, direction, arithmetic):
        x = x_spec.build()
        out = out_spec.build() if with_out else None
        before = snapshot(x)
        if ops_refuses_count(api, count):
            before_out = snapshot(out)
            with pytest.raises(OverflowError):
                shift(api, x, count, direction, arithmetic, out=out)
            assert_unchanged(before + before_out)
            return
        result, resize_warnings = call_recording_warnings(lambda: shift(api, x, count, direction, arithmetic, out=out))
        where = f"level={level}, {direction}, arithmetic={arithmetic}, out={out_kind}"
        assert_values(result, expected[direction, arithmetic], x0.dtype, shape, where)
        if with_out:
            assert result is out
            assert_resize_warnings(out_kind, resize_warnings)
        else:
            assert result.stride() == strides, f"{where}: output layout"
        assert_unchanged(before)

    at_every_level_and_operation(spelling, check)


@pytest.mark.parametrize("x_dtype", INT_DTYPES, ids=dtype_id)
@PROPERTY_SETTINGS
@given(data=st.data(), api=st.sampled_from(IN_PLACE_APIS), spelling=operation_spellings())
def test_python_int_count_in_place(x_dtype, data, api, spelling):
    x_spec, count = data.draw(scalar_count_calls(x_dtype, allow_expand=False), label="x, count")
    describe("x", x_spec)
    x0 = x_spec.build()
    describe_dtypes(x0.dtype)
    describe_count(count, x0.dtype)
    expected = {op: model.shift_model(x0.tolist(), count, x0.dtype, *op) for op in operations(spelling)}
    describe_result(expected)

    def check(level, direction, arithmetic):
        x = x_spec.build()
        x_meta = (x.shape, x.stride(), x.storage_offset(), x.data_ptr())
        storage_before = x_storage_outside_view(x)
        if ops_refuses_count(api, count):
            before = snapshot(x)
            with pytest.raises(OverflowError):
                shift_(api, x, count, direction, arithmetic)
            assert_unchanged(before)
            return
        result = shift_(api, x, count, direction, arithmetic)
        where = f"level={level}, {direction}, arithmetic={arithmetic}"
        assert result is x
        assert (x.shape, x.stride(), x.storage_offset(), x.data_ptr()) == x_meta
        assert_values(x, expected[direction, arithmetic], x0.dtype, x0.shape, where)
        assert x_storage_outside_view(x) == storage_before, f"{where}: wrote outside x's elements"

    at_every_level_and_operation(spelling, check)


# --------------------------------------------------------------------------
# signbit
SIGNBIT_DTYPES = FLOAT_DTYPES + INT_DTYPES + [torch.bool]


@st.composite
def signbit_inputs(draw, dtype):
    return draw(tensors(dtype, draw(shapes()), signbit_elements(dtype)))


@pytest.mark.parametrize("x_dtype", SIGNBIT_DTYPES, ids=dtype_id)
@PROPERTY_SETTINGS
@given(data=st.data(), api=st.sampled_from(["python", "ops"]))
def test_signbit(x_dtype, data, api):
    x_spec = data.draw(signbit_inputs(x_dtype), label="x")
    describe("x", x_spec)
    x0 = x_spec.build()
    describe_dtypes(x0.dtype)
    shape = tuple(x0.shape)
    expected = model.signbit_model(x0).tolist()
    strides = reference_strides([x0], shape)
    with_out = data.draw(st.booleans(), label="with_out")
    out_kind, out_spec = data.draw(out_specs(torch.bool, shape)) if with_out else (None, None)

    def check(level):
        x = x_spec.build()
        out = out_spec.build() if with_out else None
        before = snapshot(x)
        if api == "python":
            call = lambda: torchops.signbit(x, out=out)  # noqa: E731
        elif with_out:
            call = lambda: (torch.ops.torchops.signbit.out(x, out=out), out)[1]  # noqa: E731
        else:
            call = lambda: torch.ops.torchops.signbit(x)  # noqa: E731
        result, resize_warnings = call_recording_warnings(call)
        assert_values(result, expected, torch.bool, shape, f"level={level}, out={out_kind}")
        assert not result.requires_grad
        if with_out:
            assert result is out
            assert_resize_warnings(out_kind, resize_warnings)
        else:
            assert result.stride() == strides, f"level={level}: output layout"
        assert_unchanged(before)

    at_every_level(check)


# --------------------------------------------------------------------------
# the strategies themselves: every layout and shape family is really drawn
def test_strategies_cover_the_layouts():
    """Guards the generators: a change that stopped producing a layout would
    silently weaken every property above."""
    seen = set()

    @settings(max_examples=300, derandomize=True, database=None, deadline=None, suppress_health_check=_SUPPRESSED)
    @given(spec=tensors(torch.int16, (2, 3, 4, 5), value_elements(torch.int16)), shape=shapes())
    def collect(spec, shape):
        t = spec.build()
        if t.is_contiguous():
            seen.add("contiguous")
        if t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous():
            seen.add("channels_last")
        if 0 in t.stride():
            seen.add("expanded")
        if t.storage_offset():
            seen.add("offset")
        if not t.is_contiguous() and 0 not in t.stride() and sorted(t.stride(), reverse=True) != list(t.stride()):
            seen.add("permuted")
        span = 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
        if 0 not in t.stride() and span > t.numel():
            seen.add("sliced")
        seen.add(f"ndim={len(shape)}")
        if 0 in shape:
            seen.add("empty")
        if any(d > 64 for d in shape):
            seen.add("long")

    collect()
    wanted = {"contiguous", "channels_last", "expanded", "offset", "permuted", "sliced", "empty", "long"}
    wanted |= {f"ndim={n}" for n in range(MAX_NDIM + 1)}
    assert wanted <= seen, wanted - seen


# --------------------------------------------------------------------------
# the packing ops: packbits and pack of every dtype, unpackbits and unpack of bytes, along a
# drawn dim (None too) of a drawn shape and layout, with drawn field widths, counts and bit
# orders, into a drawn out= or a new tensor, against the model at every level
PACK_DTYPES = INT_DTYPES + [torch.bool]
# The typed functions (torchops.packbits, ...), and the ops through torch.ops; the ops alone
# where torchops/ops.py does not have the functions yet.
PACKING_APIS = ["python", "ops"] if hasattr(torchops, "unpack") else ["ops"]


def packing(api, name, *args, out=None):
    """torchops.<name> (api "python") or its op through torch.ops (api "ops")."""
    if api == "python":
        return getattr(torchops, name)(*args, out=out)
    overload = getattr(torch.ops.torchops, name)
    return overload.default(*args) if out is None else overload.out(*args, out=out)


@st.composite
def packed_dims(draw, shape):
    """A dim of `shape` (negative too), or None: x flattened."""
    rank = max(len(shape), 1)
    return draw(st.none() | st.integers(-rank, rank - 1))


@pytest.mark.parametrize("x_dtype", PACK_DTYPES, ids=dtype_id)
@PROPERTY_SETTINGS
@given(data=st.data(), api=st.sampled_from(PACKING_APIS))
def test_pack_and_packbits(x_dtype, data, api):
    x_spec = data.draw(tensors(x_dtype, data.draw(shapes()), signbit_elements(x_dtype)), label="x")
    describe("x", x_spec)
    x0 = x_spec.build()
    bits = data.draw(st.sampled_from([None, 1, 2, 4]), label="bits (None: packbits)")
    dim = data.draw(packed_dims(tuple(x0.shape)), label="dim")
    bitorder = data.draw(st.sampled_from(["big", "little"]), label="bitorder")
    name, args = ("packbits", (x0, dim, bitorder)) if bits is None else ("pack", (x0, bits, dim, bitorder))
    expected = model.packbits_model(x0, dim, bitorder) if bits is None else model.pack_model(x0, bits, dim, bitorder)
    event(f"{name}, dim {'None' if dim is None else 'given'}")
    with_out = data.draw(st.booleans(), label="with_out")
    out_kind, out_spec = data.draw(out_specs(torch.uint8, expected.shape)) if with_out else (None, None)

    def check(level):
        x = x_spec.build()
        out = out_spec.build() if with_out else None
        before = snapshot(x)
        result, resize_warnings = call_recording_warnings(lambda: packing(api, name, x, *args[1:], out=out))
        assert_values(result, expected.tolist(), torch.uint8, expected.shape, f"level={level}, out={out_kind}")
        if with_out:
            assert result is out
            assert_resize_warnings(out_kind, resize_warnings)
        else:
            assert result.is_contiguous()
        assert_unchanged(before)

    at_every_level(check)


@pytest.mark.parametrize("bits", [None, 1, 2, 4], ids=lambda bits: "unpackbits" if bits is None else f"bits={bits}")
@PROPERTY_SETTINGS
@given(data=st.data(), api=st.sampled_from(PACKING_APIS))
def test_unpack_and_unpackbits(bits, data, api):
    x_spec = data.draw(tensors(torch.uint8, data.draw(shapes()), value_elements(torch.uint8)), label="x")
    describe("x", x_spec)
    x0 = x_spec.build()
    dim = data.draw(packed_dims(tuple(x0.shape)), label="dim")
    available = (8 // (bits or 1)) * (x0.numel() if dim is None or x0.dim() == 0 else x0.shape[dim])
    count = data.draw(st.none() | st.integers(-available - 2, available + 9), label="count")
    bitorder = data.draw(st.sampled_from(["big", "little"]), label="bitorder")
    signed = bits is not None and data.draw(st.booleans(), label="signed")
    name, args = ("unpackbits", (dim, count, bitorder)) if bits is None else ("unpack", (bits, dim, count, bitorder,
                                                                                         signed))
    result_dtype = torch.int8 if signed else torch.uint8
    with_out = data.draw(st.booleans(), label="with_out")
    try:
        expected = model.unpack_model(x0, bits or 1, dim, count, bitorder, signed)
    except ValueError:  # a count that drops more fields than there are
        event("outcome: ValueError (count)")
        out_spec = data.draw(out_specs(result_dtype, (3,)))[1] if with_out else None

        def check_refused(level):
            x = x_spec.build()
            out = out_spec.build() if with_out else None
            before = snapshot(x, out)
            with pytest.raises(ValueError, match=rf"^torchops\.{name}: count {count} drops more than the {available} "):
                packing(api, name, x, *args, out=out)
            assert_unchanged(before)

        at_every_level(check_refused)
        return
    event(f"{name}, count {'None' if count is None else 'past the end' if count > available else 'given'}")
    out_kind, out_spec = data.draw(out_specs(result_dtype, expected.shape)) if with_out else (None, None)

    def check(level):
        x = x_spec.build()
        out = out_spec.build() if with_out else None
        before = snapshot(x)
        result, resize_warnings = call_recording_warnings(lambda: packing(api, name, x, *args, out=out))
        assert_values(result, expected.tolist(), result_dtype, expected.shape, f"level={level}, out={out_kind}")
        if with_out:
            assert result is out
            assert_resize_warnings(out_kind, resize_warnings)
        else:
            assert result.is_contiguous()
        assert_unchanged(before)

    at_every_level(check)
