"""torch.compile (Inductor) of signbit, bitwise_count and the packing and search ops gives
eager's answers, fused with what surrounds them: the shifts and the checks of every op are in
test_inductor.py, whose helpers (levels, compiled functions, tails) these tests share. Two
files so that the README's test command, which runs each file whole in one of its processes,
compiles these graphs beside the shifts' instead of after them.
"""
import re

import numpy as np
import pytest
import torch
from torch._inductor.utils import run_and_get_code

import model
import torchops
from conftest import (
    FLOAT_DTYPES,
    INT_DTYPES,
    SAMPLED,
    assert_same_tensors,
    dtype_id,
    interesting_values,
    make_tensor,
    random_values,
    special_float_patterns,
)
from test_inductor import (
    BEST,
    BYTE_DTYPES,
    KERNEL_CALLS,
    LEVELS,
    TAIL,
    apart,
    assert_cases_compiled_equal_eager,
    cases_of,
    compiled,
    dynamo_settings,  # noqa: F401 (test_inductor.py's autouse fixture, here too)
    flat,
    generated_code,
    kernel_sources,
    torchops_calls,
    with_tail,
)

pytestmark = [pytest.mark.quick_run_one_of("level"), pytest.mark.compiles]

# --------------------------------------------------------------------------------------
# signbit
def float_bit_patterns(dtype):
    """Raw bits of conftest's special values (±0, ±inf, NaNs of both signs, subnormals, the
    normal extremes, ±1), a quiet NaN with another payload, and some random patterns."""
    bits = torch.finfo(dtype).bits
    special = {name: pattern for name, pattern, _ in special_float_patterns(dtype)}
    patterns = list(special.values()) + [special["+quiet_nan"] | 5, special["-quiet_nan"] | 5]
    patterns += np.random.default_rng(bits).integers(0, 1 << bits, size=64, dtype=np.uint64).tolist()
    return patterns


def float_tensor(dtype, patterns):
    signed = {16: torch.int16, 32: torch.int32, 64: torch.int64}[torch.finfo(dtype).bits]
    values = [model.wrap(p, signed) for p in patterns]
    return with_tail(values, signed).view(dtype)


def signbit_and_neighbours(x):
    """signbit alone, and fused with a select and a sum that read x again."""
    sign = torchops.signbit(x)
    return [sign, torch.where(sign, 1, 0).sum().reshape(1), torch.where(torchops.signbit(x), -1, 1)]


@pytest.mark.parametrize("level", LEVELS)
def test_signbit_of_every_float_bit_pattern_class(level):
    """Every float dtype in one graph."""
    cases, results = assert_cases_compiled_equal_eager(
        signbit_and_neighbours, False, level, [(float_tensor(dtype, float_bit_patterns(dtype)),) for dtype in FLOAT_DTYPES],
        [dtype_id(dtype) for dtype in FLOAT_DTYPES])
    for (x,), result in zip(cases, results):
        np.testing.assert_array_equal(result[0].numpy(), model.signbit_model(x))


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_signbit_of_integers_and_bool(dynamic, rng):
    dtypes = [*INT_DTYPES, torch.bool]
    cases, results = assert_cases_compiled_equal_eager(
        signbit_and_neighbours, dynamic, BEST,
        [(torch.tensor([True, False] * 40 + [True] * TAIL) if dtype == torch.bool
          else with_tail(interesting_values(dtype) + random_values(dtype, 100, rng), dtype),) for dtype in dtypes],
        [dtype_id(dtype) for dtype in dtypes])
    for (x,), result in zip(cases, results):
        np.testing.assert_array_equal(result[0].numpy(), model.signbit_model(x))


def test_generated_code_of_signbit_never_calls_torchops():
    dtypes = FLOAT_DTYPES + [torch.bool, torch.uint64]
    (xs,) = zip(*apart([(torch.zeros(40, dtype=dtype),) for dtype in dtypes]))
    assert "torch.ops.torchops" not in generated_code(cases_of(signbit_and_neighbours, (1,) * len(xs)), *xs)


# --------------------------------------------------------------------------------------
# bitwise_count
def bitwise_count_and_neighbours(x):
    """bitwise_count alone, and fused with a sum and an add that read x again."""
    count = torchops.bitwise_count(x)
    return [count, count.to(torch.int32).sum().reshape(1), torchops.bitwise_count(x[1:]) + 1]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("level", LEVELS)
