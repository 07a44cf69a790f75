"""torch.compile (Inductor) generates torchops's ops inline and gives eager's answers.

The lowerings are in torchops/_inductor.py. Every compiled result is compared with the
same function run eagerly (the C++ kernels, themselves checked against tests/model.py by
the other test files), at each of Inductor's CPU code levels: "scalar" (no vectorization:
every element goes through the scalar code that also runs the vector loop's tail) and each
vector width the CPU supports. The inputs have an odd length, so the vector loops have a
tail. Compiled functions are shared between tests: one compiled function per (function,
dynamic, level), each recompiled only when the dtypes or ranks change. signbit,
bitwise_count and the packing and search ops are in test_inductor_ops.py, with these helpers.

TORCHOPS_TEST_INDUCTOR_CXX=<compiler> compiles the generated code with that compiler
(test_generated_code_has_no_undefined_behaviour uses it to run these tests' scalar level
under UndefinedBehaviorSanitizer).
"""
import functools
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from torch._inductor.cpu_vec_isa import valid_vec_isa_list
from torch._inductor.utils import run_and_get_code

import model
import torchops
from conftest import (
    INT_DTYPES,
    OPERATIONS,
    SAMPLED,
    UNSIGNED_DTYPES,
    assert_same_tensors,
    calls_and_inputs,
    declared_functional_calls,
    dtype_id,
    expected_shift,
    interesting_counts,
    interesting_values,
    make_tensor,
    random_counts,
    random_values,
)
from calls import TYPED_CALLS
from torchops import _contract, _inductor

# Inductor's CPU code levels: cpp.simdlen 1 turns vectorization off; 256 and 512 pick AVX2
# and AVX-512 (when the CPU has them).
LEVELS = {"scalar": 1}
for _isa in sorted(valid_vec_isa_list(), key=lambda isa: isa.bit_width()):
    LEVELS.setdefault(str(_isa).split()[0], _isa.bit_width())
BEST = list(LEVELS)[-1]
# The README's test command runs each test of this file at one of the levels, taking them in
# turn through the file (tests/conftest.py): every level runs, and the run compiles (seconds
# of g++ a graph, on a cold cache) a third as much.
pytestmark = [pytest.mark.quick_run_one_of("level"), pytest.mark.compiles]
_CXX = os.environ.get("TORCHOPS_TEST_INDUCTOR_CXX")

BYTE_DTYPES = [torch.int8, torch.uint8]
WIDER_DTYPES = [dtype for dtype in INT_DTYPES if dtype not in BYTE_DTYPES]
TAIL = 13  # extra elements: an odd length leaves a tail after every vector loop


@pytest.fixture(autouse=True, scope="module")
def dynamo_settings():
    # Shared compiled functions collect many specializations; running out of them must
    # fail, never fall back silently to eager (which would compare eager with eager).
    with torch._dynamo.config.patch(
        recompile_limit=512, accumulated_recompile_limit=4096, fail_on_recompile_limit_hit=True
    ):
        yield


def test_lowerings_are_registered_once_inductor_loads():
    from torch._inductor import lowering

    assert _inductor.enabled() and _inductor.registered()
    assert all(lowering.lowerings.get(overload) for overload in _inductor.OVERLOADS)


@functools.cache
def compiled(fn, dynamic, level):
    options = {"cpp.simdlen": LEVELS[level]}
    if _CXX:
        options["cpp.cxx"] = (None, _CXX)
    return torch.compile(fn, fullgraph=True, dynamic=dynamic, options=options)


def assert_compiled_equals_eager(fn, dynamic, level, *args):
    assert_same_tensors(compiled(fn, dynamic, level)(*args), fn(*args), what=fn.__name__)


def graphs_compiled():
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


@functools.cache
def cases_of(fn, arities):
    """fn on several cases (dtypes, promotions) in one graph: a function of the cases'
    arguments one after the other (ARITIES: how many each takes) that gives each case's
    results. A small graph's compile is mostly what every graph pays (Dynamo, Inductor's
    passes, g++ loading Inductor's precompiled header), so one graph of many cases takes a
    fraction of the time of one graph each. Inductor fuses the loops of two cases of the same
    shape into one loop, which vectorizes as neither would alone: the cases' tensors go
    through apart first."""
    def cases(*args):
        results, at = [], 0
        for arity in arities:
            results.append(fn(*args[at:at + arity]))
            at += arity
        return results

    cases.__name__ = cases.__qualname__ = f"cases_of_{fn.__name__}"
    return cases


