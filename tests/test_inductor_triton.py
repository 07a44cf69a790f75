"""torch.compile's Triton code (what Inductor generates for CUDA and XPU) gives eager's answers.

The lowerings of torchops/_inductor.py are written in Inductor's device-neutral IR; here the
graphs are compiled by Inductor's Triton backend and run by Triton's interpreter on CPU
tensors (tests/inductor_triton.py), so the Triton code a GPU would run is checked on a
machine without one: every overload fused into Triton kernels (no torchops call, no
libdevice call, which the interpreter cannot run), exactly eager's results (the C++
kernels), and no shift ever given a count outside [0, n), which Triton leaves undefined
and NumPy would hide. Needs Triton (torch's CUDA wheels bring it).
"""
import re

import numpy as np
import pytest
import torch

import model
from conftest import (
    FLOAT_DTYPES, INT_DTYPES, assert_same_tensors, calls_and_inputs, declared_functional_calls, dtype_id,
    floats_from_bits, interesting_counts, interesting_values, make_tensor, random_values, special_float_patterns,
)

pytest.importorskip("triton")
from torch._inductor.utils import run_and_get_code  # noqa: E402

from inductor_triton import inductor_triton_on_cpu  # noqa: E402

from torchops import _contract, _inductor  # noqa: E402

op = torch.ops.torchops
#: The torchops calls generated code may hold: the C++ kernels of the ops whose lowering calls
#: them (hamming_topk), through the out= overload; every other op is fused.
KERNEL_CALLS = {str(_contract.OUT_FORM.get(overload, overload)) for overload in _inductor.KERNEL_CALLS}
# Every generated module asks for Triton's CPU backend (triton-cpu), which the interpreter
# does not need.
pytestmark = [pytest.mark.filterwarnings("ignore:Could not find an active CPU backend"), pytest.mark.compiles]


@pytest.fixture(scope="module")
def out_of_range_shifts():
    with inductor_triton_on_cpu() as shifts:
        yield shifts


def torchops_calls(source):
    return set(re.findall(r"torch\.ops\.(torchops\.\w+\.\w+)\(", source))


def compile_and_run(fn, args, out_of_range_shifts, dynamic=False):
    """fn compiled to Triton and run on args; checks that it fused (but for the kernel calls
    of KERNEL_CALLS) and shifted in range."""
    got, code = run_and_get_code(torch.compile(fn, dynamic=dynamic, fullgraph=True,
                                               options={"fx_graph_cache": False}), *args)
    source = "\n".join(code)
    assert "@triton.jit" in source
    assert torchops_calls(source) <= KERNEL_CALLS, f"a torchops kernel is called, not fused: {torchops_calls(source)}"
    assert "libdevice." not in source
    assert out_of_range_shifts == [], out_of_range_shifts
    return got


def pairs(dtype):
    """Every interesting value against every interesting count (docs/semantics.md section 2)."""
    values, counts = interesting_values(dtype), interesting_counts(dtype)
    return (make_tensor([v for v in values for _ in counts], dtype), make_tensor([c for _ in values for c in counts], dtype))


def tensor_count_shifts(x, y):
    return (op.bitshift(x, y, "LEFT"), op.bitshift(x, y, "RIGHT"), op.bitshift(x, y, "RIGHT", False),
            op.bitshift(op.bitshift(x, y, "RIGHT", False), 1, "LEFT"))  # a chain, fused


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
def test_tensor_counts(dtype, out_of_range_shifts):
    x, y = pairs(dtype)
    got = compile_and_run(tensor_count_shifts, (x, y), out_of_range_shifts)
    for result, expected in zip(got, tensor_count_shifts(x, y)):
        assert result.dtype == expected.dtype and torch.equal(result, expected)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
def test_python_int_counts(dtype, out_of_range_shifts):
    n = model.width(dtype)
    counts = [3, -1, 0, 1, n - 1, n, n + 1, 127, 2**62]

    def shifts(x):
        return tuple(op.bitshift(x, k, direction, arithmetic) for k in counts
                     for direction, arithmetic in (("LEFT", True), ("RIGHT", True), ("RIGHT", False)))

    x = make_tensor(interesting_values(dtype), dtype)
    for result, expected in zip(compile_and_run(shifts, (x,), out_of_range_shifts), shifts(x)):
        assert torch.equal(result, expected)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.uint16, torch.uint64], ids=dtype_id)
