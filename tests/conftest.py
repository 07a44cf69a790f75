"""Shared dtype lists, tensor builders and call helpers for the torchops tests.

Test modules import the plain helpers with `from conftest import ...`; the
fixtures are picked up by pytest as usual.
"""

import collections
import contextlib
import functools
import os
import re
import signal
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from hypothesis import HealthCheck, settings

# Make `import model` / `from conftest import ...` work whatever pytest's
# import mode is.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import model  # noqa: E402

# No deadline and no too_slow health check: both time the machine, not the code (under the
# emulated aarch64 run, on a loaded machine, one draw has taken minutes).
settings.register_profile("torchops", deadline=None, max_examples=40, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
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

# (direction, arithmetic): the three distinct operations.  Lower-case
# spellings and LEFT with arithmetic=False have tests of their own.
OPERATIONS = [("LEFT", True), ("RIGHT", True), ("RIGHT", False)]
OPERATION_IDS = ["left", "right_arith", "right_logical"]

# Which public API a test goes through.
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
    return torch.from_numpy(array).clone()  # astype made a fresh C-contiguous array (0-d kept 0-d)


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


@functools.lru_cache(maxsize=None)
def every_8bit_pair(dtype):
    """Every (x, count) pair of an 8-bit dtype, as two lists of 65,536 Python ints."""
    low, high = model.value_range(dtype)
    values = list(range(low, high + 1))
    xs = [x for x in values for _ in values]
    counts = [c for _ in values for c in values]
    return xs, counts


# float dtype -> (exponent bits, mantissa bits, same-width signed int dtype)
FLOAT_FORMATS = {
    torch.float16: (5, 10, torch.int16),
    torch.bfloat16: (8, 7, torch.int16),
    torch.float32: (8, 23, torch.int32),
    torch.float64: (11, 52, torch.int64),
}


def floats_from_bits(patterns, dtype):
    """A float tensor whose elements have exactly the given raw bit patterns."""
    int_dtype = FLOAT_FORMATS[dtype][2]
    return make_tensor([model.wrap(p, int_dtype) for p in patterns], int_dtype).view(dtype)


def special_float_patterns(dtype):
    """(name, bit pattern, sign bit) for the values that matter, both signs."""
    exponent_bits, mantissa_bits, _ = FLOAT_FORMATS[dtype]
    total = 1 + exponent_bits + mantissa_bits
    inf = ((1 << exponent_bits) - 1) << mantissa_bits
    magnitudes = {
        "zero": 0,
        "min_subnormal": 1,
        "max_subnormal": (1 << mantissa_bits) - 1,
        "min_normal": 1 << mantissa_bits,
        "one": ((1 << (exponent_bits - 1)) - 1) << mantissa_bits,
        "max_finite": inf - 1,
        "inf": inf,
        "quiet_nan": inf | (1 << (mantissa_bits - 1)),
        "signalling_nan": inf | 1,
        "nan_all_mantissa": inf | ((1 << mantissa_bits) - 1),
    }
    return [(("-" if sign else "+") + name, (sign << (total - 1)) | magnitude, bool(sign))
            for sign in (0, 1) for name, magnitude in magnitudes.items()]


def random_values(dtype, size, rng):
    """`size` random values of `dtype` (uniform over all bit patterns), as Python ints."""
    low, high = model.value_range(dtype)
    values = rng.integers(low, high, size=size, endpoint=True, dtype=NUMPY_DTYPES[dtype])
    return values.tolist()


def covering_values(dtype, size=2000, seed=0):
    """A 1-D tensor that covers `dtype`: every value (every bit pattern of a float) of a
    dtype of 16 bits or fewer, and bool's two; otherwise the edges (interesting_values, the
    special float patterns) and `size` random values (random bit patterns of a float)."""
    if dtype == torch.bool:
        return torch.tensor([False, True])
    rng = np.random.default_rng(seed)
    if dtype.is_floating_point:
        bits = torch.finfo(dtype).bits
        if bits <= 16:
            return floats_from_bits(range(1 << bits), dtype)
        random = rng.integers(0, 1 << bits, size=size, dtype=np.uint64).tolist()
        return floats_from_bits([pattern for _, pattern, _ in special_float_patterns(dtype)] + random, dtype)
    if model.width(dtype) <= 16:
        low, high = model.value_range(dtype)
        return torch.arange(low, high + 1).to(dtype)
    return make_tensor(interesting_values(dtype) + random_values(dtype, size, rng), dtype)


def covering_operands(dtype, count, seed=0):
    """`count` 1-D tensors of one length that cover `dtype` together: every pair of values
    for two operands of an 8-bit dtype (or bool); otherwise covering_values and shuffled copies
    of it (seeded: the same pairs every run)."""
    values = covering_values(dtype)
    if count == 2 and values.numel() <= 256:
        return [values.repeat_interleave(values.numel()), values.repeat(values.numel())]
    generator = torch.Generator().manual_seed(seed)
    return [values] + [values[torch.randperm(values.numel(), generator=generator)] for _ in range(count - 1)]


#: The codes a search op's sweep compares: the first rows of each 1-d operand as codes of
#: CODE_BYTES bytes (every sample's k is at most CODE_ROWS).
CODE_ROWS, CODE_BYTES = 48, 16


def as_codes(operands):
    """The sweeps' 1-d operands as a search op takes them: codes, CODE_ROWS rows of
    CODE_BYTES bytes each."""
    return [t[:CODE_ROWS * CODE_BYTES].reshape(CODE_ROWS, CODE_BYTES) for t in operands]


def operands_for(overload, operands):
    """The sweeps' 1-d operands as `overload` takes them: as they are, or, for a search op
    (torchops._contract.Search), as codes (as_codes)."""
    from torchops._contract import Search, declaration_of

    return as_codes(operands) if isinstance(declaration_of(overload), Search) else operands


def sweeps_take(overload, args):
    """Whether the sweeps over an op's dtypes (which put 1-d operands in a template's Nones)
    can make a call of these arguments: every sample of a pointwise op; a packing op's
    (torchops._contract.Packing) when 1-d x of its dtypes takes its dim and count, and it
    holds no None of its own (dim=None), which a template could not tell from a tensor's place."""
    from torchops._contract import Packing, declaration_of, op_name

    declaration = declaration_of(overload)
    if not isinstance(declaration, Packing):
        return True
    rest = [a for a in args if not isinstance(a, torch.Tensor)]
    if None in rest:
        return False
    stand_in = torch.empty(256, dtype=declaration.dtypes[0], device="meta")
    try:
        declaration.check(op_name(overload), stand_in, *rest)
    except (IndexError, ValueError):
        return False
    return True


def argument_templates(overload):
    """The arguments of each of tests/calls.py's OPCHECK_SAMPLES of `overload`, once each, a
    tensor's place marked None: the calls of an op that the sweeps over its declared dtypes
    make (tests/test_cuda.py, tests/test_onnx.py)."""
    from calls import OPCHECK_SAMPLES  # calls imports this module

    templates = {}
    for _, sampled, make_args, *_ in OPCHECK_SAMPLES:
        args = make_args() if sampled is overload else None
        if args is not None and sweeps_take(overload, args):
            template = tuple(None if isinstance(a, torch.Tensor) else a for a in args)
            templates[repr(template)] = template  # repr: True and 1 are one dict key
    assert templates, (f"tests/calls.py: no opcheck sample of {overload} that the sweeps take (sweeps_take): "
                       "add one to OPCHECK_SAMPLES")
    return list(templates.values())


class DispatchRecorder(TorchDispatchMode):
    """Records every torchops overload the dispatcher hands to Python modes while it is active."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == "torchops":
            self.seen.append(func)
        return func(*args, **(kwargs or {}))


@functools.cache
def declared_functional_calls():
    """(overload, dtype, argument template): every functional overload (the writing ones
    share its translations and lowerings), on every dtype its op declares
    (torchops/_contract.py), with the arguments of each of its samples: the calls with which
    tests/test_onnx.py, tests/test_inductor.py and tests/test_inductor_triton.py check every op
    with no edit of theirs."""
    from torchops._contract import OVERLOADS, declaration_of

    return [(overload, dtype, template) for overload in OVERLOADS if not overload._schema.is_mutable
            for dtype in declaration_of(overload).dtypes for template in argument_templates(overload)]


class Calls(torch.nn.Module):
    """`calls`, (overload, dtype, argument template) each, on the inputs that `starts` gives
    for (dtype, number of tensor operands): covering_operands."""

    def __init__(self, calls, starts):
        from torchops._contract import Search, declaration_of

        super().__init__()
        self.calls, self.starts = calls, starts
        # Decided here, not in forward, which Dynamo traces.
        self.searches = {overload for overload, _, _ in calls if isinstance(declaration_of(overload), Search)}

    def forward(self, *inputs):
        outputs = []
        for overload, dtype, template in self.calls:
            start = self.starts[dtype, template.count(None)]
            operands = inputs[start:start + template.count(None)]
            operands = iter(as_codes(operands) if overload in self.searches else operands)
            outputs.append(overload(*[next(operands) if a is None else a for a in template]))
        return tuple(outputs)


def calls_and_inputs(calls, tail=0):
    """A Calls model of `calls` and its inputs (covering_operands, each with its first `tail`
    elements repeated at its end: an odd length leaves a vector loop a tail)."""
    starts, inputs = {}, []
    for _, dtype, template in calls:
        if (dtype, template.count(None)) not in starts:
            starts[dtype, template.count(None)] = len(inputs)
            inputs += [torch.cat([t, t[:tail]]) for t in covering_operands(dtype, template.count(None))]
    return Calls(calls, starts), tuple(inputs)


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


# --------------------------------------------------------------------------
# calling the ops through each API
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
        returned = overload(x, y, direction, arithmetic, out=out)
        assert returned is out
        return returned
    raise AssertionError(api)


def called_name(api, direction, in_place=False):
    """A regex for the start of an error message of `shift(api, ...)` (or of `shift_`): the
    name of the function the call made (the op's name for the "ops" api)."""
    if api == "ops":
        name = "torchops.bitshift_" if in_place else "torchops.bitshift"
    elif in_place or api == "paddle":
        name = f"torchops.bitwise_{direction.lower()}_shift" + ("_" if in_place else "")
    else:
        name = "torchops.bitshift"
    return "^" + re.escape(name) + ": "


def shift_(api, x, y, direction, arithmetic=True):
    """In-place shift: the Python API's in-place functions are the Paddle ones. Each
    returns x, as the op does."""
    import torchops

    if api in ("bitshift", "paddle"):
        fn = torchops.bitwise_left_shift_ if direction.upper() == "LEFT" else torchops.bitwise_right_shift_
        return fn(x, y, is_arithmetic=arithmetic)
    if api == "ops":
        returned = torch.ops.torchops.bitshift_(x, y, direction, arithmetic)
        assert returned is x
        return returned
    raise AssertionError(api)


# --------------------------------------------------------------------------
# out= tensors
OUT_KINDS = ["right_shape", "empty", "wrong_shape", "right_shape_strided"]


def make_out(kind, shape, dtype, fill):
    """An out= tensor for a result of `shape`, filled with `fill`:
      right_shape          contiguous, of `shape`
      empty                no elements (PyTorch resizes it silently)
      wrong_shape          elements but the wrong shape (PyTorch resizes it)
      right_shape_strided  of `shape` but not contiguous: transposed memory for
                           2+ dims, every other element for 1 dim, an offset
                           view for 0-d (its strides must be kept)
    """
    shape = tuple(shape)
    if kind == "right_shape":
        return torch.full(shape, fill, dtype=dtype)
    if kind == "empty":
        return torch.full((0,), fill, dtype=dtype)
    if kind == "wrong_shape":
        return torch.full((2, 9), fill, dtype=dtype)
    assert kind == "right_shape_strided"
    if len(shape) >= 2:
        return torch.full(shape, fill, dtype=dtype).transpose(0, 1).contiguous().transpose(0, 1)
    if len(shape) == 1:
        return torch.full((2 * shape[0] + 1,), fill, dtype=dtype)[1::2]
    return torch.full((2,), fill, dtype=dtype)[1]


def snapshot(*tensors):
    """Clones plus metadata, to check later (assert_unchanged) that nothing was touched."""
    return [(t, t.clone(), t.shape, t.stride(), t.dtype, t.storage_offset(), t.data_ptr())
            for t in tensors if isinstance(t, torch.Tensor)]


def assert_unchanged(snapshots):
    """Same metadata, same storage, same bits (a NaN compared by its bits, sign included)."""
    for tensor, clone, shape, stride, dtype, offset, pointer in snapshots:
        assert (tensor.dtype, tensor.shape, tensor.stride(), tensor.storage_offset(), tensor.data_ptr()) == (
            dtype, shape, stride, offset, pointer)
        assert torch.equal(as_bits(tensor), as_bits(clone)), "an input was modified"


def as_bits(tensor):
    """The tensor's raw bits (NaN != NaN, and the sign of a NaN matters)."""
    if tensor.dtype.is_floating_point:
        return tensor.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[tensor.itemsize])
    return tensor


def assert_same_tensors(actual, expected, what="result"):
    """Two sequences of tensors, equal in length and, one by one, in dtype, shape and values."""
    actual, expected = list(actual), list(expected)
    assert len(actual) == len(expected), f"{what}: {len(actual)} tensors, expected {len(expected)}"
    for index, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype and a.shape == e.shape, \
            f"{what}[{index}]: {a.dtype} {tuple(a.shape)}, expected {e.dtype} {tuple(e.shape)}"
        assert torch.equal(a, e), f"{what}[{index}]: {a} != {e}"


# --------------------------------------------------------------------------
# kernel levels (STYLE.md: sweeps run on every level the CPU supports), switched
# in-process through torchops' private hook (csrc/dispatch/).
import torchops  # noqa: E402,F401

CPU_CAPABILITIES = list(torch.ops.torchops._supported_cpu_capabilities())

# TORCHOPS_CPU_KERNELS=composite or =triton sends CPU tensors to the path of other devices
# (csrc/ops/composite.cpp, torchops/_triton.py): the level is then that path's name, and a
# test of the compiled levels' own machinery does not apply.
OTHER_DEVICES_PATH = None if CPU_CAPABILITIES[0] in torch.ops.torchops._cpu_capabilities() else CPU_CAPABILITIES[0]
only_compiled_levels = pytest.mark.skipif(
    OTHER_DEVICES_PATH is not None, reason=f"CPU tensors take the {OTHER_DEVICES_PATH} kernels (TORCHOPS_CPU_KERNELS)")

# Every overload, as "torchops.<op>.<overload>" (str of an OpOverload), from the registered
# library; test_torch_integration.test_schemas_are_the_contract holds the schemas to the docs.
from torchops._contract import OVERLOADS  # noqa: E402

OVERLOAD_NAMES = {str(overload) for overload in OVERLOADS}


@pytest.fixture(params=CPU_CAPABILITIES, ids=lambda level: f"cpu={level}")
def cpu_capability(request):
    """Runs the test with the kernel level forced to each supported one."""
    level = request.param
    before = torch.ops.torchops._cpu_capability()
    torch.ops.torchops._set_cpu_capability(level)
    try:
        assert torch.ops.torchops._cpu_capability() == level
        yield level
    finally:
        torch.ops.torchops._set_cpu_capability(before)


# --------------------------------------------------------------------------
# call paths of the typed API (torchops/_fastpath.py): the compiled binding, which
# torchops exports, and the torch.ops twin every call of the binding falls back to.
from torchops import _fastpath  # noqa: E402

# TORCHOPS_TEST_CALL_PATHS=binding narrows the run to one path (the sanitizer run: the
# torch.ops path adds no C++ code to check, only a Python layer in front of the same op).
CALL_PATHS = os.environ.get("TORCHOPS_TEST_CALL_PATHS", "binding,torch.ops").split(",")
assert set(CALL_PATHS) <= {"binding", "torch.ops"}, f"TORCHOPS_TEST_CALL_PATHS: {CALL_PATHS}"


@pytest.fixture(params=CALL_PATHS, ids=lambda path: f"path={path}")
def call_path(request):
    """Runs the test with the typed API on each call path: the compiled binding, and
    every call sent to its torch.ops twin. A module opts in with
    `pytestmark = pytest.mark.usefixtures("call_path")`."""
    path = request.param
    if path == "binding" and _fastpath.call_path() != "binding":
        pytest.fail("the compiled binding torchops._binding is not in use; rebuild torchops")
    with _fastpath.torch_ops_only() if path == "torch.ops" else contextlib.nullcontext():
        assert torchops.call_path() == path
        yield path


# How much of the sweeps (the test functions of more than SAMPLED_BEYOND parametrizations) a
# run takes:
# - By default (the README's test command, for a contributor's loop): one in SAMPLED_ONE_IN
#   of each sweep's parametrizations at each kernel level, and at least one, drawn by a hash
#   of TORCHOPS_TEST_SEED (0 unless set; the run's header prints it) and the test's id: the
#   same ones every run with the same seed, another sample with another seed; then, in the
#   order of that hash, each parametrization that brings a value no kept one has of a
#   parameter of at most COVERED_VALUES values (a dtype, a count kind, a layout kind, static
#   or dynamic shapes). Every op, path, level and dtype still runs, each of a sweep's dtypes at
#   each level, as do the tests of fewer parametrizations, and each sweep's
#   failures reproduce from its printed seed. The `slow` tests (minutes: a build of the wheel
#   from scratch, tensors of gigabytes) are left out of a run of the whole folder unless -m
#   selects them. A test whose parametrizations each compile for a variant of the same path
#   (test_inductor.py: Inductor's vector levels) names those parameters in its
#   quick_run_one_of mark (or its module's): of the parametrizations that differ only in them,
#   one runs, the next in turn through the module from one the seed picks, so that every
#   variant runs somewhere.
# - TORCHOPS_TEST_FULL=1: every parametrization (CI's default configuration, .ci/run).
# - TORCHOPS_TEST_SAMPLED=1: CI's configurations that repeat what the default one has swept in
#   full (other torch releases and Pythons). The kernels are the same source built against
#   each torch; what a release or a Python changes is around them (headers, the dispatcher,
#   the binding, PyTorch's Python layers), which every level and every parametrization
#   shares. So each test runs at the best kernel level only, and each sweep is sampled as
#   above. The emulated aarch64 run (scripts/aarch64.sh), where a test takes tens of times
#   longer, samples harder through TORCHOPS_TEST_SAMPLED_BEYOND and TORCHOPS_TEST_SAMPLED_ONE_IN.
FULL = os.environ.get("TORCHOPS_TEST_FULL", "0") == "1"
SAMPLED = os.environ.get("TORCHOPS_TEST_SAMPLED", "0") == "1"
#: Whether the sweeps are sampled (and the tests that draw many examples draw fewer).
SWEEPS_SAMPLED = SAMPLED or not FULL
SEED = int(os.environ.get("TORCHOPS_TEST_SEED", "0"))
SAMPLED_BEYOND = int(os.environ.get("TORCHOPS_TEST_SAMPLED_BEYOND", "24" if not SAMPLED else "40"))
SAMPLED_ONE_IN = int(os.environ.get("TORCHOPS_TEST_SAMPLED_ONE_IN", "8" if not SAMPLED else "4"))
# The tests marked `compiles` (a graph compiled by Inductor, or an export, each
# parametrization: about a second of g++ or of the exporter, where the kernels take
# milliseconds) take the same code through the compiler for each dtype and count kind: a
# sampled configuration samples them from fewer parametrizations, after its level filter,
# and keeps no value of a parameter on its own account: there every overload is compiled on
# every dtype it declares by test_inductor's and test_onnx's every-dtype tests, and the other
# compiled tests check what a graph does around the op (promotion, layouts, dynamic shapes,
# fusion), the same code for each dtype.
COMPILED_SAMPLED_BEYOND, COMPILED_SAMPLED_ONE_IN = 4, 8


def pytest_report_header(config):
    if not SWEEPS_SAMPLED:
        return "torchops: every parametrization of every sweep (TORCHOPS_TEST_FULL=1)"
    levels = "the best kernel level only" if SAMPLED else "every kernel level"
    return (f"torchops: sweeps sampled at {levels}, one in {SAMPLED_ONE_IN} of those of more than {SAMPLED_BEYOND} "
            f"parametrizations, seed {SEED} (TORCHOPS_TEST_SEED=<n> draws another sample, TORCHOPS_TEST_FULL=1 runs "
            "them whole)")


#: The modules that take longest, collected first. The README's command runs the suite in one
#: process a core, each module whole in one of them, handed out in the order of collection
#: (pytest-xdist's loadfile without its reordering: scripts/run.sh); a long module handed out
#: late runs on alone at the end. On a cold Inductor cache, of the 676 s the default run's
#: tests took (2 cores, torch 2.13, an AMD EPYC with AVX-512), the compiled graphs took 276 s
#: (so they are two files, one for each process) and test_deploy 79 s.
LONGEST_MODULES = ("test_inductor.py", "test_inductor_ops.py", "test_deploy.py")


def pytest_collection_modifyitems(config, items):
    """Runs each test on the torch.ops path once, not once per variation that cannot
    change the path: the kernel levels (the path only decides how the op is called, so the
    torch.ops path runs at the best level only) and the raw torch.ops API (api "ops" and
    signbit's "ops" call torch.ops.torchops.* directly, whichever path is set). Samples the
    sweeps unless TORCHOPS_TEST_FULL=1. Puts LONGEST_MODULES first."""
    redundant = []
    # The default run of the suite leaves the tests of minutes out, unless -m selects them or
    # the run names test files rather than the folder.
    whole_folder = any(os.path.isdir(arg.split("::")[0]) for arg in config.args)
    quick = not FULL and not SAMPLED and not config.option.markexpr and whole_folder
    for item in items:
        if quick and item.get_closest_marker("slow"):
            redundant.append(item)
            continue
        params = item.callspec.params if hasattr(item, "callspec") else {}
        level = params.get("cpu_capability", CPU_CAPABILITIES[-1])
        if SAMPLED and level != CPU_CAPABILITIES[-1]:
            redundant.append(item)
        if params.get("call_path") != "torch.ops":
            continue
        if level != CPU_CAPABILITIES[-1] or params.get("api") == "ops":
            redundant.append(item)
    if SWEEPS_SAMPLED:
        functions = collections.Counter(item.function for item in items)
        left = set(redundant)
        kept_functions = collections.Counter(item.function for item in items if item not in left)
        sampled = collections.defaultdict(list)
        for item in items:
            if SAMPLED and item.get_closest_marker("compiles") is not None:
                count, beyond, one_in, cover = kept_functions[item.function], COMPILED_SAMPLED_BEYOND, COMPILED_SAMPLED_ONE_IN, False
            else:
                count, beyond, one_in, cover = functions[item.function], SAMPLED_BEYOND, SAMPLED_ONE_IN, True
            if count > beyond and item not in left:
                params = item.callspec.params if hasattr(item, "callspec") else {}
                sampled[item.function, params.get("cpu_capability"), one_in, cover].append(item)
        for (_, _, one_in, cover), group in sampled.items():
            kept = set(sample_of(group, one_in, cover))
            redundant += [item for item in group if item not in kept]
    if SWEEPS_SAMPLED and not SAMPLED:
        left = set(redundant)
        redundant += one_variant_each(item for item in items if item not in left)
    redundant = list(dict.fromkeys(redundant))
    if redundant:
        config.hook.pytest_deselected(items=redundant)
        dropped = set(redundant)
        items[:] = [item for item in items if item not in dropped]
    missing = [name for name in LONGEST_MODULES if not (Path(__file__).parent / name).is_file()]
    if missing:  # a renamed module would silently lose its place
        raise pytest.UsageError(f"tests/conftest.py: LONGEST_MODULES names no file of tests/: {missing}")
    first = {name: rank for rank, name in enumerate(LONGEST_MODULES)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)))  # stable: each module's order kept