def apart(cases):
    """CASES (tuples of tensors) with no tensor of the shape of another case's (0-d ones aside):
    each case's tensors lengthened along their dim 0 by as few elements as that takes, the
    same for each, repeating their first ones (a case keeps every value and pair it had)."""
    seen, spread = set(), []
    for case in cases:
        extra = 0
        while any(t.dim() and (t.shape[0] + extra, *t.shape[1:]) in seen for t in case):
            extra += 1
        case = tuple(torch.cat([t, t[torch.arange(extra) % t.shape[0]]]) if t.dim() and extra else t for t in case)
        seen |= {tuple(t.shape) for t in case if t.dim()}
        spread.append(case)
    return spread


def assert_cases_compiled_equal_eager(fn, dynamic, level, cases, names):
    """fn compiled on every case of CASES (argument tuples, taken apart) in one graph equals fn
    eager on each; returns the cases as taken apart and the compiled results of each."""
    cases = apart(cases)
    got = compiled(cases_of(fn, tuple(map(len, cases))), dynamic, level)(*[arg for case in cases for arg in case])
    assert len(got) == len(cases)
    for result, case, name in zip(got, cases, names):
        assert_same_tensors(result, fn(*case), what=f"{fn.__name__} on {name}")
    return cases, got


# --------------------------------------------------------------------------------------
# The functions that get compiled.
def three_shifts(x, y):
    """Left, arithmetic right and logical right shift of x by y (tensor or int)."""
    return [torchops.bitshift(x, y, direction, arithmetic) for direction, arithmetic in OPERATIONS]


def shifts_with_tensor_and_0d_counts(x, y, x_short, count_0d):
    return three_shifts(x, y) + three_shifts(x_short, count_0d)


def python_int_counts(dtype):
    """Counts around 0 and the width n, and far outside it, for Python-int counts."""
    n = model.width(dtype)
    return sorted({-n - 1, -n, -1, 0, 1, n // 2, n - 1, n, n + 1, 2 * n, 255, 256, 257, -255,
                   2**31, 2**63 - 1, -2**63, 2**64 - 1, 2**100})


@functools.cache
def shifts_by_constants(counts):
    """The three shifts by each count, the counts being constants of the compiled graph."""
    def shifts_by_constant_counts(x):
        return [result for count in counts for result in three_shifts(x, count)]

    return shifts_by_constant_counts


def with_tail(values, dtype):
    values = list(values)
    return make_tensor(values + values[:TAIL], dtype)


def shift_inputs(dtype, rng):
    """(x, y) pairs: every pair for 8-bit dtypes; else every interesting value with every
    interesting count, and random pairs."""
    if dtype in BYTE_DTYPES:
        low, high = model.value_range(dtype)
        values = list(range(low, high + 1))
        xs = [x for x in values for _ in values]
        ys = values * len(values)
    else:
        values, counts = interesting_values(dtype), interesting_counts(dtype)
        xs = [x for x in values for _ in counts] + random_values(dtype, 4099, rng)
        ys = counts * len(values) + random_counts(dtype, 4099, rng)
    return with_tail(xs, dtype), with_tail(ys, dtype)


def every_value(dtype, rng):
    """Every value of an 8-bit dtype; the interesting values and some random ones otherwise."""
    if dtype in BYTE_DTYPES:
        low, high = model.value_range(dtype)
        return with_tail(range(low, high + 1), dtype)
    return with_tail(interesting_values(dtype) + random_values(dtype, 257, rng), dtype)


def count_values(dtype):
    if dtype in BYTE_DTYPES:
        low, high = model.value_range(dtype)
        return range(low, high + 1)
    return interesting_counts(dtype)


# --------------------------------------------------------------------------------------
# Shifts: compiled equals eager.
def shift_cases():
    # A sampled configuration (another torch release: conftest.SAMPLED) compiles at the
    # best level only; the default one checks every level against the same eager kernels.
    levels = [BEST] if SAMPLED else list(LEVELS)
    for dtype in BYTE_DTYPES:  # exhaustive, every level, static and dynamic
        for level in levels:
            for dynamic in (False, True):
                yield dtype, dynamic, level
    for dtype in WIDER_DTYPES:  # sweeps, every level static, dynamic at the best level
        for level in levels:
            yield dtype, False, level
        yield dtype, True, BEST


