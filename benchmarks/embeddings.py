"""Binary-embedding search side by side: torchops.hamming_topk against faiss, usearch, simsimd,
NumKong, NumPy and the composite of examples/binary_embeddings.py; torchops.hamming_distance's
throughput against the popcount bound; quantizing with torchops.packbits.

    .venv/bin/python benchmarks/embeddings.py [--quick] [--out-dir DIR]
    (DIR: benchmarks/results/embeddings, or .../embeddings/quick. The peers, pinned:
    .venv/bin/pip install -r benchmarks/requirements.txt; a peer that is missing is left out of
    the table, which says so)

Search: codes of BITS bits (BITS / 8 bytes: the sign bits of a float32 embedding; random bits,
as the cost depends on sizes, not values), a database of VECTORS of them, QUERIES queries
searched at once, the K nearest of each by Hamming distance, at 1 and 2 threads. The full run
times every database size, query count and k at 1024 bits, and 1M codes at 256 and 512 bits
(k=10); --quick a few of those cases. Contenders, in one process, alternating inside each
repetition (timing.py's measure):

  torchops   torchops.hamming_topk(queries, database, k): the database split across torch's
             threads, a top-k per thread, no (queries, codes) matrix; nearest first, equal
             distances by index
  faiss      faiss.IndexBinaryFlat(bits).search(queries, k): a heap per query, OpenMP over the
             queries (faiss.omp_set_num_threads set to torch's count)
  usearch    usearch.index.search(database, queries, k, "hamming", exact=True, dtype="b1x8",
             threads=thr): its exhaustive search, every (query, code) distance
  simsimd    simsimd.cdist(queries, database, metric="hamming", dtype="bin8", threads=thr) into a
             preallocated int32 matrix, then torch.topk
  numkong    numkong.hammings_packed(queries, packed): the database split into thr row chunks,
             each packed once (numkong.hammings_pack) and searched in its own thread of a
             ThreadPoolExecutor (NumKong releases the GIL around the kernel) into a
             preallocated uint32 matrix, torch.topk of each chunk, then of the chunks' best
  numpy      binary_embeddings.numpy_hamming_topk: np.bitwise_xor, np.bitwise_count, by blocks
             of 2048 codes (single-threaded, as NumPy is: in the 1-thread rows only)
  composite  binary_embeddings.composite_hamming_topk: torch.bitwise_xor, torchops.bitwise_count
             and torch.topk by blocks of 2048 codes
  read       (1-query rows) torch.sum of the database viewed as int64, at the same thread count:
             a read of the same bytes, the scan's bandwidth bound

A contender whose call would take more than MAX_CALL_SECONDS (predicted from its throughput in
the cases of less work measured before; or its checking call took twice that) is not timed there:
the table says "skip", and a list under it names each with its time per call. torchops and
faiss (the subject and the reference of the ratios) are always timed.

Before timing, each case checks torchops's answer: its shape and dtypes, every row strictly
increasing by (distance, index), each index at the distance given, and for the first
REFERENCE_QUERIES queries exactly numpy_hamming_topk's answer (the same contract); then every
contender's distances against torchops's (the sorted lists: ties may be broken otherwise), each
of its indices at the distance given, no index twice.

Distance: torchops.hamming_distance(queries, codes, out=...) for DISTANCE_QUERIES queries and
DISTANCE_VECTORS codes, beside numkong.hammings_packed, simsimd.cdist and faiss.hammings
(faiss's pairwise kernel, one thread) into preallocated matrices, each checked against NumPy's distances:
distances per second, per thread, and cycles per distance at the CPU's nominal clock (read from
/proc/cpuinfo), against the bound of about 2 cycles per 1024-bit distance (a VPOPCNTQ, xor and
add per 64 bytes, two loads a cycle), scaled with the bits.

Quantize: torchops.packbits(embeddings > 0, dim=-1) against np.packbits(embeddings > 0, axis=-1),
both allocating, on QUANTIZE_VECTORS float32 vectors, and each library's comparison alone.

Memory, in a fresh process per (database size, queries) (measure_memory, as bench.py measures a
packing call's): what each contender's searchable database holds (the packed tensor, shared by
the contenders that read it as it is; faiss's index and NumKong's packed chunks, copies) and the
peak growth of one search of 1024-bit codes, k=10 (scratch, distance matrices and results),
from the kernel's count of resident pages; from them, the largest database that fits in this
machine's memory. Results: tables on stdout, results.md, results.csv and results.json in --out-dir.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

import torchops

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared modules beside this file
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
import binary_embeddings  # noqa: E402  (the workload: one implementation, the example's)
from bench import MALLOC_ENV, level_in_use, peak_growth  # noqa: E402  (importing bench only defines them)
from report import (  # noqa: E402
    K as KI, M, aligned_table, exit_if_mismatched, machine_info, machine_markdown, markdown_rows, row_keys,
    size_label, source_version, write_csv, write_json,
)
from timing import MAX_WAIT_PER_CASE, calmest, cores_busy, measure, record_times, wait_for_cores  # noqa: E402


def _optional(name: str):
    """A peer, or None where it is not installed (the table says so; the others still run)."""
    try:
        return __import__(name)
    except ImportError:
        return None


faiss = _optional("faiss")
numkong = _optional("numkong")
simsimd = _optional("simsimd")
usearch = _optional("usearch")
if usearch is not None:
    import usearch.index  # noqa: E402  (the exact search lives there)

MAIN_BITS = 1024   # bits per code: sign-quantized 1024-dimension embeddings, 128 bytes each
BITS = [256, 512, 1024]
VECTORS = [64 * KI, M, 4 * M]  # database sizes; 4M 1024-bit codes: 512 MiB (16 GiB as float32)
QUERIES = [1, 16, 256]
KS = [10, 100]
THREADS = [1, 2]
# (bits, vectors, queries, k) searched, at each thread count.
SEARCH_CASES = ([(MAIN_BITS, v, q, k) for v in VECTORS for q in QUERIES for k in KS]
                + [(bits, M, q, 10) for bits in BITS if bits != MAIN_BITS for q in QUERIES])
QUICK_SEARCH_CASES = [(MAIN_BITS, v, q, 10) for v in (64 * KI, M) for q in (1, 16)] + [(256, M, 16, 10)]
DISTANCE_VECTORS = 64 * KI
DISTANCE_QUERIES = [16, 256]
DISTANCE_CASES = [(bits, q) for bits in BITS for q in DISTANCE_QUERIES]
QUICK_DISTANCE_CASES = [(MAIN_BITS, q) for q in DISTANCE_QUERIES]
BOUND_CYCLES_1024 = 2.0  # cycles per 1024-bit distance: 2 x 64 bytes loaded, VPOPCNTQ + xor + add each
REFERENCE_QUERIES = 4    # torchops's exact (distance, index) order is checked on these first queries
MAX_CALL_SECONDS = {"full": 2.0, "quick": 0.5}
ALWAYS_TIMED = ("torchops", "faiss")
SEARCHERS = ["torchops", "faiss", "usearch", "simsimd", "numkong", "numpy", "composite"]
PEERS = {"faiss": faiss, "usearch": usearch, "simsimd": simsimd, "numkong": numkong}
MEMORY_CASES = [(64 * KI, 16), (M, 16), (4 * M, 16), (M, 256)]  # (vectors, queries) at 1024 bits, k=10
QUICK_MEMORY_CASES = [(64 * KI, 16), (M, 16)]
MEMORY_K = 10
QUANTIZE_VECTORS = 16 * KI     # 64 MiB of float32
FLOAT32_BYTES = MAIN_BITS * 4  # a vector before quantizing, for the memory table

_POOL: ThreadPoolExecutor | None = None


def pool() -> ThreadPoolExecutor:
    """The threads NumKong's chunks run in (one process-wide pool, started once)."""
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max(THREADS), thread_name_prefix="numkong")
    return _POOL