def sample_of(group, one_in, cover):
    """The parametrizations of GROUP (one test function's at one kernel level) that a sampled
    run keeps: one in ONE_IN, by a hash of the seed and the id; then, if COVER, in the order
    of that hash, every one that brings a value of a covered parameter (covered_values) no
    kept one has; at least one. So every dtype, count kind, layout kind, ... of each function
    at each level runs, and a harder sampling (the emulated run's) leaves out no value, test
    or level whole."""
    def draw(item):
        return zlib.crc32(f"{SEED}:{item.nodeid}".encode())

    kept = [item for item in group if draw(item) % one_in == 0] or [min(group, key=draw)]
    values = covered_values(group) if cover else lambda item: set()
    covered = {id(item): values(item) for item in group}
    seen = set().union(*(covered[id(item)] for item in kept))
    for item in sorted(group, key=draw):
        if not covered[id(item)] <= seen:
            kept.append(item)
            seen |= covered[id(item)]
    return kept


#: A parameter of at most this many values in a sampled group (a dtype, a count kind, a call
#: path, static or dynamic shapes) is a dimension every value of which the sample keeps; one
#: of more (the cases of a list, sizes, offsets) is the sweep itself, sampled.
COVERED_VALUES = 16


def covered_values(group):
    """A function of an item giving {(name, repr(value))} of its parameters that the sample of
    GROUP covers: those of at most COVERED_VALUES values there (the kernel level aside: it is
    the group's)."""
    def values(item):
        params = item.callspec.params if hasattr(item, "callspec") else {}
        return {(name, repr(value)) for name, value in params.items() if name != "cpu_capability"}

    counts = collections.Counter(name for name, _ in set().union(*map(values, group)))
    few = {name for name, count in counts.items() if count <= COVERED_VALUES}
    return lambda item: {(name, value) for name, value in values(item) if name in few}