SHIFT_CASES = [
    pytest.param(dtype, dynamic, level, id=f"{dtype_id(dtype)}-{'dynamic' if dynamic else 'static'}-{level}")
    for dtype, dynamic, level in shift_cases()
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("level", [BEST] if SAMPLED else list(LEVELS))
def test_tensor_and_0d_counts(level, dynamic, rng):
    """Every (x, count) pair of int8/uint8 (sweeps for the wider dtypes) with the count as
    a tensor of x's shape, and every count as a 0-d tensor next to every x: every integer
    dtype in one graph (the 0-d counts are its inputs: one graph for all of them)."""
    pairs = [shift_inputs(dtype, rng) for dtype in INT_DTYPES]
    shorts = [every_value(dtype, rng) for dtype in INT_DTYPES]
    counts = [list(count_values(dtype)) for dtype in INT_DTYPES]
    for step in range(max(map(len, counts))):  # each dtype's counts, the shorter lists again from their start
        cases = [(x, y, short, make_tensor(values[step % len(values)], dtype))
                 for dtype, (x, y), short, values in zip(INT_DTYPES, pairs, shorts, counts)]
        assert_cases_compiled_equal_eager(shifts_with_tensor_and_0d_counts, dynamic, level, cases,
                                          [dtype_id(dtype) for dtype in INT_DTYPES])
    # and the tensor-count shifts against the model itself, not only against the C++ kernels
    pairs, results = assert_cases_compiled_equal_eager(three_shifts, dynamic, level, pairs,
                                                       [dtype_id(dtype) for dtype in INT_DTYPES])
    for dtype, (x, y), result in zip(INT_DTYPES, pairs, results):
        for shifted, (direction, arithmetic) in zip(result, OPERATIONS):
            assert shifted.tolist() == expected_shift(x, y, direction, arithmetic)[0], (dtype, direction, arithmetic)


@pytest.mark.parametrize("dtype, dynamic, level", SHIFT_CASES)
def test_python_int_counts(dtype, dynamic, level, rng):
    """Python-int counts, in and out of range, taken by value: constants of the graph when
    static; with dynamic=True one graph takes every count that fits a SymInt at run time."""
    x = every_value(dtype, rng)
    counts = tuple(python_int_counts(dtype))
    if not dynamic:
        assert_compiled_equals_eager(shifts_by_constants(counts), False, level, x)
        return
    before = graphs_compiled()
    for count in counts:
        assert_compiled_equals_eager(three_shifts, True, level, x, count)
    # 0 and 1 are specialized, as are the counts beyond int64; the rest share one graph.
    assert graphs_compiled() - before <= 5


PROMOTIONS = [
    ((torch.int8, (67,)), (torch.int64, ())),     # int8 result: the 0-d count is converted
    ((torch.int8, (67,)), (torch.int64, (67,))),  # int64 result
    ((torch.uint8, (67,)), (torch.int8, (67,))),  # int16 result
    ((torch.int64, ()), (torch.int8, (67,))),     # int8 result: x is converted
    ((torch.int16, (3, 1, 5)), (torch.uint8, (4, 1))),  # int16 result, broadcast to (3, 4, 5)
    ((torch.uint8, (67,)), (torch.int32, ())),    # uint8 result
    ((torch.uint16, (67,)), (torch.int64, ())),   # uint16 result: the 0-d count is converted
    ((torch.uint16, (67,)), (torch.uint32, ())),  # uint16 result from an unsigned 0-d count
    ((torch.uint64, (67,)), (torch.int8, ())),    # uint64 result: -1 is 2**64 - 1, out of range
    ((torch.int32, (67,)), (torch.uint64, ())),   # int32 result from a uint64 0-d count
    ((torch.int64, ()), (torch.uint32, (67,))),   # uint32 result: x is converted
    ((torch.uint32, (3, 1, 5)), (torch.uint32, (4, 1))),  # uint32 result, broadcast to (3, 4, 5)
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_promotion_and_broadcasting(dynamic, rng):
    """Every pair of PROMOTIONS in one graph; a 0-d count takes each of the wide counts (an
    input of the graph: no recompile), a count of a shape is random."""
    def operand(dtype, shape, values):
        return make_tensor(np.reshape(values, shape).tolist(), dtype)

    xs = [operand(x_dtype, x_shape, random_values(x_dtype, int(np.prod(x_shape)), rng))
          for (x_dtype, x_shape), _ in PROMOTIONS]
    shaped_counts = [operand(y_dtype, y_shape, random_counts(y_dtype, int(np.prod(y_shape)), rng))
                     for _, (y_dtype, y_shape) in PROMOTIONS]
    names = [f"{dtype_id(x_dtype)}{list(x_shape)} by {dtype_id(y_dtype)}{list(y_shape)}"
             for (x_dtype, x_shape), (y_dtype, y_shape) in PROMOTIONS]
    for count in [255, 256, 257, -255, 264, -1, 3, 7, 8, 2**40 + 3]:
        ys = [make_tensor(model.wrap(count, y_dtype), y_dtype) if y_shape == () else shaped
              for (_, (y_dtype, y_shape)), shaped in zip(PROMOTIONS, shaped_counts)]
        assert_cases_compiled_equal_eager(three_shifts, dynamic, BEST, list(zip(xs, ys)),
                                          [f"{name} (0-d counts {count})" for name in names])


def test_direction_spellings_and_paddle_names(rng):
    def spellings(x, y):
        return [
            torchops.bitshift(x, y, "left"), torchops.bitshift(x, y, "right"),
            torchops.bitshift(x, y, "LEFT", arithmetic=False),
            torchops.bitwise_left_shift(x, y), torchops.bitwise_right_shift(x, y, is_arithmetic=False),
            torchops.bitwise_right_shift(x, 3, False),
        ]

    x, y = shift_inputs(torch.int8, rng)
    assert_compiled_equals_eager(spellings, False, BEST, x, y)


def layouts(x, y):
    return [torchops.bitshift(x, y, "RIGHT", False), torchops.bitshift(x, 2, "LEFT"), torchops.signbit(x)]


def test_layouts_are_eager_layouts(rng):
    """Strides of the compiled outputs are those of the eager ones (TensorIterator's)."""
    x = make_tensor(np.reshape(random_values(torch.int32, 2 * 3 * 5 * 7, rng), (2, 3, 5, 7)).tolist(), torch.int32)
    y = make_tensor(np.reshape(random_counts(torch.int32, 3 * 5 * 7, rng), (3, 5, 7)).tolist(), torch.int32)
    for x_layout, y_layout in ((x.contiguous(memory_format=torch.channels_last), y),
                               (x.transpose(1, 3), y.transpose(0, 2)), (x[:, :, ::2], y[:, ::2])):
        result = compiled(layouts, False, BEST)(x_layout, y_layout)
        expected = layouts(x_layout, y_layout)
        assert_same_tensors(result, expected)
        assert [t.stride() for t in result] == [t.stride() for t in expected]


# --------------------------------------------------------------------------------------
# Every op: every functional overload on every dtype its op declares, with the arguments of
# each of its samples (conftest.declared_functional_calls), on operands that cover the dtype.
# A new op's lowering is checked here, and under UBSan at the scalar level
# (test_generated_code_has_no_undefined_behaviour), with no edit of this file.
@pytest.mark.parametrize("level", LEVELS)
def test_every_functional_overload_on_every_declared_dtype(level):
    calls = declared_functional_calls()
    module, inputs = calls_and_inputs(calls, tail=TAIL)
    got, expected = compiled(module, False, level)(*inputs), module(*inputs)
    assert len(got) == len(expected) == len(calls)
    for (overload, dtype, template), g, e in zip(calls, got, expected):  # hamming_topk's: a tuple
        assert_same_tensors(results_of(g), results_of(e),
                            what=f"{overload}{template} on {dtype_id(dtype)} at Inductor's {level} level")


# --------------------------------------------------------------------------------------
# In place, out= and chains with builtins.
def in_place_and_out(x, y, shifted, signs):
    x = x.clone()
    torchops.bitwise_left_shift_(x, y)
    torchops.bitwise_right_shift_(x, 2, is_arithmetic=False)
    torchops.bitshift(x, y, "RIGHT", out=shifted)
    torchops.bitshift(shifted, 1, "LEFT", out=shifted)  # out= x itself
    torchops.signbit(shifted, out=signs)
    torchops.bitwise_right_shift_(x[::2], 3)  # in place into a view: x itself must see it
    return x, shifted, signs


@pytest.mark.parametrize("level", LEVELS)
def test_in_place_and_out(level, rng):
    """Every dtype below in one graph."""
    dtypes = [torch.int8, torch.int32, torch.int64, *UNSIGNED_DTYPES]

    def outs(x):
        return torch.full_like(x, 7), torch.zeros(x.shape, dtype=torch.bool)

    cases = [(x, y, *outs(x)) for x, y in apart([shift_inputs(dtype, rng) for dtype in dtypes])]
    expected = [in_place_and_out(x, y, *outs(x)) for x, y, _, _ in cases]
    results = compiled(cases_of(in_place_and_out, (4,) * len(cases)), False, level)(*[t for case in cases for t in case])
    for dtype, (_, _, shifted, signs), result, want in zip(dtypes, cases, results, expected):
        assert_same_tensors(result, want, what=f"in_place_and_out on {dtype_id(dtype)}")
        assert result[1] is shifted and result[2] is signs  # written in place, as eager does


def unpack_int4(packed, scale):
    """Two signed 4-bit values per byte, to float: low nibble first."""
    as_int8 = packed.view(torch.int8)
    low = torchops.bitshift(torchops.bitshift(as_int8, 4, "LEFT"), 4, "RIGHT")
    high = torchops.bitshift(as_int8, 4, "RIGHT")
    return torch.stack([low, high], dim=-1).flatten(-2).to(torch.float32) * scale


def hash64(keys):
    """splitmix64's finalizer with logical shifts; int64 multiplication wraps."""
    h = keys ^ torchops.bitshift(keys, 30, "RIGHT", arithmetic=False)
    h = h * -4658895280553007687  # 0xbf58476d1ce4e5b9 as int64
    h = h ^ torchops.bitshift(h, 27, "RIGHT", arithmetic=False)
    h = h * -7723592293110705685  # 0x94d049bb133111eb
    h = h ^ torchops.bitshift(h, 31, "RIGHT", arithmetic=False)
    return h & 1023, torchops.signbit(h).sum()


def fmix32(h):
    """murmur3's 32-bit finalizer on uint32 values (uint32 products wrap)."""
    h = h ^ torchops.bitshift(h, 16, "RIGHT")
    h = h * 0x85EBCA6B
    h = h ^ torchops.bitshift(h, 13, "RIGHT")
    h = h * 0xC2B2AE35
    return h ^ torchops.bitshift(h, 16, "RIGHT")


def xorshift64(x):
    """One step of Marsaglia's xorshift64 on uint64 values."""
    x = x ^ torchops.bitshift(x, 13, "LEFT")
    x = x ^ torchops.bitshift(x, 7, "RIGHT")
    return x ^ torchops.bitshift(x, 17, "LEFT")


def shift_by_count_tensor_chain(x, counts):
    shifted = torchops.bitshift(x + 1, counts % 9, "LEFT")
    return torchops.bitwise_right_shift(shifted, counts, is_arithmetic=False).max(dim=-1)


@pytest.mark.parametrize("level", LEVELS)
def test_chains_with_builtins(level, rng):
    packed = make_tensor(random_values(torch.uint8, 4099, rng), torch.uint8)
    keys = make_tensor(random_values(torch.int64, 4099, rng), torch.int64)
    x = make_tensor(np.reshape(random_values(torch.int32, 33 * 65, rng), (33, 65)).tolist(), torch.int32)
    counts = make_tensor(np.reshape(random_counts(torch.int32, 33 * 65, rng), (33, 65)).tolist(), torch.int32)
    assert_compiled_equals_eager(unpack_int4, False, level, packed, torch.tensor(0.25))
    assert_compiled_equals_eager(hash64, False, level, keys)
    assert_compiled_equals_eager(shift_by_count_tensor_chain, False, level, x, counts)
    hashes = make_tensor(random_values(torch.uint32, 4099, rng), torch.uint32)
    states = make_tensor(random_values(torch.uint64, 4099, rng), torch.uint64)
    assert_compiled_equals_eager(lambda h: [fmix32(h)], False, level, hashes)
    assert_compiled_equals_eager(lambda x: [xorshift64(x)], False, level, states)
    # murmur3's fmix32(1) and NumPy's xorshift64 (its shifts are defined for uint64)
    assert fmix32(torch.tensor([1], dtype=torch.uint32)).tolist() == [0x514E28B7]
    as_numpy = states.numpy()
    for k, direction in ((13, np.left_shift), (7, np.right_shift), (17, np.left_shift)):
        as_numpy = as_numpy ^ direction(as_numpy, np.uint64(k))
    assert xorshift64(states).numpy().tolist() == as_numpy.tolist()
    # The low nibble of 0x9F is -1, the high one -7 (signed 4-bit values).
    assert unpack_int4(torch.tensor([0x9F], dtype=torch.uint8), 1.0).tolist() == [-1.0, -7.0]


# --------------------------------------------------------------------------------------
# The generated code.
def generated_code(fn, *args, level=None):
    """The code Inductor writes for fn (at a level of LEVELS), generated afresh (not read from a cache)."""
    options = {"fx_graph_cache": False} if level is None else {"fx_graph_cache": False, "cpp.simdlen": LEVELS[level]}
    fresh = torch.compile(fn, fullgraph=True, options=options)
    _, code = run_and_get_code(fresh, *args)
    return "\n".join(code)


def every_overload_inputs(dtype):
    x = make_tensor(list(range(40)), dtype)
    y = make_tensor([k % 9 for k in range(40)], dtype)
    return x, y, torch.linspace(-3, 3, 40)


def typed_calls_taking(dtype):
    """The rows of tests/calls.py's TYPED_CALLS that take every_overload_inputs(dtype): all of
    them, but a search function's (hamming_distance, hamming_topk: x and c viewed as codes) on
    a dtype that is not a code's, which it refuses (a TypeError, eagerly)."""
    from torchops._contract import Search, declaration_of

    taken = []
    for row in TYPED_CALLS:
        _, call, overload = row
        if isinstance(declaration_of(overload), Search):
            try:
                call(*every_overload_inputs(dtype))
            except TypeError:
                continue
        taken.append(row)
    return taken


@functools.cache
def every_overload_of(dtype):
    """Every form of every typed function that takes x of `dtype`, in one graph:
    typed_calls_taking(dtype), which on int8 and uint8 are all of TYPED_CALLS, which reach
    every overload (tests/test_binding.py checks that), so a new op needs no line here."""
    calls = [call for _, call, _ in typed_calls_taking(dtype)]

    def every_overload(x, y, f):
        return [call(x, y, f) for call in calls]

    return every_overload


def results_of(value):
    """A call's results as a list: hamming_topk's values and indices, another op's one tensor."""
    return list(value) if isinstance(value, (tuple, list)) else [value]


def flat(results):
    """The tensors of a list of calls' results, one after the other."""
    return [tensor for result in results for tensor in results_of(result)]


def torchops_calls(code):
    return set(re.findall(r"(torch\.ops\.torchops\.\w+\.\w+)\(", code))


#: The torchops calls the code of a fusing graph may hold: the C++ kernels of the ops whose
#: lowering calls them (_inductor.KERNEL_CALLS: hamming_topk), through the out= overload.
KERNEL_CALLS = {f"torch.ops.{_contract.OUT_FORM.get(overload, overload)}" for overload in _inductor.KERNEL_CALLS}


def test_typed_calls_on_codes_are_every_typed_call():
    # int8 and uint8 are codes: there every row of TYPED_CALLS is compiled.
    assert len(typed_calls_taking(torch.int8)) == len(typed_calls_taking(torch.uint8)) == len(TYPED_CALLS)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
def test_generated_code_never_calls_torchops(dtype):
    # ... but the C++ kernels whose lowerings call them (hamming_topk's: a search).
    calls = torchops_calls(generated_code(every_overload_of(dtype), *every_overload_inputs(dtype)))
    searches = {overload for _, _, overload in typed_calls_taking(dtype) if overload in _inductor.KERNEL_CALLS}
    assert calls == (KERNEL_CALLS if searches else set())


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int32, torch.uint16, torch.uint64], ids=dtype_id)
def test_kernel_calling_lowerings_call_every_overload(dtype, dynamic):
    """register(fuse=False), the lowerings of TORCHOPS_INDUCTOR_LOWERINGS=0: every overload
    calls the C++ kernel from the compiled graph and writes what eager writes."""
    every_overload = every_overload_of(dtype)
    expected_inputs, inputs = every_overload_inputs(dtype), every_overload_inputs(dtype)
    expected = every_overload(*expected_inputs)
    _inductor.register(fuse=False)
    try:
        fresh = torch.compile(every_overload, fullgraph=True, dynamic=dynamic, options={"fx_graph_cache": False})
        result, code = run_and_get_code(fresh, *inputs)
    finally:
        _inductor.register()
        torch._dynamo.reset()
        compiled.cache_clear()
    assert_same_tensors(flat(result) + list(inputs), flat(expected) + list(expected_inputs))
    # A functional overload is called as itself or as its out= overload, into a buffer
    # Inductor allocates (which Inductor does for an op that has an out= overload tagged
    # torch.Tag.out). Every overload of an op that the calls reach (the search functions: on
    # codes only).
    ops = {overload._schema.name for _, _, overload in typed_calls_taking(dtype)}
    reached = [overload for overload in _inductor.OVERLOADS if overload._schema.name in ops]
    writing = {f"torch.ops.{overload}" for overload in reached if overload._schema.is_mutable}
    functional = {f"torch.ops.{overload}" for overload in reached if not overload._schema.is_mutable}
    assert writing <= torchops_calls("\n".join(code)) <= writing | functional


