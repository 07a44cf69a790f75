"""torchops.hamming_distance and hamming_topk (docs/semantics.md, "Binary-embedding search"):
against NumPy's bitwise_count of the xor and the model (tests/model.py) at every kernel level,
on both call paths: code sizes around every vector width and the sizes with loops of their
own, int8 and uint8 codes, batch dims, layouts, empty shapes, ties (the smaller index first),
every k, one call split across threads giving the one-thread answer, refused calls that
leave every tensor as it was, and a search's peak memory."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import model
import torchops
from conftest import OTHER_DEVICES_PATH, assert_unchanged, snapshot

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = [pytest.mark.usefixtures("call_path"), pytest.mark.kernels]

ops = torch.ops.torchops
APIS = ("python", "ops")
# Code sizes in bytes: every one up to 70 (the 8-byte words' and each vector width's tails),
# around the wider vectors' multiples, and the sizes with loops of their own (32, 64, 96, 128,
# 256); on the other devices' paths (a Triton call costs milliseconds there) a few.
SIZES = (list(range(0, 71)) + [95, 96, 97, 127, 128, 129, 191, 192, 193, 255, 256, 257, 300, 513]
         if OTHER_DEVICES_PATH is None else [0, 1, 7, 8, 9, 32, 64, 100, 128, 256])


def distance(api, x1, x2, out=None):
    if api == "python":
        return torchops.hamming_distance(x1, x2, out=out)
    if out is None:
        return ops.hamming_distance.default(x1, x2)
    returned = ops.hamming_distance.out(x1, x2, out=out)
    assert returned is out, "torch.ops.torchops.hamming_distance.out did not return out"
    return returned


def topk(api, queries, database, k, out=None):
    if api == "python":
        return torchops.hamming_topk(queries, database, k, out=out)
    if out is None:
        return ops.hamming_topk.default(queries, database, k)
    values, indices = ops.hamming_topk.out(queries, database, k, values=out[0], indices=out[1])
    assert values is out[0] and indices is out[1], "torch.ops.torchops.hamming_topk.out did not return its outs"
    return values, indices


def codes(rng, *shape, dtype=torch.uint8):
    return torch.from_numpy(rng.integers(0, 256, size=shape, dtype=np.uint8)).view(dtype)


def numpy_distances(x1, x2):
    """NumPy's answer: the 1 bits of each pair's xor (np.bitwise_count), summed over the bytes."""
    a, b = x1.contiguous().view(torch.uint8).numpy(), x2.contiguous().view(torch.uint8).numpy()
    return np.bitwise_count(a[..., :, None, :] ^ b[..., None, :, :]).sum(-1, dtype=np.int32)


def numpy_topk(queries, database, k):
    """Each query's database rows in the contract's order, (distance, index), the first k."""
    distances = numpy_distances(queries, database).astype(np.int64)
    order = np.argsort(distances * max(database.shape[0], 1) + np.arange(database.shape[0]), axis=1, kind="stable")
    order = order[:, :k]
    return np.take_along_axis(distances, order, 1).astype(np.int32), order


def assert_topk(result, expected):
    values, indices = result
    assert values.dtype == torch.int32 and indices.dtype == torch.int64
    np.testing.assert_array_equal(values.numpy(), expected[0])
    np.testing.assert_array_equal(indices.numpy(), expected[1])


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("size", SIZES)
def test_distances_of_every_code_size(api, size, rng, cpu_capability):
    # 9 rows: two blocks of 4 held in registers and one alone; the database side long enough
    # for several of the kernels' rows.
    x1, x2 = codes(rng, 9, size), codes(rng, 13, size)
    got = distance(api, x1, x2)
    assert got.dtype == torch.int32 and got.shape == (9, 13)
    np.testing.assert_array_equal(got.numpy(), numpy_distances(x1, x2))


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("size", SIZES)
def test_topk_of_every_code_size(api, size, rng, cpu_capability):
    queries = codes(rng, 6, size)
    database = codes(rng, 11, size)[torch.from_numpy(rng.integers(0, 11, size=40))]  # repeated rows: ties
    assert_topk(topk(api, queries, database, 7), numpy_topk(queries, database, 7))


@pytest.mark.parametrize("api", APIS)
def test_distances_against_the_model(api, rng, cpu_capability):
    cases = [
        (codes(rng, 3, 5), codes(rng, 4, 5, dtype=torch.int8)),  # int8 beside uint8: only bits count
        (codes(rng, 2, 1, 3, 9), codes(rng, 4, 2, 9)),  # batch dims broadcast: (2, 4)
        (codes(rng, 9, 3).t(), codes(rng, 2, 9)),  # transposed: bytes a row apart
        (codes(rng, 4, 12)[:, ::2], codes(rng, 3, 12)[::2, 1::2]),  # sliced
        (codes(rng, 1, 2, 6).expand(3, 2, 6), codes(rng, 5, 6)),  # expanded
        (torch.empty(2, 0, 4, dtype=torch.uint8), codes(rng, 3, 4)),  # no rows
        (torch.empty(3, 0, dtype=torch.int8), torch.empty(2, 0, dtype=torch.uint8)),  # codes of 0 bytes: 0
    ]
    for x1, x2 in cases:
        got = distance(api, x1, x2)
        expected = model.hamming_distance_model(x1, x2)
        assert tuple(got.shape) == expected.shape and got.is_contiguous()
        np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("api", APIS)
def test_topk_against_the_model(api, rng, cpu_capability):
    database = codes(rng, 4, 3)[torch.tensor([0, 1, 1, 2, 0, 3, 3, 3, 1, 0, 2])]  # many ties
    queries = codes(rng, 5, 3)
    for k in range(database.shape[0] + 1):
        got = topk(api, queries, database, k)
        assert_topk(got, model.hamming_topk_model(queries, database, k))
    # int8 queries against a uint8 database, a transposed database
    assert_topk(topk(api, queries.view(torch.int8), database.t().contiguous().t(), 4),
                model.hamming_topk_model(queries, database, 4))


@pytest.mark.parametrize("api", APIS)
def test_empty_searches(api, rng):
    values, indices = topk(api, torch.empty(0, 8, dtype=torch.uint8), codes(rng, 5, 8), 3)
    assert values.shape == indices.shape == (0, 3)
    values, indices = topk(api, codes(rng, 2, 8), torch.empty(0, 8, dtype=torch.uint8), 0)
    assert values.shape == indices.shape == (2, 0)
    values, indices = topk(api, codes(rng, 2, 8), codes(rng, 5, 8), 0)
    assert values.shape == indices.shape == (2, 0)


@pytest.mark.parametrize("api", APIS)
def test_the_signed_form_of_codes_gives_the_same_distances(api, rng):
    # sentence-transformers' "binary" precision is the "ubinary" codes minus 128 as int8:
    # the same bits but the top one, flipped in every code, so every distance is the same.
    ubinary, database = codes(rng, 3, 16), codes(rng, 50, 16)
    binary = (ubinary.to(torch.int16) - 128).to(torch.int8)
    binary_database = (database.to(torch.int16) - 128).to(torch.int8)
    assert torch.equal(distance(api, binary, binary_database), distance(api, ubinary, database))
    for a, b in zip(topk(api, binary, binary_database, 10), topk(api, ubinary, database, 10)):
        assert torch.equal(a, b)


@pytest.mark.parametrize("api", APIS)
def test_outs(api, rng, cpu_capability):
    x1, x2 = codes(rng, 3, 20), codes(rng, 4, 20)
    out = torch.full((4, 3), -1, dtype=torch.int32).t()  # strided: written in place
    assert distance(api, x1, x2, out=out) is out
    np.testing.assert_array_equal(out.numpy(), numpy_distances(x1, x2))
    resized = torch.empty(0, dtype=torch.int32)
    distance(api, x1, x2, out=resized)
    assert resized.shape == (3, 4) and resized.is_contiguous()
    outs = (torch.empty(5, 3, dtype=torch.int32).t(), torch.empty(0, dtype=torch.int64))
    returned = topk(api, x1, x2, 4, out=outs)
    assert returned[0] is outs[0] and returned[1] is outs[1]
    assert_topk(outs, numpy_topk(x1, x2, 4))


@pytest.mark.parametrize("api", APIS)
def test_a_refused_call_leaves_every_tensor_as_it_was(api, rng):
    x1, x2 = codes(rng, 3, 8), codes(rng, 4, 7)
    out = torch.full((3, 4), 7, dtype=torch.int32)
    before = snapshot(x1, x2, out)
    with pytest.raises(ValueError, match=r"^torchops.hamming_distance: x1 and x2 must hold codes of the same size, "
                                         r"got 8 bytes \(x1\) and 7 bytes \(x2\)"):
        distance(api, x1, x2, out=out)
    assert_unchanged(before)
    values, indices = torch.zeros(3, 5, dtype=torch.int32), torch.zeros(3, 5, dtype=torch.int64)
    before = snapshot(values, indices)
    with pytest.raises(IndexError, match=r"^torchops.hamming_topk: k 5 is out of range for a database of 4 codes"):
        topk(api, x1, codes(rng, 4, 8), 5, out=(values, indices))
    assert_unchanged(before)
    # The second out refused after the first passed its checks: the first, which needs a
    # resize, is left as it was too.
    values, indices = torch.full((2,), 7, dtype=torch.int32), torch.zeros(1, dtype=torch.int64).expand(3, 2)
    before = snapshot(values, indices)
    with pytest.raises(RuntimeError, match=r"^torchops.hamming_topk: unsupported operation: more than one element "
                                           r"of the written-to tensor refers to a single memory location"):
        topk(api, x1, codes(rng, 4, 8), 2, out=(values, indices))
    assert_unchanged(before)
    with pytest.raises(TypeError, match=r"^torchops.hamming_topk: queries must be a uint8 or int8 tensor of packed "
                                        r"codes, got float32; pack float embeddings' signs with torchops.packbits"):
        topk(api, torch.ones(2, 8), x1, 1)


@pytest.mark.parametrize("threads", [2])
def test_one_search_split_across_threads_gives_the_one_thread_answer(threads, rng, restore_num_threads,
                                                                     cpu_capability):
    # Enough codes for a range per thread; ties across the ranges' boundary (repeated rows).
    database = codes(rng, 64, 32)[torch.from_numpy(rng.integers(0, 64, size=20_000))]
    queries = codes(rng, 9, 32)
    torch.set_num_threads(1)
    one = ops.hamming_topk(queries, database, 50)
    torch.set_num_threads(threads)
    split = ops.hamming_topk(queries, database, 50)
    assert all(torch.equal(a, b) for a, b in zip(one, split))
    assert_topk(split, numpy_topk(queries, database, 50))
    x1, x2 = codes(rng, 70, 64), codes(rng, 3000, 64)
    np.testing.assert_array_equal(ops.hamming_distance(x1, x2).numpy(), numpy_distances(x1, x2))


# A search's memory, in a process of its own: the peak resident size (VmHWM, reset through
# /proc/self/clear_refs) grows by the results and the scratch of threads x Q x k candidates,
# not by a (Q, N) matrix of distances (here 256 x 512K int32: 512 MiB). glibc's malloc takes
# blocks of 128 KiB and more from mmap, so that what a call frees leaves the resident size.
_SEARCH_MEMORY = """
import torch, torchops
def peak_kib():
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM:")).split()[1])
generator = torch.Generator().manual_seed(0)
queries = torch.randint(0, 256, (256, 16), dtype=torch.uint8, generator=generator)
database = torch.randint(0, 256, (512 * 1024, 16), dtype=torch.uint8, generator=generator)
torchops.hamming_topk(queries[:1], database[:8192], 10)  # the library's and the pool's own first use
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")
before = peak_kib()
values, indices = torchops.hamming_topk(queries, database, 10)
print(peak_kib() - before)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc/self/clear_refs")
@pytest.mark.skipif(OTHER_DEVICES_PATH is not None, reason="the CPU kernels' scratch")
def test_a_search_makes_no_matrix_of_every_distance():
    result = subprocess.run([sys.executable, "-c", _SEARCH_MEMORY], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "MALLOC_MMAP_THRESHOLD_": str(128 * 1024)})
    assert result.returncode == 0, result.stderr
    growth_mib = int(result.stdout.split()[-1]) / 1024
    assert growth_mib < 16, f"one search of 256 queries over 512K codes grew the process by {growth_mib:.1f} MiB"