def test_bitwise_count(level, dynamic, rng):
    """Every integer dtype and bool, in one graph: every value of the 8-bit ones."""
    dtypes = [*INT_DTYPES, torch.bool]

    def covering(dtype):
        if dtype == torch.bool:
            return torch.tensor([True, False] * 40 + [True] * TAIL)
        if dtype in BYTE_DTYPES:
            return with_tail(range(model.value_range(dtype)[0], model.value_range(dtype)[1] + 1), dtype)
        return with_tail(interesting_values(dtype) + random_values(dtype, 300, rng), dtype)

    cases, results = assert_cases_compiled_equal_eager(bitwise_count_and_neighbours, dynamic, level,
                                                       [(covering(dtype),) for dtype in dtypes],
                                                       [dtype_id(dtype) for dtype in dtypes])
    for (x,), result in zip(cases, results):
        np.testing.assert_array_equal(result[0].numpy(), np.bitwise_count(x.numpy()))


# --------------------------------------------------------------------------------------
# The packing ops: pointwise over their result, so they fuse with what makes x and what
# reads the result; every dim (a 3-d x's and None), both bit orders, every field width,
# counts that keep, drop and append fields. conftest.declared_functional_calls sweeps the
# dtypes on 1-d operands (below); these take random 3-d shapes of odd sizes.
def packing_everywhere(x, packed):
    results = []
    for dim in (0, 1, -1, None):
        for bitorder, bits, count in (("big", 2, 11), ("little", 4, None)):
            results.append(torchops.packbits(x, dim, bitorder))
            results.append(torchops.pack(x, bits, dim, bitorder))
            results.append(torchops.unpackbits(packed, dim, count, bitorder))
        results.append(torchops.pack(x, 1, dim))
        fields = (packed.numel() if dim is None else packed.shape[dim]) * 8
        for bits, count, bitorder, signed in ((1, -min(5, fields), "little", True), (2, 3, "big", False),
                                              (4, 1000, "little", True), (4, None, "big", False)):
            results.append(torchops.unpack(packed, bits, dim, count, bitorder, signed))
    return results


def packing_of_0d(x, packed):
    return [torchops.packbits(x), torchops.pack(x, 2, None, "little"), torchops.pack(x, 4, 0),
            torchops.unpackbits(packed, 0, 3, "little"), torchops.unpack(packed, 4, -1, None, "big", True),
            torchops.unpack(packed, 2, None, 9, "little", False)]


def random_shape(rng):
    """Three dims: odd sizes up to 70 (a vector loop's tail, a last group that is not full),
    sometimes a dim of 1 or 0."""
    return tuple(int(rng.choice([0, 1, 2, 3])) if rng.random() < 0.15 else int(rng.integers(1, 35)) * 2 + 1
                 for _ in range(3))


def packing_inputs(dtype, shape, rng):
    """x of `dtype` (values over its whole range, zeros among them) and bytes to unpack, of `shape`."""
    size = int(np.prod(shape))
    if dtype == torch.bool:
        x = torch.from_numpy(rng.random(size) < 0.5)
    else:
        x = make_tensor(random_values(dtype, size, rng), dtype)
        x[::3] = 0
    return x.reshape(shape), make_tensor(random_values(torch.uint8, size, rng), torch.uint8).reshape(shape)


def assert_packing_equals_eager(fn, dynamic, level, *args):
    got, expected = compiled(fn, dynamic, level)(*args), fn(*args)
    assert_same_tensors(got, expected, what=fn.__name__)
    assert all(g.is_contiguous() for g in got), [g.stride() for g in got]  # a new result is contiguous


# The scalar level and the best one (the other levels: the sweeps below); the best level on
# more dtypes, and with dynamic shapes.
PACKING_CASES = ([(torch.int8, False, "scalar"), (torch.int8, False, BEST), (torch.bool, False, BEST),
                  (torch.uint64, False, BEST), (torch.int32, True, BEST)])


@pytest.mark.quick_run_one_of("dtype", "level")  # the dtypes: each graph's every op on every dtype below
@pytest.mark.parametrize("dtype, dynamic, level", [
    pytest.param(dtype, dynamic, level, id=f"{dtype_id(dtype)}-{'dynamic' if dynamic else 'static'}-{level}")
    for dtype, dynamic, level in PACKING_CASES])