def random_codes(vectors: int, bits: int, generator: torch.Generator) -> torch.Tensor:
    """Packed codes whose bits are random: the search's cost depends on sizes, not on values."""
    return torch.randint(0, 256, (vectors, bits // 8), dtype=torch.uint8, generator=generator)


def set_threads(threads: int) -> None:
    torch.set_num_threads(threads)
    if faiss is not None:
        faiss.omp_set_num_threads(threads)


# ---------------------------------------------------------------------------------------------
# The contenders. Each search returns (distances, indices), (queries, k), nearest first.

def faiss_index(database: np.ndarray):
    index = faiss.IndexBinaryFlat(database.shape[1] * 8)
    index.add(database)
    return index


def chunk_bounds(vectors: int, parts: int) -> list[tuple[int, int]]:
    return [(vectors * i // parts, vectors * (i + 1) // parts) for i in range(parts)]


def numkong_packs(database: np.ndarray, threads: int) -> list:
    """The database in `threads` row chunks, each packed once for numkong.hammings_packed."""
    return [numkong.hammings_pack(database[start:end]) for start, end in chunk_bounds(len(database), threads)]


def usearch_search(database: np.ndarray, queries: np.ndarray, k: int, threads: int):
    found = usearch.index.search(database, queries, k, "hamming", exact=True, threads=threads, dtype="b1x8")
    rows = len(queries)  # one query gives a Matches of (k,), more a BatchMatches of (queries, k)
    return found.distances.reshape(rows, -1), found.keys.reshape(rows, -1).astype(np.int64)


def simsimd_search(database: np.ndarray, queries: np.ndarray, k: int, threads: int, buffers: dict):
    if "out" not in buffers:  # allocated by the first call: the memory measurement counts it
        buffers["out"] = np.empty((len(queries), len(database)), dtype=np.int32)
    simsimd.cdist(queries, database, metric="hamming", dtype="bin8", threads=threads, out=buffers["out"])
    return torch.topk(torch.from_numpy(buffers["out"]), k, dim=1, largest=False, sorted=True)


def numkong_search(packs: list, vectors: int, queries: np.ndarray, k: int, buffers: dict):
    bounds = chunk_bounds(vectors, len(packs))
    if "outs" not in buffers:
        buffers["outs"] = [numkong.zeros((len(queries), end - start), dtype="uint32") for start, end in bounds]
        buffers["views"] = [torch.from_numpy(np.asarray(out).view(np.int32)) for out in buffers["outs"]]

    def chunk(i):
        numkong.hammings_packed(queries, packs[i], out=buffers["outs"][i])
        view = buffers["views"][i]
        distances, where = torch.topk(view, min(k, view.shape[1]), dim=1, largest=False, sorted=len(packs) == 1)
        return distances, where + bounds[i][0]

    if len(packs) == 1:
        return chunk(0)
    parts = list(pool().map(chunk, range(len(packs))))
    distances, where = torch.topk(torch.cat([p[0] for p in parts], dim=1), k, dim=1, largest=False, sorted=True)
    return distances, torch.gather(torch.cat([p[1] for p in parts], dim=1), 1, where)


class Database:
    """One database of codes and what each contender searches in it: the tensor (NumPy's, usearch's
    and simsimd's through .numpy()), faiss's index, NumKong's packed chunks for one thread count."""

    def __init__(self, codes: torch.Tensor, index=None):
        self.codes, self.codes_np = codes, codes.numpy()
        self.vectors, self.bits = codes.shape[0], codes.shape[1] * 8
        self.words = codes.view(torch.int64)  # the read reference's operand
        self.index = index
        self.packs, self.packs_threads = None, None
        self.reference = None  # numpy_hamming_topk of the first queries (up to REFERENCE_QUERIES), k = max(KS)

    def packs_for(self, threads: int):
        if numkong is not None and self.packs_threads != threads:
            self.packs = None  # free the other thread count's copy first
            self.packs, self.packs_threads = numkong_packs(self.codes_np, threads), threads
        return self.packs


def search_contenders(db: Database, queries: torch.Tensor, k: int, threads: int, numpy: bool,
                      read: bool = False) -> dict:
    """name -> a function searching db for the queries."""
    queries_np = queries.numpy()
    contenders = {"torchops": lambda: torchops.hamming_topk(queries, db.codes, k)}
    if db.index is not None:
        contenders["faiss"] = lambda: db.index.search(queries_np, k)
    if usearch is not None:
        contenders["usearch"] = lambda: usearch_search(db.codes_np, queries_np, k, threads)
    if simsimd is not None:
        simsimd_buffers = {}
        contenders["simsimd"] = lambda: simsimd_search(db.codes_np, queries_np, k, threads, simsimd_buffers)
    if numkong is not None:
        packs, numkong_buffers = db.packs_for(threads), {}
        contenders["numkong"] = lambda: numkong_search(packs, db.vectors, queries_np, k, numkong_buffers)
    if numpy:
        contenders["numpy"] = lambda: binary_embeddings.numpy_hamming_topk(db.codes_np, queries_np, k)
    contenders["composite"] = lambda: binary_embeddings.composite_hamming_topk(db.codes, queries, k)
    if read:
        contenders["read"] = lambda: torch.sum(db.words)
    return contenders


# ---------------------------------------------------------------------------------------------
# Checks.

def torchops_problems(db: Database, queries: torch.Tensor, k: int, found) -> list[str]:
    """What is wrong with torchops.hamming_topk's answer (nothing: [])."""
    values, indices = found
    k = min(k, db.vectors)
    if values.dtype != torch.int32 or indices.dtype != torch.int64:
        return [f"dtypes {values.dtype}, {indices.dtype} (expected int32, int64)"]
    if values.shape != (len(queries), k) or indices.shape != (len(queries), k):
        return [f"shapes {tuple(values.shape)}, {tuple(indices.shape)} (expected {(len(queries), k)})"]
    problems = []
    keys = values.long() * db.vectors + indices
    if not bool((keys[:, 1:] > keys[:, :-1]).all()):
        problems.append("a row not strictly increasing by (distance, index)")
    if not torch.equal(binary_embeddings.hamming_distances(db.codes, queries, indices), values.long()):
        problems.append("an index not at the distance given")
    checked = min(len(queries), REFERENCE_QUERIES)
    # Every case searches the first queries of one set: the reference of its first ones serves all.
    if db.reference is None or len(db.reference[0]) < checked:
        db.reference = binary_embeddings.numpy_hamming_topk(db.codes_np, queries[:checked].numpy(), max(KS))
    reference_values, reference_indices = (torch.from_numpy(a[:checked, :k]) for a in db.reference)
    if not (torch.equal(values[:checked], reference_values) and torch.equal(indices[:checked], reference_indices)):
        problems.append(f"not numpy_hamming_topk's answer on the first {checked} queries")
    return problems


# ---------------------------------------------------------------------------------------------
# Search cases.

def work_bytes(queries: int, vectors: int, bits: int) -> int:
    """Code bytes compared in one search: what the throughputs below are counted in."""
    return queries * vectors * bits // 8


class Throughputs:
    """Each contender's compared bytes per second at each thread count, from its case of most
    work measured so far (the cases run from less work to more, and a contender's throughput
    grows with the queries, so its time in a larger case is overestimated, if anything)."""

    def __init__(self):
        self.seen = {}  # (name, threads) -> (work, bytes per second)

    def record(self, name: str, threads: int, work: int, seconds: float) -> None:
        if work >= self.seen.get((name, threads), (0, 0))[0]:
            self.seen[(name, threads)] = (work, work / seconds)

    def predict(self, name: str, threads: int, work: int) -> float | None:
        seen = self.seen.get((name, threads))
        return None if seen is None else work / seen[1]


def run_search(db: Database, queries: torch.Tensor, k: int, threads: int, seconds: float, max_call: float,
               throughputs: Throughputs) -> dict:
    count = len(queries)
    work = work_bytes(count, db.vectors, db.bits)
    row = {"case": "search", "bits": db.bits, "vectors": db.vectors, "queries": count, "k": k, "threads": threads,
           "database_bytes": db.codes.numel()}
    # NumPy runs on one thread whatever torch's count: timed in the 1-thread rows only
    contenders = search_contenders(db, queries, k, threads, numpy=threads == 1, read=count == 1)
    skipped = {}
    for name in list(contenders):
        predicted = throughputs.predict(name, threads, work)
        if name not in ALWAYS_TIMED and name != "read" and predicted is not None and predicted > max_call:
            skipped[name] = predicted
            del contenders[name]

    start = time.perf_counter()
    expected = contenders["torchops"]()
    call_seconds = {"torchops": time.perf_counter() - start}
    wrong = [f"torchops ({'; '.join(problems)})" for problems in [torchops_problems(db, queries, k, expected)]
             if problems]
    for name, function in list(contenders.items()):
        if name in ("torchops", "read"):
            continue
        start = time.perf_counter()
        found = function()
        call_seconds[name] = time.perf_counter() - start
        if not binary_embeddings.same_search(db.codes, queries, found, expected):
            wrong.append(name)
        elif name not in ALWAYS_TIMED and call_seconds[name] > 2 * max_call:  # seen: don't call it 5 times more
            skipped[name] = call_seconds[name]
            throughputs.record(name, threads, work, call_seconds[name])
            del contenders[name]
    row["verified"] = "ok" if not wrong else "MISMATCH: " + ", ".join(wrong)
    row["skipped"] = "; ".join(f"{name} {seconds:.1f} s" for name, seconds in skipped.items())
    if wrong:
        return row
    # Calls of a second or so: 3 repetitions, measured once; shorter ones again while noisy.
    if max(call_seconds.values()) > 0.2:
        samples = measure(contenders, seconds, min_reps=3)
    else:
        samples = calmest(lambda: measure(contenders, seconds))
    times = record_times(row, samples, "torchops")
    for name, seconds_per_search in times.items():
        if name == "read":
            continue
        row[f"qps_{name}"] = count / seconds_per_search
        throughputs.record(name, threads, work, seconds_per_search)
    if "faiss" in times:
        row["x_faiss"] = times["faiss"] / times["torchops"]  # > 1: torchops faster
    others = {name: t for name, t in times.items() if name not in ("torchops", "read")}
    if others:
        best = min(others, key=others.get)
        row["best_other"], row["x_best"] = best, others[best] / times["torchops"]
    if count == 1:  # the scan's bandwidth: the database's bytes over the time
        for name, seconds_per_search in times.items():
            row[f"gbs_{name}"] = db.codes.numel() / seconds_per_search / 1e9
    return row


# ---------------------------------------------------------------------------------------------
# hamming_distance's throughput.

def nominal_clock() -> tuple[float, str]:
    """(Hz, where it was read): the model name's "@ x.xxGHz", else the first "cpu MHz" line
    (on a virtual machine, the clock its hypervisor reports: nominal, turbo unseen)."""
    with open("/proc/cpuinfo") as cpuinfo:
        text = cpuinfo.read()
    model = re.search(r"^model name\s*:.*@\s*([\d.]+)\s*GHz", text, re.MULTILINE)
    if model:
        return float(model.group(1)) * 1e9, "the nominal clock, /proc/cpuinfo's model name"
    mhz = re.search(r"^cpu MHz\s*:\s*([\d.]+)", text, re.MULTILINE)
    if mhz:
        return float(mhz.group(1)) * 1e6, "the nominal clock, /proc/cpuinfo's `cpu MHz`; turbo not seen"
    return float("nan"), "unknown (no clock in /proc/cpuinfo)"


def numpy_distances(codes: np.ndarray, queries: np.ndarray, block: int = 4096) -> np.ndarray:
    out = np.empty((len(queries), len(codes)), dtype=np.int32)
    for start in range(0, len(codes), block):
        differ = np.bitwise_xor(queries[:, None, :], codes[None, start:start + block, :])
        out[:, start:start + block] = binary_embeddings.numpy_bitwise_count(differ).sum(axis=-1)
    return out


def distance_contenders(codes: torch.Tensor, queries: torch.Tensor, threads: int, packs) -> tuple[dict, dict]:
    """(name -> a call writing the (queries, codes) distances into a preallocated matrix,
    name -> a function reading that matrix back as an int32 tensor)."""
    codes_np, queries_np = codes.numpy(), queries.numpy()
    shape = (len(queries), len(codes))
    out = torch.empty(shape, dtype=torch.int32)
    contenders = {"torchops": lambda: torchops.hamming_distance(queries, codes, out=out)}
    results = {"torchops": lambda: out}
    if numkong is not None:
        bounds = chunk_bounds(len(codes), len(packs))
        outs = [numkong.zeros((len(queries), end - start), dtype="uint32") for start, end in bounds]

        def chunk(i):
            numkong.hammings_packed(queries_np, packs[i], out=outs[i])

        contenders["numkong"] = (lambda: chunk(0)) if len(packs) == 1 else \
            (lambda: list(pool().map(chunk, range(len(packs)))))
        results["numkong"] = lambda: torch.cat([torch.from_numpy(np.asarray(o).view(np.int32)) for o in outs], dim=1)
    if simsimd is not None:
        simsimd_out = np.empty(shape, dtype=np.int32)
        contenders["simsimd"] = lambda: simsimd.cdist(queries_np, codes_np, metric="hamming", dtype="bin8",
                                                      threads=threads, out=simsimd_out)
        results["simsimd"] = lambda: torch.from_numpy(simsimd_out)
    if faiss is not None:
        faiss_out = np.empty(shape, dtype=np.int32)
        pointers = (faiss.swig_ptr(queries_np), faiss.swig_ptr(codes_np), shape[0], shape[1], codes_np.shape[1],
                    faiss.swig_ptr(faiss_out))
        contenders["faiss"] = lambda: faiss.hammings(*pointers)
        results["faiss"] = lambda: torch.from_numpy(faiss_out)
    return contenders, results


def run_distance(bits: int, count: int, threads: int, seconds: float, clock: float,
                 generator: torch.Generator) -> dict:
    codes = random_codes(DISTANCE_VECTORS, bits, generator)
    queries = random_codes(count, bits, generator)
    packs = numkong_packs(codes.numpy(), threads) if numkong is not None else None
    contenders, results = distance_contenders(codes, queries, threads, packs)
    row = {"case": "distance", "bits": bits, "vectors": DISTANCE_VECTORS, "queries": count, "threads": threads}
    expected = torch.from_numpy(numpy_distances(codes.numpy(), queries.numpy()))
    wrong = []
    for name, function in contenders.items():
        function()
        if not torch.equal(results[name](), expected):
            wrong.append(name)
    row["verified"] = "ok" if not wrong else "MISMATCH: " + ", ".join(wrong)
    if wrong:
        return row
    times = record_times(row, calmest(lambda: measure(contenders, seconds)), "torchops")
    distances = count * DISTANCE_VECTORS
    for name, seconds_per_call in times.items():
        row[f"dps_{name}"] = distances / seconds_per_call
    row["dps_per_thread_torchops"] = row["dps_torchops"] / threads
    row["cycles_torchops"] = clock * threads * times["torchops"] / distances
    row["bound_cycles"] = BOUND_CYCLES_1024 * bits / 1024
    row["x_bound"] = row["cycles_torchops"] / row["bound_cycles"]  # 1: at the bound
    return row


# ---------------------------------------------------------------------------------------------
# Quantizing.

def run_quantize(threads: int, seconds: float, generator: torch.Generator) -> dict:
    embeddings = torch.randn(QUANTIZE_VECTORS, MAIN_BITS, generator=generator)
    embeddings_np = embeddings.numpy()
    contenders = {"torchops": lambda: binary_embeddings.quantize(embeddings),
                  "numpy": lambda: binary_embeddings.numpy_quantize(embeddings_np),
                  # the comparison alone, each library's: what quantizing costs beside packing
                  "torch_compare": lambda: embeddings > 0, "numpy_compare": lambda: embeddings_np > 0}
    row = {"case": "quantize", "vectors": QUANTIZE_VECTORS, "threads": threads}
    same = np.array_equal(contenders["torchops"]().numpy(), contenders["numpy"]())
    row["verified"] = "ok" if same else "MISMATCH: numpy"
    if not same:
        return row
    times = record_times(row, calmest(lambda: measure(contenders, seconds)), "torchops")
    row["vectors_per_s_torchops"] = QUANTIZE_VECTORS / times["torchops"]
    row["x_numpy"] = times["numpy"] / times["torchops"]
    return row


# ---------------------------------------------------------------------------------------------
# The run.

def run(search_cases, distance_cases, seconds: float, max_call: float, wait_budget: float) -> list[dict]:
    rows, state = [], {"waited": 0.0, "start": time.time()}
    generator = torch.Generator().manual_seed(0)
    throughputs = Throughputs()

    def add(threads, make_row):
        busy = False
        if threads > 1:
            seconds_waited, busy = wait_for_cores(min(MAX_WAIT_PER_CASE, max(0.0, wait_budget - state["waited"])))
            state["waited"] += seconds_waited
        row = make_row()
        row["cores_busy"] = threads > 1 and (busy or cores_busy())
        rows.append(row)
        print(f"[{time.time() - state['start']:5.0f}s] {row_name(row)}: {progress_text(row)}", flush=True)

    for threads in THREADS:
        set_threads(threads)
        add(threads, lambda: run_quantize(threads, seconds, generator))

    # One database at a time, from the least work to the most (for Throughputs' predictions).
    databases = sorted({(bits, vectors) for bits, vectors, _, _ in search_cases},
                       key=lambda d: (d[0] * d[1], d[0]))
    for bits, vectors in databases:
        codes = random_codes(vectors, bits, generator)
        db = Database(codes, faiss_index(codes.numpy()) if faiss is not None else None)
        queries = random_codes(max(QUERIES), bits, generator)  # each case searches the first `count`
        cases = sorted((q, k) for b, v, q, k in search_cases if (b, v) == (bits, vectors))
        for threads in THREADS:
            set_threads(threads)
            for count, k in cases:
                add(threads, lambda: run_search(db, queries[:count], k, threads, seconds, max_call, throughputs))
        del db, codes

    clock, _ = nominal_clock()
    for bits, count in distance_cases:
        for threads in THREADS:
            set_threads(threads)
            add(threads, lambda: run_distance(bits, count, threads, seconds, clock, generator))
    if state["waited"] > 1:
        print(f"waited {state['waited']:.0f} s in all for other processes to free a core", flush=True)
    return rows


# ---------------------------------------------------------------------------------------------
# Memory, in a fresh process per (database size, queries).

def memory_row(vectors: int, count: int) -> dict:
    """Run in a fresh process: the bytes each contender's searchable database holds and the peak
    growth of one search (its buffers allocated by that call), at the most threads. Each
    contender first searches for one query, so that code and thread pools are in."""
    threads = max(THREADS)
    set_threads(threads)
    generator = torch.Generator().manual_seed(0)
    row = {"vectors": vectors, "queries": count, "k": MEMORY_K, "threads": threads}
    holder = {}
    row["database_tensor"] = peak_growth(
        lambda: holder.setdefault("codes", random_codes(vectors, MAIN_BITS, generator)))
    db = Database(holder["codes"])
    if faiss is not None:
        row["database_faiss"] = peak_growth(lambda: holder.setdefault("index", faiss_index(db.codes_np)))
        db.index = holder["index"]
    if numkong is not None:
        row["database_numkong"] = peak_growth(lambda: db.packs_for(threads))
    queries = random_codes(count, MAIN_BITS, generator)
    for function in search_contenders(db, queries[:1], MEMORY_K, threads, numpy=True).values():
        function()
    for name, function in search_contenders(db, queries, MEMORY_K, threads, numpy=True).items():
        row[f"search_{name}"] = peak_growth(function)
    return row


def measure_memory(cases) -> list[dict]:
    rows = []
    for vectors, count in cases:
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", str(vectors), str(count)],
                               capture_output=True, text=True, env={**os.environ, **MALLOC_ENV})
        if child.returncode != 0:
            print(f"memory measurement failed at {size_label(vectors)} x {count} (exit {child.returncode}):\n"
                  f"{child.stderr}", file=sys.stderr, flush=True)
            continue
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
        print(f"memory {size_label(vectors)} codes, {count} queries: done", flush=True)
    return rows


def memory_available() -> int:
    """MemTotal: what a database may take on this machine, at most."""
    with open("/proc/meminfo") as meminfo:
        line = next(line for line in meminfo if line.startswith("MemTotal:"))
    return int(line.split()[1]) * 1024


def database_bytes(row: dict, name: str) -> int:
    """What the searchable database of `name` holds: a copy of its own, or the packed tensor."""
    return row.get(f"database_{name}", row["database_tensor"])


def largest_database(rows: list[dict], name: str, total: int) -> int | None:
    """Codes that fit in `total` bytes with one search of the memory rows' most common query
    count: a line through (vectors, database + search growth) at the two largest sizes measured
    (a search's distance matrix grows with the database; torchops's scratch does not)."""
    count = max({r["queries"] for r in rows}, key=lambda c: sum(r["queries"] == c for r in rows))
    points = sorted((r["vectors"], database_bytes(r, name) + r[f"search_{name}"]) for r in rows
                    if r["queries"] == count and f"search_{name}" in r)[-2:]
    if not points:
        return None
    if len(points) == 1:
        return int(total / (points[0][1] / points[0][0]))
    (n0, b0), (n1, b1) = points
    slope = (b1 - b0) / (n1 - n0)
    return int((total - (b1 - slope * n1)) / slope) if slope > 0 else None


def memory_table(rows: list[dict], total: int, markdown: bool) -> str:
    if not rows:
        return "memory not measured"
    names = [name for name in SEARCHERS if any(f"search_{name}" in r for r in rows)]
    holders = [h for h in ("tensor", "faiss", "numkong") if f"database_{h}" in rows[0]]
    columns = (["vectors", "queries"] + [f"{h} database MiB" for h in holders]
               + [f"{name} search MiB" for name in names])
    body = [[size_label(r["vectors"]), str(r["queries"])] + [f"{r[f'database_{h}'] / M:.1f}" for h in holders]
            + [f"{r[f'search_{name}'] / M:.1f}" if f"search_{name}" in r else "-" for name in names] for r in rows]
    fits = ", ".join(f"{name} {largest / M:,.0f}M" for name in names
                     if (largest := largest_database(rows, name, total)) is not None)
    return "\n".join([(markdown_rows if markdown else aligned_table)(columns, body, left=2), "",
                      f"Largest database of {MAIN_BITS}-bit codes in {total / 2 ** 30:.1f} GiB (MemTotal), searched "
                      f"{max(r['queries'] for r in rows if r['vectors'] == max(x['vectors'] for x in rows))} "
                      f"queries at a time: {fits} codes; as float32 vectors ({FLOAT32_BYTES} bytes each, no "
                      f"scratch counted) {total / FLOAT32_BYTES / M:,.1f}M."])


# ---------------------------------------------------------------------------------------------
# Reporting.

SEARCH_COLUMNS = (["bits", "vectors", "q", "k", "thr", "torchops q/s", "IQR"]
                  + [f"{name} q/s" for name in SEARCHERS[1:]]
                  + ["×faiss", "×best other", "GB/s", "read GB/s"])
DISTANCE_COLUMNS = ["bits", "codes", "q", "thr", "torchops dist/s", "IQR", "per thread", "cycles/dist", "bound",
                    "×bound", "numkong dist/s", "simsimd dist/s", "faiss dist/s"]
QUANTIZE_COLUMNS = ["vectors", "thr", "torchops µs", "IQR", "numpy µs", "torch e>0 µs", "numpy e>0 µs",
                    "torchops vectors/s", "×numpy"]


def rate(value: float) -> str:
    """A rate in 3 significant digits, with k/M/G."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def noise(row: dict) -> str:
    return f"{row['spread']:.0%}" + ("*" if row["cores_busy"] else "")


def skipped_names(row: dict) -> set[str]:
    return {part.split()[0] for part in row.get("skipped", "").split("; ") if part}


def search_cells(row: dict) -> list[str]:
    case = [str(row["bits"]), size_label(row["vectors"]), str(row["queries"]), str(row["k"]), str(row["threads"])]
    if "torchops_us" not in row:
        return case + [row["verified"]] + [""] * (len(SEARCH_COLUMNS) - len(case) - 1)

    def contender(name):
        if f"qps_{name}" in row:
            return rate(row[f"qps_{name}"])
        if name in skipped_names(row):
            return "skip"
        if name != "numpy" and PEERS.get(name, True) is None:
            return "n/i"  # not installed
        return "-"

    best = f"{row['x_best']:.2f} {row['best_other']}" if "x_best" in row else "-"
    return (case + [rate(row["qps_torchops"]), noise(row)] + [contender(name) for name in SEARCHERS[1:]]
            + [f"{row['x_faiss']:.2f}" if "x_faiss" in row else "-", best,
               f"{row['gbs_torchops']:.1f}" if "gbs_torchops" in row else "",
               f"{row['gbs_read']:.1f}" if "gbs_read" in row else ""])


def distance_cells(row: dict) -> list[str]:
    case = [str(row["bits"]), size_label(row["vectors"]), str(row["queries"]), str(row["threads"])]
    if "torchops_us" not in row:
        return case + [row["verified"]] + [""] * (len(DISTANCE_COLUMNS) - len(case) - 1)

    def dps(name):
        return rate(row[f"dps_{name}"]) if f"dps_{name}" in row else "n/i"

    return case + [dps("torchops"), noise(row), rate(row["dps_per_thread_torchops"]), f"{row['cycles_torchops']:.2f}",
                   f"{row['bound_cycles']:.2f}", f"{row['x_bound']:.2f}", dps("numkong"), dps("simsimd"), dps("faiss")]


def quantize_cells(row: dict) -> list[str]:
    case = [size_label(row["vectors"]), str(row["threads"])]
    if "torchops_us" not in row:
        return case + [row["verified"]] + [""] * (len(QUANTIZE_COLUMNS) - len(case) - 1)
    return case + [f"{row['torchops_us']:,.0f}", noise(row), f"{row['numpy_us']:,.0f}",
                   f"{row['torch_compare_us']:,.0f}", f"{row['numpy_compare_us']:,.0f}",
                   rate(row["vectors_per_s_torchops"]), f"{row['x_numpy']:.2f}"]


TABLES = {"search": (SEARCH_COLUMNS, search_cells, 5), "distance": (DISTANCE_COLUMNS, distance_cells, 4),
          "quantize": (QUANTIZE_COLUMNS, quantize_cells, 2)}


def progress_text(row: dict) -> str:
    columns, cells, left = TABLES[row["case"]]
    text = " ".join(f"{column}={cell}" for column, cell in zip(columns[left:], cells(row)[left:]) if cell)
    return text + (f" (skipped: {row['skipped']})" if row.get("skipped") else "")


def row_name(row: dict) -> str:
    if row["case"] == "search":
        return (f"search {row['bits']}b {size_label(row['vectors'])} q={row['queries']} k={row['k']} "
                f"thr={row['threads']}")
    if row["case"] == "distance":
        return f"distance {row['bits']}b {size_label(row['vectors'])} q={row['queries']} thr={row['threads']}"
    return f"quantize {size_label(row['vectors'])} thr={row['threads']}"


def tables(rows: list[dict], markdown: bool) -> dict[str, str]:
    out = {}
    for case, (columns, cells, left) in TABLES.items():
        chosen = [r for r in rows if r["case"] == case]
        if case == "search":  # read by database, then queries, k and threads
            chosen.sort(key=lambda r: (r["bits"], r["vectors"], r["queries"], r["k"], r["threads"]))
        out[case] = (markdown_rows if markdown else aligned_table)(columns, [cells(r) for r in chosen], left=left)
    return out


def skipped_text(rows: list[dict], max_call: float) -> str:
    lines = [f"- {row_name(r)}: {r['skipped']}" for r in rows if r.get("skipped")]
    if not lines:
        return f"No contender was skipped (none would take more than {max_call:g} s a call)."
    return (f"Not timed, as a call would take more than {max_call:g} s (predicted from the contender's throughput "
            f"in the cases of less work; or its checking call took more than twice that), with the time of a call "
            f"(predicted, or seen):\n\n" + "\n".join(lines))


def summary_text(rows: list[dict]) -> str:
    """torchops's search against faiss and the fastest other contender, its scan against a read,
    hamming_distance against the bound, and quantizing against NumPy, over the calm rows."""
    calm = [r for r in rows if "torchops_us" in r and not r["cores_busy"]]
    lines = []

    def span(values):
        return f"{min(values):.2f}-{max(values):.2f}" if values else "-"

    for threads in THREADS:
        search = [r for r in calm if r["case"] == "search" and r["threads"] == threads]
        if search:
            winners = {}
            for r in search:
                if "best_other" in r:
                    winners[r["best_other"]] = winners.get(r["best_other"], 0) + 1
            lines.append(f"search, {threads} thread(s), {len(search)} cases: faiss's time / torchops's "
                         f"{span([r['x_faiss'] for r in search if 'x_faiss' in r])}; the fastest other contender's "
                         f"{span([r['x_best'] for r in search if 'x_best' in r])} (the fastest other: "
                         + ", ".join(f"{name} in {n}" for name, n in sorted(winners.items(), key=lambda i: -i[1]))
                         + ")")
            single = [r for r in search if "gbs_torchops" in r and "gbs_read" in r]
            if single:
                lines.append(f"  1 query: torchops scans {span([r['gbs_torchops'] for r in single])} GB/s, a read "
                             f"of the same bytes {span([r['gbs_read'] for r in single])} GB/s (scan / read "
                             f"{span([r['gbs_torchops'] / r['gbs_read'] for r in single])})")
        for r in (r for r in calm if r["case"] == "distance" and r["threads"] == threads):
            lines.append(f"hamming_distance, {r['bits']} bits, {r['queries']} x {size_label(r['vectors'])}, "
                         f"{threads} thread(s): {rate(r['dps_per_thread_torchops'])} distances/s per thread, "
                         f"{r['cycles_torchops']:.2f} cycles each (bound {r['bound_cycles']:.2f}: x{r['x_bound']:.2f})")
        for r in (r for r in calm if r["case"] == "quantize" and r["threads"] == threads):
            lines.append(f"quantize, {threads} thread(s): torchops {r['torchops_us']:,.0f} µs (of which PyTorch's "
                         f"e > 0 alone {r['torch_compare_us']:,.0f} µs), NumPy {r['numpy_us']:,.0f} µs "
                         f"(e > 0 alone {r['numpy_compare_us']:,.0f} µs)")
    return "\n".join(lines) or "no calm row"


def peer_versions() -> dict:
    info = {}
    for name, module in PEERS.items():
        info[name] = getattr(module, "__version__", "?") if module is not None else "not installed"
    if faiss is not None:
        info["faiss compiled for"] = faiss.get_compile_options().strip()
    if numkong is not None:
        info["numkong capabilities"] = ", ".join(k for k, v in numkong.get_capabilities().items() if v)
    if simsimd is not None:
        info["simsimd capabilities"] = ", ".join(k for k, v in simsimd.get_capabilities().items() if v)
    if usearch is not None:
        try:
            info["usearch hamming b1x8 kernel"] = usearch.index._hardware_acceleration(
                dtype=usearch.index.ScalarKind.B1, ndim=MAIN_BITS, metric_kind=usearch.index.MetricKind.Hamming)
        except (AttributeError, TypeError):  # a private helper: absent from other releases
            pass
    return info


def write_results(rows, memory, total, info, summary, out_dir, mode, wall_seconds, max_call, clock_source):
    os.makedirs(out_dir, exist_ok=True)
    write_csv(os.path.join(out_dir, "results.csv"), rows, row_keys(rows))
    write_json(os.path.join(out_dir, "results.json"), info, mode, wall_seconds, rows, memory=memory)
    markdown = tables(rows, markdown=True)
    with open(os.path.join(out_dir, "results.md"), "w") as handle:
        handle.write(f"""# torchops binary-embedding benchmark results ({mode} run)

Produced by `benchmarks/embeddings.py{' --quick' if mode == 'quick' else ''}` in {wall_seconds:.0f} s.

## Machine

{machine_markdown(info)}

## How to read the tables

- `search`: `q` queries searched at once in a database of `vectors` packed codes of `bits` bits
  (random bits), the `k` nearest of each by Hamming distance, at `thr` threads. Contenders:
  `torchops`: `torchops.hamming_topk(queries, database, k)`; `faiss`:
  `faiss.IndexBinaryFlat(bits).search` (OpenMP threads set to `thr`); `usearch`:
  `usearch.index.search(database, queries, k, "hamming", exact=True, dtype="b1x8", threads=thr)`;
  `simsimd`: `simsimd.cdist(queries, database, metric="hamming", dtype="bin8", threads=thr)` into a
  preallocated int32 matrix, then `torch.topk`; `numkong`: `numkong.hammings_packed` on the database
  packed once in `thr` row chunks, one chunk per thread of a `ThreadPoolExecutor` (NumKong releases
  the GIL), each into a preallocated matrix and `torch.topk`, then a topk of the chunks' best;
  `numpy`: `examples/binary_embeddings.py`'s `numpy_hamming_topk` (`np.bitwise_xor`,
  `np.bitwise_count`, by blocks of 2048 codes; single-threaded, timed in the 1-thread rows only);
  `composite`: its `composite_hamming_topk` (`torch.bitwise_xor`, `torchops.bitwise_count`,
  `torch.topk` by blocks of 2048 codes).
- `q/s`: queries per second (`q` / the median time of a call). `×faiss`: faiss's time / torchops's;
  `×best other`: the fastest other contender's time / torchops's, and its name (> 1: torchops
  faster). `GB/s` (1-query rows): the database's bytes / torchops's time; `read GB/s`: the same for
  `torch.sum` of the database viewed as int64 at the same thread count, a read of the same bytes.
- `skip`: not timed in that case, as a call would take more than {max_call:g} s (listed below);
  torchops and faiss are always timed. `n/i`: the peer is not installed. `-`: not run (NumPy at 2
  threads).
- Checks, before timing: torchops's answer is strictly increasing by (distance, index) in each
  row, each index at its distance, and exactly `numpy_hamming_topk`'s (the same contract) on the first
  {REFERENCE_QUERIES} queries; every other contender has torchops's distances (sorted; ties may be
  broken otherwise), each index at its distance, no index twice.
- `distance`: `torchops.hamming_distance(queries, codes, out=)` for `q` queries and `codes` codes,
  beside `numkong.hammings_packed` (chunks in threads as above), `simsimd.cdist` and
  `faiss.hammings` (faiss's pairwise kernel, which runs on one thread), each into a
  preallocated int32/uint32 matrix and checked against NumPy's distances. `per thread`: torchops's
  distances per second / `thr`; `cycles/dist`: the clock × `thr` / torchops's distances per second,
  at {nominal_clock()[0] / 1e9:.2f} GHz ({clock_source}); `bound`: {BOUND_CYCLES_1024:g} cycles
  per 1024-bit distance (two 64-byte loads, a VPOPCNTQ, a xor and an add per 64 bytes), scaled with the
  bits; `×bound`: cycles / bound (1: at the bound).
- `quantize`: {QUANTIZE_VECTORS} float32 vectors of {MAIN_BITS} dimensions to bits:
  `torchops.packbits(e > 0, dim=-1)` against `np.packbits(e > 0, axis=-1)`, both allocating, and each
  library's `e > 0` alone.
- Times: medians over at least 3 repetitions, contenders alternating within each (calls over
  0.2 s: 3 repetitions, measured once). `IQR`: interquartile range / median of torchops's samples;
  `*`: a 2-thread row measured while another process held a core.

## Summary

```
{summary}
```

## Search

{markdown['search']}

{skipped_text(rows, max_call)}

## hamming_distance

{markdown['distance']}

## Quantize

{markdown['quantize']}

## Memory

In a fresh process per database size and query count (`{' '.join(f'{k}={v}' for k, v in MALLOC_ENV.items())}`,
so freed memory goes back to the kernel), {max(THREADS)} threads, {MAIN_BITS}-bit codes, k={MEMORY_K}:
`database`, the growth of the resident size while the searchable database is made (`tensor`: the
packed codes, which torchops, NumPy, the composite, simsimd and usearch search as they are; `faiss`:
its index, a copy; `numkong`: its packed chunks, a copy); `search`, the peak growth during one
search (scratch, distance matrices, results; buffers a contender keeps are allocated by this
call), the kernel's count (`VmHWM`, reset through `/proc/self/clear_refs`).

{memory_table(memory, total, markdown=True)}
""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{len(QUICK_SEARCH_CASES)} search cases, {len(QUICK_DISTANCE_CASES)} distance cases")
    parser.add_argument("--out-dir", help="default: benchmarks/results/embeddings (--quick: .../embeddings/quick)")
    parser.add_argument("--memory-child", type=int, nargs=2, help=argparse.SUPPRESS)  # measure_memory()'s process
    args = parser.parse_args()
    if args.memory_child:
        print(json.dumps(memory_row(*args.memory_child)))
        return
    if args.out_dir is None:
        results = os.path.join(HERE, "results", "embeddings")
        args.out_dir = os.path.join(results, "quick") if args.quick else results
    mode = "quick" if args.quick else "full"
    search_cases, distance_cases, memory_cases = ((QUICK_SEARCH_CASES, QUICK_DISTANCE_CASES, QUICK_MEMORY_CASES)
                                                  if args.quick else (SEARCH_CASES, DISTANCE_CASES, MEMORY_CASES))
    max_call = MAX_CALL_SECONDS[mode]
    missing = [name for name, module in PEERS.items() if module is None]
    if missing:
        print(f"not installed (.venv/bin/pip install -r benchmarks/requirements.txt): {', '.join(missing)}; "
              f"measuring without them", flush=True)

    start = time.time()
    load_at_start = os.getloadavg()[0]
    all_threads = torch.get_num_threads()
    if load_at_start > 0.5:
        print(f"warning: load average {load_at_start:.2f} on {os.cpu_count()} cores: other processes are running",
              flush=True)
    print(f"binary-embedding benchmark ({mode}): {len(search_cases)} search cases x threads {THREADS} "
          f"(bits, vectors, queries, k: {', '.join(f'{b}/{size_label(v)}/{q}/{k}' for b, v, q, k in search_cases)}), "
          f"{len(distance_cases)} distance cases; contenders over {max_call:g} s a call are skipped", flush=True)
    try:
        rows = run(search_cases, distance_cases, seconds=0.05 if args.quick else 0.2, max_call=max_call,
                   wait_budget=5.0 if args.quick else 60.0)
    finally:
        set_threads(all_threads)
    print("memory, a fresh process per case:", flush=True)
    memory = measure_memory(memory_cases)
    total = memory_available()

    wall = time.time() - start
    level = level_in_use()
    clock, clock_source = nominal_clock()
    info = machine_info([level], level, all_threads)
    info["torchops source"] = source_version()
    info["clock for cycles"] = f"{clock / 1e9:.2f} GHz ({clock_source})"
    info.update(peer_versions())
    info["load average (1 min) at start / end"] = f"{load_at_start:.2f} / {os.getloadavg()[0]:.2f}"
    summary = summary_text(rows)
    text = tables(rows, markdown=False)
    print()
    print(text["search"])
    print("\n" + skipped_text(rows, max_call))
    print("\n" + text["distance"])
    print("\n" + text["quantize"])
    print("\n" + memory_table(memory, total, markdown=False))
    print("\n" + "\n".join(f"{key}: {value}" for key, value in info.items()))
    print("\n" + summary)
    write_results(rows, memory, total, info, summary, args.out_dir, mode, wall, max_call, clock_source)
    print(f"\nresults written to {args.out_dir}/results.md, results.csv, results.json ({wall:.0f} s)")
    exit_if_mismatched(rows, row_name)


if __name__ == "__main__":
    main()