def one_variant_each(items):
    """The items of quick_run_one_of tests left out: of each test's parametrizations that
    differ only in the mark's parameters, all but one, the next in turn through its module."""
    variants = {}
    for item in items:
        mark = item.get_closest_marker("quick_run_one_of")
        params = item.callspec.params if hasattr(item, "callspec") else {}
        if mark is not None and set(mark.args) & params.keys():
            others = tuple((key, repr(value)) for key, value in params.items() if key not in mark.args)
            variants.setdefault((item.module.__name__, item.function, others), []).append(item)
    turn = collections.Counter()
    left_out = []
    for (module, _, _), group in variants.items():
        kept = group[(SEED + turn[module]) % len(group)]
        turn[module] += 1
        left_out += [item for item in group if item is not kept]
    return left_out


# PyTorch marks torch.jit.script, trace and save deprecated (a DeprecationWarning in 2.13, a
# FutureWarning in 2.14 and 2.15); they work, and are tested. A TorchScript test that
# carries these marks fails on any other warning.
ONLY_TORCHSCRIPT_DEPRECATIONS = [pytest.mark.filterwarnings("error"),
                                 pytest.mark.filterwarnings("ignore:`torch.jit.[a-z_]+` is deprecated")]


def only_torchscript_deprecations(test):
    """Gives one test the marks of ONLY_TORCHSCRIPT_DEPRECATIONS, in the order a module's
    pytestmark has them (the last matching filter wins)."""
    for mark in ONLY_TORCHSCRIPT_DEPRECATIONS:
        test = mark(test)
    return test


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


# --------------------------------------------------------------------------
# subprocesses
def run_python(code, **env):
    """Runs `code` in a fresh Python: this process's environment without the switch that sends
    CPU tensors to the other devices' kernels (a test says which kernels it wants), plus `env`."""
    environment = {key: value for key, value in os.environ.items() if key != "TORCHOPS_CPU_KERNELS"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**environment, **env})


def _descendants(pid):
    """The pids of pid's children, their children, and so on, read from /proc."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_process_tree(process):
    """SIGKILL a subprocess.Popen started with start_new_session=True, its process group, and
    all its descendants (torch.distributed.run starts its workers in sessions of their own,
    which killing the group alone would miss)."""
    for pid in [*_descendants(process.pid), process.pid]:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    process.wait()