def test_symbolic_int_counts(dtype, out_of_range_shifts):
    n = model.width(dtype)
    x = make_tensor(interesting_values(dtype), dtype)

    def shifts(x, k):
        return op.bitshift(x, k, "LEFT"), op.bitshift(x, k, "RIGHT"), op.bitshift(x, k, "RIGHT", False)

    for k in [-1, 3, n - 1, n, n + 1]:
        got = compile_and_run(shifts, (x, k), out_of_range_shifts, dynamic=True)
        for result, expected in zip(got, shifts(x, k)):
            assert torch.equal(result, expected), k


def test_writing_overloads(out_of_range_shifts):
    x, y = pairs(torch.int16)

    def write(x, y, out, out_scalar, signs, floats):
        op.bitshift.out(x, y, "RIGHT", False, out=out)
        op.bitshift.Scalar_out(x, 5, "RIGHT", False, out=out_scalar)
        op.signbit.out(floats, out=signs)
        z = x.clone()
        op.bitshift_(z, y, "LEFT")
        op.bitshift_.Scalar(z, 2, "RIGHT")
        return z

    floats = torch.tensor([-0.0, 0.0, -1.5, float("inf")])
    outs = [torch.empty_like(x), torch.empty_like(x), torch.empty(4, dtype=torch.bool)]
    z = compile_and_run(write, (x, y, *outs, floats), out_of_range_shifts)
    assert torch.equal(outs[0], op.bitshift(x, y, "RIGHT", False))
    assert torch.equal(outs[1], op.bitshift(x, 5, "RIGHT", False))
    assert outs[2].tolist() == [True, False, True, False]
    assert torch.equal(z, op.bitshift(op.bitshift(x, y, "LEFT"), 2, "RIGHT"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_signbit_of_every_special_value(dtype, out_of_range_shifts):
    patterns = special_float_patterns(dtype)
    x = floats_from_bits([bits for _, bits, _ in patterns], dtype)
    got = compile_and_run(lambda x: op.signbit(x), (x,), out_of_range_shifts)
    assert got.tolist() == [sign for _, _, sign in patterns]


@pytest.mark.parametrize("dtype", [*INT_DTYPES, torch.bool], ids=dtype_id)
def test_bitwise_count(dtype, rng, out_of_range_shifts):
    if dtype == torch.bool:
        x = torch.tensor([True, False, False, True, True])
    elif model.width(dtype) == 8:  # every value
        low, high = model.value_range(dtype)
        x = make_tensor(list(range(low, high + 1)), dtype)
    else:
        x = make_tensor(interesting_values(dtype) + random_values(dtype, 300, rng), dtype)

    def counts(x, out):
        op.bitwise_count.out(x, out=out)
        return op.bitwise_count(x), op.bitwise_count(x[1:]) + 1  # alone, and fused with an add

    out = torch.empty(x.shape, dtype=torch.uint8)
    got = compile_and_run(counts, (x, out), out_of_range_shifts)
    expected = torch.from_numpy(np.bitwise_count(x.numpy()))
    for result, wanted in zip((got[0], out, got[1]), (expected, expected, expected[1:] + 1)):
        assert result.dtype == torch.uint8 and torch.equal(result, wanted)


def packing(x, packed):
    """Every packing op along a middle dim, the last one and flattened, both bit orders,
    counts that drop and append fields."""
    results = []
    for dim in (1, -1, None):
        for bitorder in ("big", "little"):
            results += [op.packbits(x > 0, dim, bitorder), op.pack(x, 2, dim, bitorder), op.pack(x, 4, dim, bitorder),
                        op.unpackbits(packed, dim, -3, bitorder), op.unpack(packed, 2, dim, 40, bitorder, True),
                        op.unpack(packed, 4, dim, None, bitorder, True), op.unpack(packed, 1, dim, 5, bitorder)]
    return results


def test_packing(rng, out_of_range_shifts):
    x = make_tensor(random_values(torch.int16, 3 * 5 * 19, rng), torch.int16).reshape(3, 5, 19)
    packed = make_tensor(random_values(torch.uint8, 3 * 5 * 7, rng), torch.uint8).reshape(3, 5, 7)
    assert_same_tensors(compile_and_run(packing, (x, packed), out_of_range_shifts), packing(x, packed))


def test_packing_fuses(rng, out_of_range_shifts):
    """packbits(x > 0) and an int4 dequantize are one Triton kernel each."""
    x = torch.randn(4099)
    packed = make_tensor(random_values(torch.uint8, 4099, rng), torch.uint8)
    for fn, args in ((lambda x: op.packbits(x > 0), (x,)),
                     (lambda p, s: op.unpack(p, 4, -1, None, "big", True).to(torch.float32) * s,
                      (packed, torch.tensor(0.25)))):
        got, code = run_and_get_code(torch.compile(fn, fullgraph=True, options={"fx_graph_cache": False}), *args)
        source = "\n".join(code)
        assert source.count("@triton.jit") == 1, source
        assert not re.search(r"torch\.ops\.torchops\.\w+\.\w+\(", source), "a torchops kernel is called, not fused"
        assert torch.equal(got, fn(*args)) and out_of_range_shifts == []


def test_every_functional_overload_on_every_declared_dtype(out_of_range_shifts):
    # Every op's lowering in Triton, with no edit here: every functional overload on every dtype
    # its op declares, with the arguments of each of its samples (tests/calls.py), on operands
    # that cover the dtype (conftest.declared_functional_calls), against eager.
    calls = declared_functional_calls()
    module, inputs = calls_and_inputs(calls)
    got, expected = compile_and_run(module, inputs, out_of_range_shifts), module(*inputs)
    assert len(got) == len(expected) == len(calls)
    for (overload, dtype, template), g, e in zip(calls, got, expected):  # hamming_topk's: a tuple
        assert_same_tensors(results_of(g), results_of(e), what=f"{overload}{template} on {dtype_id(dtype)} in Triton")


def results_of(value):
    """A call's results as a list: hamming_topk's values and indices, another op's one tensor."""
    return list(value) if isinstance(value, (tuple, list)) else [value]


def codes_of(shape, dtype, rng, values=256):
    return torch.from_numpy(rng.integers(0, values, size=shape, dtype=np.uint8)).view(dtype)


def searches(x1, x2, queries, database, out):
    """hamming_distance (a Triton reduction over the bytes: batch dims broadcast, strided codes,
    out=) and hamming_topk (its C++ kernel, called from the compiled graph), each fed by or
    feeding fused code."""
    op.hamming_distance.out(x1[0, 0], x2[0], out=out)
    distances = op.hamming_distance(x1, x2)
    values, indices = op.hamming_topk(queries, database, 5)
    return (distances, (distances <= 130).sum(-1), op.hamming_distance(x1[0, 0, :, 1::2], x2[0, :, :-1:2]),
            values, indices, database[indices],
            *op.hamming_topk(op.packbits(queries > 1), op.packbits(database > 1), 3))


def test_hamming(rng, out_of_range_shifts):
    # Ties among the top-k's distances: bytes of 0 to 3.
    x1, x2 = codes_of((2, 1, 5, 33), torch.uint8, rng), codes_of((3, 7, 33), torch.int8, rng)
    queries, database = codes_of((4, 9), torch.uint8, rng, values=4), codes_of((23, 9), torch.int8, rng, values=4)
    out, expected_out = torch.full((5, 7), 9, dtype=torch.int32), torch.full((5, 7), 9, dtype=torch.int32)
    got = compile_and_run(searches, (x1, x2, queries, database, out), out_of_range_shifts)
    expected = searches(x1, x2, queries, database, expected_out)
    assert_same_tensors(got, expected, what="the search ops in Triton")
    assert torch.equal(out, expected_out)
