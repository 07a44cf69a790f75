"""Binary embeddings: float32 vectors quantized to one bit a dimension, searched by Hamming distance,
the best candidates rescored in float32.

    python examples/binary_embeddings.py [--vectors N] [--dim D] [--queries Q] [--k K]
                                         [--rescore-factor F] [--device cpu|cuda]

1. Quantize: the sign of each dimension, 8 to a byte: torchops.packbits(embeddings > 0, dim=-1).
   A 1024-dimension float32 vector (4 KiB) becomes 128 bytes.
2. Search: torchops.hamming_topk(packed_queries, database, k * F), the k * F database vectors
   nearest each query by Hamming distance (the bits in which two packed vectors differ),
   nearest first, equal distances by index. It reads the database once for all the queries,
   split across torch's threads, and never makes the (queries, vectors) distance matrix.
3. Rescore: the candidates' float32 rows gathered into (queries, k * F, dim), one torch.bmm with
   the float32 queries gives their dot products (their cosines: the vectors are normalized),
   and the k best of them are the answer: the usual way to win back what the bits lost.

The same code runs on CUDA tensors (--device cuda). The search is checked against the same
search in NumPy (numpy_hamming_topk: np.bitwise_xor, np.bitwise_count, ties by index too), and
the recall@k of the binary search alone and of the rescored one measured against the exact
float32 search. The data are synthetic: normalized vectors in clusters within clusters,
queries near database vectors.

Also here for benchmarks/embeddings.py, which times torchops.hamming_topk against them:
composite_hamming_topk, the same search composed of PyTorch's ops and torchops.bitwise_count
(the database by blocks, a (queries, block) matrix of distances each), and numpy_hamming_topk.
"""
import argparse
import sys
import time

import numpy as np
import torch

import torchops


def quantize(embeddings: torch.Tensor) -> torch.Tensor:
    """(n, dim) float -> (n, dim / 8) uint8: bit k of a vector is 1 where dimension k is positive."""
    return torchops.packbits(embeddings > 0, dim=-1)


