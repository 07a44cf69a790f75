"""examples/binary_embeddings.py: it runs, and its search finds the nearest vectors; and
examples/demo.py, the README's first command, holds every example it shows.

The example is also the workload benchmarks/embeddings.py times, so its search is checked here
against a brute-force search on the shapes that take its other paths: a last block shorter than
the others, k larger than a block, vectors whose words do not come in eights (add_counts's
plain sum), words at their extremes.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import torchops

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "binary_embeddings.py")
sys.path.insert(0, os.path.join(ROOT, "examples"))

import binary_embeddings  # noqa: E402


def test_demo_holds_every_example(tmp_path):
    result = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "demo.py")],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BAD" not in result.stdout and result.stdout.rstrip().endswith("all examples hold")


def test_binary_embeddings_example_runs(tmp_path):
    # From another directory, so that the installed torchops is the one imported.
    result = subprocess.run([sys.executable, EXAMPLE, "--vectors", "3000", "--dim", "512", "--queries", "20"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the same distances as NumPy's search" in result.stdout
    assert "recall@10 against the exact float32 search" in result.stdout


def brute_force(database, queries):
    """Every query's Hamming distance to every vector, from the unpacked bits."""
    database_bits, query_bits = (torch.from_numpy(np.unpackbits(packed.numpy(), axis=-1))
                                 for packed in (database, queries))
    return (query_bits[:, None, :] != database_bits[None, :, :]).sum(dim=-1)


@pytest.mark.parametrize("vectors, dim, k, block", [
    (1000, 1024, 10, 256),   # words in eights: add_counts's lanes; a last block of 232
    (300, 384, 50, 64),      # 6 words: the plain sum; k larger than a block
    (5, 64, 5, 2048),        # one word, every vector
])
def test_hamming_topk_finds_the_nearest(vectors, dim, k, block):
    generator = torch.Generator().manual_seed(vectors)
    database = torch.randint(0, 256, (vectors, dim // 8), dtype=torch.uint8, generator=generator)
    database[0] = 255  # every bit set: words that are -1 as int64
    database[1] = 0
    database[2, ::8] = 0x80  # words whose sign bit alone is set (int64's minimum)
    queries = torch.cat([database[:3], torch.randint(0, 256, (4, dim // 8), dtype=torch.uint8, generator=generator)])
    distances, indices = binary_embeddings.composite_hamming_topk(database, queries, k, block=block)
    expected = brute_force(database, queries)
    assert torch.equal(distances, torch.sort(expected, dim=1).values[:, :k])
    assert torch.equal(torch.gather(expected, 1, indices), distances)
    assert all(len(set(row)) == k for row in indices.tolist())
    numpy_distances, numpy_indices = binary_embeddings.numpy_hamming_topk(database.numpy(), queries.numpy(), k,
                                                                          block=block)
    assert torch.equal(torch.from_numpy(numpy_distances).long(), distances)
    # The op: the same distances, and the contract's order among equal ones (NumPy's keys').
    values, nearest = torchops.hamming_topk(queries, database, k)
    assert torch.equal(values, torch.from_numpy(numpy_distances).to(torch.int32))
    assert torch.equal(nearest, torch.from_numpy(numpy_indices).to(torch.int64))