def unpack_int4_builtin(packed, scale):
    as_int8 = packed.view(torch.int8)
    return torch.stack([(as_int8 << 4) >> 4, as_int8 >> 4], dim=-1).flatten(-2).to(torch.float32) * scale


def hash64_builtin(keys):
    def logical_right(h, k):
        return (h >> k) & ((1 << (64 - k)) - 1)

    h = keys ^ logical_right(keys, 30)
    h = h * -4658895280553007687
    h = h ^ logical_right(h, 27)
    h = h * -7723592293110705685
    h = h ^ logical_right(h, 31)
    # torchops.signbit of an integer is generated as `h < 0`; Inductor's own torch.signbit
    # goes through std::signbit lane by lane.
    return h & 1023, (h < 0).sum()


def kernel_sources(code):
    """The C++ of each kernel in Inductor's output code."""
    return re.findall(r"r'''(.*?)'''", code, flags=re.DOTALL)


def test_chains_compile_to_the_same_cpp_as_their_builtin_twins():
    packed = torch.arange(256, dtype=torch.uint8)
    chains = [(unpack_int4, unpack_int4_builtin, (packed, torch.tensor(0.5))),
              (hash64, hash64_builtin, (packed.to(torch.int64) * 0x9E3779B97F4A7C15 % 2**62,))]
    for torchops_chain, builtin_chain, args in chains:
        assert_same_tensors(torchops_chain(*args), builtin_chain(*args))
        code = generated_code(torchops_chain, *args)
        assert "torch.ops.torchops" not in code
        assert kernel_sources(code) == kernel_sources(generated_code(builtin_chain, *args)), code