def search_and_rescore(embeddings: torch.Tensor, database: torch.Tensor, queries: torch.Tensor,
                       packed_queries: torch.Tensor, k: int, factor: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(binary, rescored), each (queries, k) database indices: the k nearest by Hamming distance,
    and the k best by float32 dot product among the k * factor nearest by Hamming distance.
    embeddings: (n, dim) float32 and database: (n, dim / 8) its packed bits; queries: (q, dim)
    float32 and packed_queries: (q, dim / 8) theirs."""
    candidates = min(k * factor, database.shape[0])
    _, nearest = torchops.hamming_topk(packed_queries, database, candidates)  # (q, candidates), nearest first
    vectors = embeddings[nearest]  # (q, candidates, dim)
    scores = torch.bmm(vectors, queries[:, :, None])[:, :, 0]  # (q, candidates)
    best = torch.topk(scores, k, dim=1).indices
    return nearest[:, :k], torch.gather(nearest, 1, best)


# ---------------------------------------------------------------------------------------------
# The composite search and NumPy's, for the checks below and benchmarks/embeddings.py.

def as_words(packed: torch.Tensor) -> torch.Tensor:
    """The packed bytes of each vector as int64 words: an eighth of the elements to xor. (PyTorch
    xors int64 several times faster than uint64; the xor is viewed as uint64 to be counted, as
    bitwise_count counts the bits of |x| in a signed word, as np.bitwise_count does.)"""
    if packed.shape[-1] % 8:
        raise ValueError(f"a packed vector must have a multiple of 8 bytes (a dim multiple of 64), "
                         f"got {packed.shape[-1]}")
    return packed.contiguous().view(torch.int64)


BYTE_PAIRS = 0x00FF00FF00FF00FF


def add_counts(counts: torch.Tensor, out: torch.Tensor, lanes: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """out = the sum of each vector's counts: (q, b, words) uint8 bit counts of 64-bit words ->
    (q, b) int64 distances. lanes, high: (q, b, words / 8) int64 scratch.

    torch.sum over a last dim this short is slow (16 bytes to int16: 4x the time of this), so
    when the words come in eights, each eight counts (at most 64 each) is read as one int64, its
    bytes added in pairs into 16-bit lanes (at most 128 each), the lanes of a vector's int64s
    added (at most 128 * words / 8), then a multiply adds the four lanes into the top one."""
    if counts.shape[-1] % 8:
        return torch.sum(counts, dim=-1, out=out)
    eights = counts.view(torch.int64)
    torch.bitwise_and(eights, BYTE_PAIRS, out=lanes)
    lanes.add_(torch.bitwise_right_shift(eights, 8, out=high).bitwise_and_(BYTE_PAIRS))
    out.copy_(lanes[..., 0])
    for i in range(1, lanes.shape[-1]):
        out.add_(lanes[..., i])
    return out.mul_(0x0001000100010001).bitwise_right_shift_(48)


def composite_hamming_topk(database: torch.Tensor, queries: torch.Tensor, k: int, block: int = 2048):
    """(distances, indices), each (queries, k), of the k database vectors nearest each query by
    Hamming distance, nearest first (among equal distances, any), composed of PyTorch's ops and
    torchops.bitwise_count. database: (n, bytes) and queries: (q, bytes), packed uint8.

    The database goes by blocks of `block` vectors: the xor of every query with a block is
    queries * block * bytes of scratch, reused for each block, whatever the database's size."""
    database, queries = as_words(database), as_words(queries)
    (n, words), q = database.shape, queries.shape[0]
    k = min(k, n)
    block = min(block, n)
    differ = torch.empty(q, block, words, dtype=torch.int64)
    counts = torch.empty(q, block, words, dtype=torch.uint8)
    lanes = torch.empty(q, block, words // 8, dtype=torch.int64)
    high = torch.empty_like(lanes)
    distances = torch.empty(q, block, dtype=torch.int64)
    best_distances, best_indices = [], []
    for start in range(0, n, block):
        rows = database[start:start + block]
        size = rows.shape[0]
        if size < block:  # the last block: smaller scratch, contiguous
            differ, counts, lanes, high, distances = (t[:, :size].contiguous() for t in
                                                      (differ, counts, lanes, high, distances))
        torch.bitwise_xor(queries[:, None, :], rows[None, :, :], out=differ)
        torchops.bitwise_count(differ.view(torch.uint64), out=counts)
        add_counts(counts, distances, lanes, high)
        nearest, where = torch.topk(distances, min(k, size), dim=1, largest=False, sorted=False)
        best_distances.append(nearest)
        best_indices.append(where + start)
    candidates, candidate_indices = torch.cat(best_distances, dim=1), torch.cat(best_indices, dim=1)
    nearest, where = torch.topk(candidates, k, dim=1, largest=False, sorted=True)
    return nearest, torch.gather(candidate_indices, 1, where)


def numpy_bitwise_count(words: np.ndarray) -> np.ndarray:
    """The 1 bits of each element: np.bitwise_count (NumPy 2), else a table of each byte's."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words)
    table = np.array([bin(value).count("1") for value in range(256)], dtype=np.uint8)
    return table[words.view(np.uint8)].reshape(*words.shape, words.itemsize).sum(axis=-1, dtype=np.uint8)


def numpy_quantize(embeddings: np.ndarray) -> np.ndarray:
    return np.packbits(embeddings > 0, axis=-1)


def numpy_hamming_topk(database: np.ndarray, queries: np.ndarray, k: int, block: int = 2048):
    """torchops.hamming_topk's answer in NumPy: (distances int32, indices int64), each (queries, k),
    nearest first, equal distances by index. The composite's blocks, with np.bitwise_xor and
    np.bitwise_count; each distance and its index are one int64 key (distance * n + index), so
    that np.partition (each block's k smallest) and the final np.sort order ties by index."""
    database, queries = database.view(np.uint64), queries.view(np.uint64)
    (n, words), q = database.shape, queries.shape[0]
    k = min(k, n)
    block = min(block, n)
    differ = np.empty(q * block * words, dtype=np.uint64)
    keys = np.empty(q * block, dtype=np.int64)
    best = []
    for start in range(0, n, block):
        rows = database[start:start + block]
        size = rows.shape[0]
        differ_now = differ[:q * size * words].reshape(q, size, words)
        np.bitwise_xor(queries[:, None, :], rows[None, :, :], out=differ_now)
        keys_now = keys[:q * size].reshape(q, size)
        numpy_bitwise_count(differ_now).sum(axis=-1, dtype=np.int64, out=keys_now)
        keys_now *= n
        keys_now += np.arange(start, start + size, dtype=np.int64)
        keep = min(k, size)
        # (a copy of the k columns: a view would keep each block's whole partitioned keys alive)
        best.append(np.partition(keys_now, keep - 1, axis=1)[:, :keep].copy() if keep < size else keys_now.copy())
    nearest = np.sort(np.concatenate(best, axis=1), axis=1)[:, :k]
    return (nearest // n).astype(np.int32), nearest % n


def hamming_distances(database: torch.Tensor, queries: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """The Hamming distance of each query to the database vectors `indices` (q, k) names."""
    differ = torch.bitwise_xor(as_words(database)[indices], as_words(queries)[:, None, :])
    return torchops.bitwise_count(differ.view(torch.uint64)).sum(dim=-1)


def same_search(database, queries, found, expected) -> bool:
    """Whether two searches found the same distances, and each index is at the distance given
    (equal distances may come in any order, so indices are compared through their distances)."""
    (distances, indices), (expected_distances, _) = found, expected
    distances, indices = torch.as_tensor(distances).long(), torch.as_tensor(indices).long()
    unique = all(len(set(row)) == len(row) for row in indices.tolist())
    return (torch.equal(distances, torch.as_tensor(expected_distances).long()) and unique
            and torch.equal(hamming_distances(database, queries, indices), distances))


# ---------------------------------------------------------------------------------------------
# The data and the measures.

def clustered_embeddings(vectors: int, dim: int, queries: int, generator: torch.Generator):
    """Normalized float32 vectors around 1024 centres in 64 groups (topics and subtopics), and
    queries near randomly chosen ones."""
    topics = torch.randn(64, dim, generator=generator)
    subtopics = topics.repeat_interleave(16, dim=0) + 0.6 * torch.randn(1024, dim, generator=generator)
    database = subtopics[torch.randint(0, 1024, (vectors,), generator=generator)]
    database += 0.35 * torch.randn(vectors, dim, generator=generator)
    database = torch.nn.functional.normalize(database, dim=-1)
    near = database[torch.randint(0, vectors, (queries,), generator=generator)]
    noise = torch.randn(queries, dim, generator=generator) / dim ** 0.5  # of norm about 1, as the vectors'
    return database, torch.nn.functional.normalize(near + 0.3 * noise, dim=-1)


def recall(found: torch.Tensor, exact: torch.Tensor) -> float:
    """The share of the exact neighbours that were found."""
    return sum(len(set(a) & set(b)) for a, b in zip(found.tolist(), exact.tolist())) / exact.numel()


def timed(function, device: torch.device):
    """(function's result, its milliseconds), waiting for the device's queued work."""
    def synchronize():
        if device.type != "cpu":
            torch.get_device_module(device.type).synchronize(device)
    synchronize()
    start = time.perf_counter()
    result = function()
    synchronize()
    return result, (time.perf_counter() - start) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=20000)
    parser.add_argument("--dim", type=int, default=1024, help="a multiple of 64")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rescore-factor", type=int, default=4,
                        help="the k * F nearest by Hamming distance are rescored in float32")
    parser.add_argument("--device", default="cpu", help="cpu (the default), cuda, ...: where every tensor lives")
    args = parser.parse_args()
    device = torch.device(args.device)
    args.k = min(args.k, args.vectors)
    generator = torch.Generator().manual_seed(0)
    # Made on the CPU, whatever the device, so that every device searches the same vectors.
    embeddings, queries = (t.to(device) for t in clustered_embeddings(args.vectors, args.dim, args.queries, generator))

    (database, packed_queries), quantize_ms = timed(lambda: (quantize(embeddings), quantize(queries)), device)
    print(f"binary embeddings (torch {torch.__version__}, {device}): {args.vectors} vectors of {args.dim} float32 "
          f"dimensions ({embeddings.numel() * 4 / 2**20:.1f} MiB) packed to {database.shape[1]} bytes each "
          f"({database.numel() / 2**20:.1f} MiB) in {quantize_ms:.1f} ms")
    database_cpu, packed_queries_cpu = database.cpu(), packed_queries.cpu()
    if not np.array_equal(database_cpu.numpy(), numpy_quantize(embeddings.cpu().numpy())):
        print("BAD torchops.packbits(embeddings > 0) differs from np.packbits", file=sys.stderr)
        return 1

    found, search_ms = timed(lambda: torchops.hamming_topk(packed_queries, database, args.k), device)
    found = tuple(t.cpu() for t in found)
    expected = numpy_hamming_topk(database_cpu.numpy(), packed_queries_cpu.numpy(), args.k)
    if not (same_search(database_cpu, packed_queries_cpu, found, expected)
            and torch.equal(found[1], torch.from_numpy(expected[1]))):
        print("BAD torchops.hamming_topk and NumPy's search found different neighbours", file=sys.stderr)
        return 1
    print(f"search: {args.queries} queries, the {args.k} nearest by Hamming distance in {search_ms:.1f} ms "
          f"(torchops.hamming_topk, {torch.get_num_threads()} threads); the same distances as NumPy's search, "
          f"and the same indices (equal distances by index)")

    exact, exact_ms = timed(lambda: torch.topk(queries @ embeddings.T, args.k, dim=1).indices, device)
    (binary, rescored), rescore_ms = timed(
        lambda: search_and_rescore(embeddings, database, queries, packed_queries, args.k, args.rescore_factor), device)
    exact, binary, rescored = exact.cpu(), binary.cpu(), rescored.cpu()
    print(f"rescore: the {args.k * args.rescore_factor} nearest by Hamming distance, their float32 vectors "
          f"gathered and scored by one torch.bmm, the best {args.k} kept: {rescore_ms:.1f} ms with the search "
          f"(the exact float32 search: {exact_ms:.1f} ms, reading {embeddings.numel() * 4 / 2**20:.1f} MiB)")
    print(f"recall@{args.k} against the exact float32 search: binary {recall(binary, exact):.2f}, "
          f"the binary top {args.k * args.rescore_factor} rescored in float32 {recall(rescored, exact):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