def test_packing_on_random_shapes(dtype, dynamic, level, rng):
    shapes = [random_shape(rng), (3, 5, 17)]
    for shape in shapes:
        assert_packing_equals_eager(packing_everywhere, dynamic, level, *packing_inputs(dtype, shape, rng))
    x, packed = packing_inputs(dtype, (), rng)
    assert_packing_equals_eager(packing_of_0d, dynamic, level, x, packed)


def packbits_of_positive(x):
    return torchops.packbits(x > 0)


def packbits_of_positive_along_0(x):
    return torchops.packbits(x > 0, 0, "little")


def dequantize_int4(packed, scale):
    return torchops.unpack(packed, 4, signed=True).to(torch.float32) * scale


@pytest.mark.parametrize("level", LEVELS)
def test_packing_fuses_with_what_makes_x_and_what_reads_the_result(level, rng):
    """packbits(x > 0) is one kernel that never writes the bools; an int4 dequantize one kernel
    that writes only the floats, in a vector loop at the vector levels."""
    x = torch.randn(4099)  # 8 * 512 + 3: the last group masked
    packed = make_tensor(random_values(torch.uint8, 4099, rng), torch.uint8)
    cases = [(packbits_of_positive, (x,)), (packbits_of_positive_along_0, (torch.randn(43, 99)[:, :97],)),
             (dequantize_int4, (packed, torch.tensor(0.25)))]
    for fn, args in cases:
        code = generated_code(fn, *args, level=level)
        kernels = kernel_sources(code)
        assert len(kernels) == 1 and "torch.ops.torchops" not in code, code
        assert "torch.bool" not in code and "torch.int8" not in code, code  # no temporary of x > 0 or of the fields
        assert_same_tensors([compiled(fn, False, level)(*args)], [fn(*args)], what=fn.__name__)
    if level != "scalar":
        assert "at::vec" in kernels[0], kernels[0]
    # and the dequantized values themselves: low nibble of 0x9F is -1, the high one -7
    assert dequantize_int4(torch.tensor([0x9F], dtype=torch.uint8), 1.0).tolist() == [-7.0, -1.0]


def dequantize_int4_to_bfloat16(packed, scale):
    return torchops.unpack(packed, 4, signed=True).to(torch.bfloat16) * scale


@pytest.mark.parametrize("level", [level for level in LEVELS if level != "scalar"])
def test_int4_dequantize_is_a_vector_loop(level, rng):
    """The dequantize's loop steps a vector of float32 lanes of fields at a time (for a bfloat16
    result too), and each vector loads the bytes of its fields, lanes / 2 of them, as scalars
    (the same in every lane: no gather lane by lane), and stores its results as a vector."""
    lanes = LEVELS[level] // 32
    packed = make_tensor(random_values(torch.uint8, 4099, rng), torch.uint8)  # a tail after the vectors
    for fn, scale in ((dequantize_int4, torch.tensor(0.25)),
                      (dequantize_int4_to_bfloat16, torch.tensor(0.25, dtype=torch.bfloat16))):
        (kernel,) = kernel_sources(generated_code(fn, packed, scale, level=level))
        (data,) = re.findall(r"const uint8_t\* (in_ptr\d+)", kernel)
        vector_loop = kernel[kernel.index("C10_LIKELY"):kernel.index("C10_UNLIKELY")]  # without its tail
        assert f"x0+=static_cast<int64_t>({lanes}L)" in kernel, kernel
        assert len(set(re.findall(rf"{data}\[[^\]]*\]", vector_loop))) == lanes // 2, kernel
        assert "tmpbuf" not in kernel and re.search(r"\.store\(out_ptr\d+ \+ static_cast<int64_t>\(x0\)", vector_loop)
        assert_same_tensors([compiled(fn, False, level)(packed, scale)], [fn(packed, scale)], what=fn.__name__)


def packing_into(x, packed, bits_out, fields_out, bytes_out):
    torchops.packbits(x > 0, out=bits_out)
    torchops.unpack(packed, 2, 0, 7, "little", True, out=fields_out)
    torchops.pack(x, 4, -1, "little", out=bytes_out)
    torchops.unpackbits(packed[:, :1], count=7, out=bytes_out)  # out= written again, all of it
    return bits_out, fields_out, bytes_out