def test_cache_key_follows_the_lowerings():
    """Inductor's on-disk cache serves a graph again, but never one compiled with the
    lowerings to a process without them, or the other way round."""
    x = torch.arange(50, dtype=torch.int32)

    def fn(x):
        return torchops.bitshift(x, 3, "LEFT") + 1

    def cache_hits():
        counters = torch._dynamo.utils.counters
        return counters["inductor"]["fxgraph_cache_hit"] + counters["aot_autograd"]["autograd_cache_hit"]

    def compile_from_cache():
        """(fused, served from the cache)"""
        torch._dynamo.reset()
        hits = cache_hits()
        compiled_fn = torch.compile(fn, fullgraph=True, options={"fx_graph_cache": True})
        result, code = run_and_get_code(compiled_fn, x)
        assert torch.equal(result, fn(x))
        return "torch.ops.torchops" not in "\n".join(code), cache_hits() > hits

    try:
        compile_from_cache()  # into the cache, if it was not there yet
        assert compile_from_cache() == (True, True)
        _inductor.register(fuse=False)  # the kernel-calling lowerings: a cache key of their own
        assert compile_from_cache()[0] is False
        assert compile_from_cache() == (False, True)
    finally:
        _inductor.register()
        torch._dynamo.reset()
        compiled.cache_clear()
    assert compile_from_cache() == (True, True)


