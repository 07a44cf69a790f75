"""Binary embeddings: float32 vectors quantized to one bit a dimension, searched by Hamming distance.

    python examples/binary_embeddings.py [--vectors N] [--dim D] [--queries Q] [--k K]

1. Quantize: the sign of each dimension, 8 to a byte: torchops.packbits(embeddings > 0, dim=-1).
   A 1024-dimension float32 vector (4 KiB) becomes 128 bytes.
2. Search: the Hamming distance between two packed vectors is the number of bits in which they
   differ: torch.bitwise_xor of their bytes (read as 64-bit words), torchops.bitwise_count, summed
   over the words. The k nearest are torch.topk's, taken block by block over the database so
   that the xor's scratch stays small.
3. Rescore: the binary search's best candidates re-ranked by their float32 dot product with
   the query, the usual way to win back what the bits lost.

The search is checked against the same search in NumPy (np.packbits, np.bitwise_xor,
np.bitwise_count, np.argpartition), and its recall measured against the exact float32 search.
The data are synthetic: normalized vectors in clusters within clusters, queries near database vectors.
benchmarks/embeddings.py times these functions against NumPy and faiss.
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


def hamming_topk(database: torch.Tensor, queries: torch.Tensor, k: int, block: int = 2048):
    """(distances, indices), each (queries, k), of the k database vectors nearest each query by
    Hamming distance, nearest first (among equal distances, any). database: (n, bytes) and
    queries: (q, bytes), packed uint8.

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
    """hamming_topk in NumPy: the same blocks and scratch, np.argpartition for each block's k nearest."""
    database, queries = database.view(np.uint64), queries.view(np.uint64)
    (n, words), q = database.shape, queries.shape[0]
    k = min(k, n)
    block = min(block, n)
    differ = np.empty(q * block * words, dtype=np.uint64)
    distances = np.empty(q * block, dtype=np.int32)
    best_distances, best_indices = [], []
    for start in range(0, n, block):
        rows = database[start:start + block]
        size = rows.shape[0] * q
        differ_now = differ[:size * words].reshape(q, rows.shape[0], words)
        np.bitwise_xor(queries[:, None, :], rows[None, :, :], out=differ_now)
        distances_now = distances[:size].reshape(q, rows.shape[0])
        numpy_bitwise_count(differ_now).sum(axis=-1, dtype=np.int32, out=distances_now)
        keep = min(k, rows.shape[0])
        where = np.argpartition(distances_now, keep - 1, axis=1)[:, :keep] if keep < rows.shape[0] else \
            np.broadcast_to(np.arange(rows.shape[0]), distances_now.shape)
        best_distances.append(np.take_along_axis(distances_now, where, axis=1))
        best_indices.append(where + start)
    candidates, candidate_indices = np.concatenate(best_distances, axis=1), np.concatenate(best_indices, axis=1)
    order = np.argsort(candidates, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(candidates, order, axis=1), np.take_along_axis(candidate_indices, order, axis=1)


def hamming_distances(database: torch.Tensor, queries: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """The Hamming distance of each query to the database vectors `indices` (q, k) names."""
    differ = torch.bitwise_xor(as_words(database)[indices], as_words(queries)[:, None, :])
    return torchops.bitwise_count(differ.view(torch.uint64)).sum(dim=-1)


def same_search(database, queries, found, expected) -> bool:
    """Whether two searches found the same distances, and each index is at the distance given
    (equal distances may come in any order, so indices are compared through their distances)."""
    (distances, indices), (expected_distances, _) = found, expected
    unique = all(len(set(row)) == len(row) for row in indices.tolist())
    return (torch.equal(distances, torch.as_tensor(expected_distances).to(distances.dtype)) and unique
            and torch.equal(hamming_distances(database, queries, indices), distances))


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=20000)
    parser.add_argument("--dim", type=int, default=1024, help="a multiple of 64")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rescore", type=int, default=100, help="candidates re-ranked by their float32 score")
    args = parser.parse_args()
    args.k, args.rescore = min(args.k, args.vectors), min(args.rescore, args.vectors)
    generator = torch.Generator().manual_seed(0)
    embeddings, queries = clustered_embeddings(args.vectors, args.dim, args.queries, generator)

    start = time.perf_counter()
    database, packed_queries = quantize(embeddings), quantize(queries)
    quantize_ms = (time.perf_counter() - start) * 1e3
    print(f"binary embeddings (torch {torch.__version__}): {args.vectors} vectors of {args.dim} float32 dimensions "
          f"({embeddings.numel() * 4 / 2**20:.1f} MiB) packed to {database.shape[1]} bytes each "
          f"({database.numel() / 2**20:.1f} MiB) in {quantize_ms:.1f} ms")
    if not np.array_equal(database.numpy(), numpy_quantize(embeddings.numpy())):
        print("BAD torchops.packbits(embeddings > 0) differs from np.packbits", file=sys.stderr)
        return 1

    start = time.perf_counter()
    found = hamming_topk(database, packed_queries, args.k)
    search_ms = (time.perf_counter() - start) * 1e3
    expected = numpy_hamming_topk(database.numpy(), packed_queries.numpy(), args.k)
    if not same_search(database, packed_queries, found, expected):
        print("BAD the torchops search and NumPy's found different neighbours", file=sys.stderr)
        return 1
    print(f"search: {args.queries} queries, the {args.k} nearest by Hamming distance in {search_ms:.1f} ms; "
          f"the same distances as NumPy's search")

    exact = torch.topk(queries @ embeddings.T, args.k, dim=1).indices
    _, candidates = hamming_topk(database, packed_queries, args.rescore)
    scores = torch.einsum("qd,qcd->qc", queries, embeddings[candidates])
    rescored = torch.gather(candidates, 1, torch.topk(scores, args.k, dim=1).indices)
    print(f"recall@{args.k} against the exact float32 search: binary {recall(found[1], exact):.2f}, "
          f"the binary top {args.rescore} rescored in float32 {recall(rescored, exact):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