@pytest.mark.parametrize("level", [BEST] if SAMPLED else list(LEVELS))
def test_packing_out(level, rng):
    """The out= overloads write into outs of the result's shape (Dynamo takes contiguous outs only)."""
    x, packed = packing_inputs(torch.int16, (7, 13), rng)

    def outs():
        return (torch.full((7, 2), 9, dtype=torch.uint8), torch.full((7, 13), 9, dtype=torch.int8),
                torch.full((7, 7), 9, dtype=torch.uint8))

    expected = packing_into(x, packed, *outs())
    written = outs()
    result = compiled(packing_into, False, level)(x, packed, *written)
    assert_same_tensors(result, expected)
    assert all(r is w for r, w in zip(result, written))  # written in place, as eager does


# --------------------------------------------------------------------------------------
# The search ops: hamming_distance is a reduction over the bytes, its bit count fused into the
# reduction's loop (no (..., M, N, B) tensor); hamming_topk calls its C++ kernel
# (_inductor.KERNEL_CALLS), through its out= overload, and no (Q, N) matrix is made.
# conftest.declared_functional_calls sweeps their dtypes on codes of 16 bytes (below); these
# take batch dims that broadcast, odd and empty code sizes, strided codes and ties.
def codes_of(shape, dtype, rng, values=256):
    """Random codes: bytes in [0, values), viewed as `dtype` (an int8 code's bits are its byte's)."""
    return torch.from_numpy(rng.integers(0, values, size=shape, dtype=np.uint8)).view(dtype)


def hamming_model(x1, x2):
    """docs/semantics.md section 16: NumPy's bit count of every pair of rows' xor, summed."""
    a, b = x1.numpy().view(np.uint8), x2.numpy().view(np.uint8)
    return np.bitwise_count(a[..., :, None, :] ^ b[..., None, :, :]).sum(-1, dtype=np.int64)


#: (x1's shape, x2's shape): batch dims that broadcast both ways, code sizes below and above
#: the vector widths (0: distances of 0; fewer than 8 bytes: Inductor unrolls the reduction),
#: no rows on either side.
HAMMING_SHAPES = [((5, 13), (7, 13)), ((2, 1, 3, 33), (4, 9, 33)), ((1, 4, 7), (3, 1, 6, 7)), ((3, 1), (4, 1)),
                  ((2, 5, 0), (2, 3, 0)), ((0, 16), (3, 16)), ((3, 100), (0, 100)), ((6, 64), (67, 64))]


def hamming_pairs(rng):
    """The operands of hamming_everywhere: each shape on each pair of code dtypes."""
    pairs = []
    for shape1, shape2 in HAMMING_SHAPES:
        for dtype1, dtype2 in ((torch.uint8, torch.uint8), (torch.int8, torch.int8), (torch.uint8, torch.int8)):
            pairs += [codes_of(shape1, dtype1, rng), codes_of(shape2, dtype2, rng)]
    return pairs


def hamming_everywhere(*codes):
    """Every pair's distances, and strided codes: a transposed x1, every other byte of x2."""
    results = [torchops.hamming_distance(x1, x2) for x1, x2 in zip(codes[::2], codes[1::2])]
    x1, x2 = codes[-2], codes[-1]
    results.append(torchops.hamming_distance(x1.t().contiguous().t(), x2))
    results.append(torchops.hamming_distance(x1[:, ::2], x2[:, 1::2]))
    return results


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("level", LEVELS)
def test_hamming_distance(level, dynamic, rng):
    codes = hamming_pairs(rng)
    got, expected = compiled(hamming_everywhere, dynamic, level)(*codes), hamming_everywhere(*codes)
    assert_same_tensors(got, expected, what=f"hamming_distance at Inductor's {level} level")
    for result, x1, x2 in zip(got, codes[::2], codes[1::2]):  # and against NumPy
        np.testing.assert_array_equal(result.numpy(), hamming_model(x1, x2))


def neighbours_within(x, database, radius):
    """Binary embeddings' search by radius: each row's codes (packbits of its signs) against the
    database's, and how many lie within `radius` bits."""
    distances = torchops.hamming_distance(torchops.packbits(x > 0), torchops.packbits(database > 0))
    return distances, (distances <= radius).sum(-1)