# --------------------------------------------------------------------------------------
# Where the lowerings stay out.
@pytest.mark.filterwarnings("ignore:`torch.jit.[a-z_]+` is deprecated")
def test_export_and_torchscript_keep_the_torchops_ops():
    import torch._inductor.lowering  # noqa: F401  (the lowerings are registered)

    class Shifts(torch.nn.Module):
        def forward(self, x, y):
            return torchops.bitshift(x, y, "RIGHT", False) + torchops.signbit(x).to(x.dtype)

    x = torch.arange(-20, 20, dtype=torch.int32)
    exported = torch.export.export(Shifts(), (x, x % 5))
    for program in (exported, exported.run_decompositions()):
        targets = {str(node.target) for node in program.graph.nodes if node.op == "call_function"}
        assert {"torchops.bitshift.default", "torchops.signbit.default"} <= targets
    class ScriptableShifts(torch.nn.Module):  # TorchScript compiles torch.ops calls
        def forward(self, x, y):
            return torch.ops.torchops.bitshift(x, y, "RIGHT", False) + torch.ops.torchops.signbit(x).to(x.dtype)

    scripted = torch.jit.script(ScriptableShifts())
    assert "torchops::bitshift" in str(scripted.graph) and "torchops::signbit" in str(scripted.graph), scripted.graph


_FALLBACK_SCRIPT = textwrap.dedent("""
    import torch
    {prelude}
    import torchops
    {postlude}
    from torch._inductor.utils import run_and_get_code

    def fn(x):
        return torchops.bitshift(x, 3, "RIGHT", arithmetic=False) + torchops.signbit(x).to(x.dtype)

    x = torch.arange(-50, 50, dtype=torch.int32)
    compiled = torch.compile(fn, fullgraph=True, options={{"fx_graph_cache": False}})
    result, code = run_and_get_code(compiled, x)
    assert torch.equal(result, fn(x))
    print("calls torchops:", "torch.ops.torchops.bitshift.Scalar" in "".join(code))  # Scalar( or Scalar_out(
""")


@pytest.mark.parametrize("prelude, env", [
    ("", {"TORCHOPS_INDUCTOR_LOWERINGS": "0"}),
    # A torch release the lowerings were not written for (set once torchops has loaded its
    # library, which refuses a torch other than the one it was built against).
    ("import torchops; torch.__version__ = '2.99.0'", {}),
    # internals gone (only while torchops registers: Inductor itself needs them)
    ("import torch._inductor.lowering as L; saved = L.make_pointwise; del L.make_pointwise", {}),
], ids=["switched-off", "other-torch-release", "missing-internals"])
@pytest.mark.quick_run_one_of("prelude", "env")  # the same graph whatever turned the lowerings off
def test_without_the_lowerings_graphs_call_the_cpp_kernels(prelude, env):
    completed = subprocess.run(
        [sys.executable, "-c", _FALLBACK_SCRIPT.format(prelude=prelude, postlude="L.make_pointwise = saved" if "saved" in prelude else "")],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "calls torchops: True" in completed.stdout
    if "make_pointwise" in prelude:
        assert "torchops: the Inductor lowerings could not be registered" in completed.stderr


def test_switched_off_graphs_call_the_cpp_kernels_with_defaulted_arguments_and_dynamic_shapes():
    # What Inductor would do itself fails for both: it calls a functional overload through its
    # out= overload, passing an argument left at its default twice, and torch 2.13 builds that
    # call's layout from the symbolic sizes as they are.
    code = textwrap.dedent("""
        import torch
        import torchops
        from torch._inductor.utils import run_and_get_code

        def fn(x, y):
            return torchops.bitshift(x, 3, "LEFT") + torch.ops.torchops.bitshift(x, y, "RIGHT") + x.signbit()

        x = torch.arange(-50, 50, dtype=torch.int32)
        for dynamic in (False, True):
            torch._dynamo.reset()
            compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic, options={"fx_graph_cache": False})
            result, code = run_and_get_code(compiled, x, x % 7)
            assert torch.equal(result, fn(x, x % 7))
            assert "torch.ops.torchops.bitshift" in "".join(code)
        print("ok")
    """)
    completed = subprocess.run([sys.executable, "-c", code], env={**os.environ, "TORCHOPS_INDUCTOR_LOWERINGS": "0"},
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0 and completed.stdout == "ok\n", completed.stderr[-3000:]


@pytest.mark.slow  # every scalar-level graph compiled again under UBSan: minutes
def test_generated_code_has_no_undefined_behaviour(tmp_path):
    """The scalar-level tests again (the scalar code is also every vector loop's tail), with
    the generated code compiled under UndefinedBehaviorSanitizer: a shift by a negative
    count or by the width, or a signed overflow, in code Inductor generates for torchops
    would stop the run. The chains stay out: the hash's int64 multiplications overflow on
    purpose (PyTorch defines them to wrap), and Inductor writes them as C++ signed
    multiplications, which UBSan rightly reports; that is PyTorch's code, not torchops's."""
    compiler = tmp_path / "g++-ubsan"
    # $CXX where it is set: the cross compiler under the emulated aarch64 run (scripts/aarch64.sh).
    compiler.write_text('#!/bin/sh\nexec "${CXX:-g++}" "$@" -fsanitize=undefined -fno-sanitize-recover=undefined\n')
    compiler.chmod(0o755)
    env = {**os.environ, "TORCHOPS_TEST_INDUCTOR_CXX": str(compiler), "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}
    selection = ("scalar and (tensor_and_0d or python_int or signbit or bitwise_count or in_place or every_functional "
                 "or packing or hamming)")
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", selection],
        env=env, capture_output=True, text=True, timeout=1800,
    )
    # Without Inductor's DEBUG log lines, which would fill the message.
    output = "\n".join(line for line in (completed.stdout + completed.stderr).splitlines() if " DEBUG " not in line)
    assert completed.returncode == 0, output[-5000:]
    assert "runtime error" not in output
    assert " passed" in completed.stdout