@pytest.mark.parametrize("level", LEVELS)
def test_hamming_distance_fuses(level):
    """The bit count runs inside the reduction's loop (vectorized at the vector levels): no
    torchops call, and no buffer of the (M, N, B) bytes; the codes are packed first."""
    x, database = torch.randn(6, 256), torch.randn(67, 256)
    code = generated_code(neighbours_within, x, database, 40, level=level)
    assert "torch.ops.torchops" not in code, code
    assert "(6, 67, 32)" not in code, code  # no (M, N, B) buffer
    kernels = [kernel for kernel in kernel_sources(code) if "^" in kernel]  # the one with the xor
    assert len(kernels) == 1, code
    if level != "scalar":
        assert "at::vec" in kernels[0], kernels[0]
    assert_same_tensors(compiled(neighbours_within, False, level)(x, database, 40),
                        neighbours_within(x, database, 40))


def hamming_distance_into(x1, x2, out, batched_out):
    torchops.hamming_distance(x1, x2, out=out)
    torchops.hamming_distance(x1, x2.expand(2, -1, -1), out=batched_out)
    return out, batched_out


def test_hamming_distance_out(rng):
    """The out= overload writes into outs of the result's shape (Dynamo takes contiguous outs only)."""
    x1, x2 = codes_of((5, 13), torch.uint8, rng), codes_of((7, 13), torch.int8, rng)

    def outs():
        return torch.full((5, 7), 9, dtype=torch.int32), torch.full((2, 5, 7), 9, dtype=torch.int32)

    expected = hamming_distance_into(x1, x2, *outs())
    written = outs()
    result = compiled(hamming_distance_into, False, BEST)(x1, x2, *written)
    assert_same_tensors(result, expected)
    assert all(r is w for r, w in zip(result, written))  # written in place, as eager does


def nearest(queries, database, k):
    """The k nearest codes, and the codes of the packed signs' nearest (an extern call fed by
    fused kernels)."""
    values, indices = torchops.hamming_topk(queries, database, k)
    return values, indices, database[indices], torchops.hamming_topk(queries[:, ::2], database[:, ::2], k)


def topk_model(queries, database, k):
    """The contract's order: nearest first, the smaller index first among equal distances."""
    distances = torch.from_numpy(hamming_model(queries, database))
    indices = torch.sort(distances, dim=-1, stable=True).indices[:, :k]
    return distances.gather(-1, indices).to(torch.int32), indices


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_hamming_topk_calls_its_kernel(dynamic, rng):
    """fullgraph=True (no graph break), eager's results with ties among the distances (bytes
    of 0 to 3), every k from none to all; the C++ kernel is the one torchops call in the code,
    and no (Q, N) buffer is allocated."""
    queries = codes_of((5, 9), torch.uint8, rng, values=4)
    database = codes_of((41, 9), torch.int8, rng, values=4)
    for k in (0, 1, 3, 40, 41):
        fresh = torch.compile(nearest, fullgraph=True, dynamic=dynamic, options={"fx_graph_cache": False})
        got, code = run_and_get_code(fresh, queries, database, k)
        expected = nearest(queries, database, k)
        assert_same_tensors(flat(got), flat(expected), what=f"hamming_topk k={k}")
        assert_same_tensors(got[:2], topk_model(queries, database, k), what=f"hamming_topk k={k} (model)")
        source = "\n".join(code)
        assert torchops_calls(source) == KERNEL_CALLS, source
        if not dynamic and k < 41:  # (the results of k = N are (Q, N))
            assert "(5, 41)" not in source, source


def hamming_topk_into(queries, database, values, indices):
    torchops.hamming_topk(queries, database, 4, out=(values, indices))
    return values, indices


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_hamming_topk_out(dynamic, rng):
    queries, database = codes_of((3, 5), torch.int8, rng, values=3), codes_of((11, 5), torch.uint8, rng, values=3)

    def outs():
        return torch.full((3, 4), 9, dtype=torch.int32), torch.full((3, 4), 9, dtype=torch.int64)

    expected = hamming_topk_into(queries, database, *outs())
    written = outs()
    result = compiled(hamming_topk_into, dynamic, BEST)(queries, database, *written)
    assert_same_tensors(result, expected)
    assert all(r is w for r, w in zip(result, written))  # written in place, as eager does
