"""Binary-embedding search side by side: the composite of examples/binary_embeddings.py (torchops's
packbits and bitwise_count with PyTorch's xor and topk), the same in NumPy, and faiss's exact
binary index.

    .venv/bin/python benchmarks/embeddings.py [--quick] [--out-dir DIR]
    (DIR: benchmarks/results/embeddings, or .../embeddings/quick; needs faiss-cpu:
    pip install -r benchmarks/requirements.txt)

Vectors of DIM dimensions, one bit each (DIM / 8 bytes: a float32 vector's sign bits), a
database of VECTORS[i] of them, QUERIES queries searched at once, the K nearest by Hamming
distance. Contenders, in one process, alternating inside each repetition (timing.py's measure):

  torchops  binary_embeddings.hamming_topk: the database by blocks of 2048 vectors, each block
            torch.bitwise_xor'ed with every query (int64 words), torchops.bitwise_count, the
            counts added (add_counts), torch.topk; then a topk of the blocks' best
  numpy     binary_embeddings.numpy_hamming_topk: the same blocks with np.bitwise_xor,
            np.bitwise_count and np.argpartition (single-threaded, as NumPy is: in the
            1-thread rows only)
  faiss     faiss.IndexBinaryFlat(DIM).search(queries, K): an exact scan, popcounts of 64-bit
            words, a heap per query, its OpenMP threads set to torch's thread count (faiss-cpu
            brings its own OpenMP runtime; both pools idle between their calls)

and the quantization that makes the database: torchops.packbits(embeddings > 0, dim=-1) against
np.packbits(embeddings > 0, axis=-1), both allocating, on QUANTIZE_VECTORS float32 vectors, and
each library's comparison alone (embeddings > 0).

Before timing, each size checks that every contender finds the same distances (and indices at
them; equal distances may come in any order). Memory, in a fresh process per size
(measure_memory, as bench.py measures a packing call's): what the searchable database holds
(the packed array; faiss's index, which copies the codes) and the peak growth of one search
(scratch and results), from the kernel's count of resident pages; from them, the largest
database that fits in this machine's memory. Results: a table on stdout, results.md, results.csv
and results.json in --out-dir.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

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

try:
    import faiss
except ImportError:  # the table says so; the other contenders still run
    faiss = None

DIM = 1024      # bits per vector: sign-quantized 1024-dimension embeddings, 128 bytes each
QUERIES = 16    # searched at once: faiss and the blocks read the database once per batch
K = 10
VECTORS = [64 * KI, M, 4 * M]  # database sizes; 4M vectors: 512 MiB packed (16 GiB as float32)
QUICK_VECTORS = [64 * KI, M]
QUANTIZE_VECTORS = 16 * KI     # 64 MiB of float32
THREADS = [1, 2]
FLOAT32_BYTES = DIM * 4        # a vector before quantizing, for the memory table


def random_database(vectors: int, generator: torch.Generator) -> torch.Tensor:
    """Packed vectors whose bits are random: the search's cost depends on sizes, not on values."""
    return torch.randint(0, 256, (vectors, DIM // 8), dtype=torch.uint8, generator=generator)


def faiss_index(database: np.ndarray):
    index = faiss.IndexBinaryFlat(DIM)
    index.add(database)
    return index


def search_contenders(database: torch.Tensor, queries: torch.Tensor, index, numpy: bool = True) -> dict:
    """name -> a function searching the database for the queries; each returns (distances, indices)."""
    database_np, queries_np = database.numpy(), queries.numpy()
    contenders = {"torchops": lambda: binary_embeddings.hamming_topk(database, queries, K)}
    if numpy:
        contenders["numpy"] = lambda: binary_embeddings.numpy_hamming_topk(database_np, queries_np, K)
    if index is not None:
        contenders["faiss"] = lambda: index.search(queries_np, K)
    return contenders


def verify(database: torch.Tensor, queries: torch.Tensor, contenders: dict) -> list[str]:
    """The contenders whose distances differ from torchops's, or whose indices are not at them."""
    expected = contenders["torchops"]()
    wrong = []
    for name, function in contenders.items():
        distances, indices = (torch.as_tensor(np.asarray(a)) for a in function())
        if not binary_embeddings.same_search(database, queries, (distances.to(torch.int64), indices), expected):
            wrong.append(name)
    return wrong


def set_threads(threads: int) -> None:
    torch.set_num_threads(threads)
    if faiss is not None:
        faiss.omp_set_num_threads(threads)


def run_search(vectors: int, threads: int, seconds: float, generator: torch.Generator) -> dict:
    database = random_database(vectors, generator)
    queries = random_database(QUERIES, generator)
    index = faiss_index(database.numpy()) if faiss is not None else None
    # NumPy runs on one thread whatever torch's count: timed in the 1-thread rows only
    contenders = search_contenders(database, queries, index, numpy=threads == 1)
    row = {"case": "search", "vectors": vectors, "threads": threads, "queries": QUERIES, "k": K,
           "database_bytes": database.numel()}
    wrong = verify(database, queries, contenders)
    row["verified"] = "ok" if not wrong else "MISMATCH: " + ", ".join(wrong)
    if wrong:
        return row
    # Long calls: 3 repetitions (a sample is one call from about 10 ms on)
    samples = calmest(lambda: measure(contenders, seconds, min_reps=3))
    times = record_times(row, samples, "torchops")
    for name, seconds_per_search in times.items():
        row[f"qps_{name}"] = QUERIES / seconds_per_search
    for name in ("numpy", "faiss"):
        if name in times:
            row[f"x_{name}"] = times[name] / times["torchops"]  # > 1: torchops faster
    return row


def run_quantize(threads: int, seconds: float, generator: torch.Generator) -> dict:
    embeddings = torch.randn(QUANTIZE_VECTORS, DIM, generator=generator)
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


def run(sizes: list[int], seconds: float, wait_budget: float) -> list[dict]:
    rows, waited, start = [], 0.0, time.time()
    generator = torch.Generator().manual_seed(0)
    for threads in THREADS:
        set_threads(threads)
        for case in ["quantize", *sizes]:
            busy = False
            if threads > 1:
                seconds_waited, busy = wait_for_cores(min(MAX_WAIT_PER_CASE, max(0.0, wait_budget - waited)))
                waited += seconds_waited
            row = (run_quantize(threads, seconds, generator) if case == "quantize" else
                   run_search(case, threads, seconds, generator))
            row["cores_busy"] = threads > 1 and (busy or cores_busy())
            rows.append(row)
            print(f"[{time.time() - start:5.0f}s] {' '.join(cells(row))}", flush=True)
    if waited > 1:
        print(f"waited {waited:.0f} s in all for other processes to free a core", flush=True)
    return rows


# ---------------------------------------------------------------------------------------------
# Memory, in a fresh process per database size.

def memory_row(vectors: int) -> dict:
    """Run in a fresh process: the bytes the searchable database holds and the peak growth of
    one search, for each contender (each searched once first, so code and thread pools are in)."""
    generator = torch.Generator().manual_seed(0)
    queries = random_database(QUERIES, generator)
    row = {"vectors": vectors}
    holder = {}
    row["database_torchops"] = row["database_numpy"] = peak_growth(
        lambda: holder.setdefault("database", random_database(vectors, generator)))
    database = holder["database"]
    if faiss is not None:
        row["database_faiss"] = peak_growth(lambda: holder.setdefault("index", faiss_index(database.numpy())))
    for name, function in search_contenders(database, queries, holder.get("index")).items():
        function()
        row[f"search_{name}"] = peak_growth(function)
    return row


def measure_memory(sizes: list[int]) -> list[dict]:
    rows = []
    for vectors in sizes:
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", str(vectors)],
                               capture_output=True, text=True, env={**os.environ, **MALLOC_ENV})
        if child.returncode != 0:
            print(f"memory measurement failed at {size_label(vectors)} (exit {child.returncode}):\n{child.stderr}",
                  file=sys.stderr, flush=True)
            continue
        rows.append(json.loads(child.stdout))
    return rows


def memory_available() -> int:
    """MemTotal: what a database may take on this machine, at most."""
    with open("/proc/meminfo") as meminfo:
        line = next(line for line in meminfo if line.startswith("MemTotal:"))
    return int(line.split()[1]) * 1024


def largest_database(rows: list[dict], name: str, total: int) -> int:
    """Vectors that fit in `total` bytes: the database's bytes per vector at the largest size
    measured, and the search's scratch (which does not grow with the database) beside it."""
    row = max(rows, key=lambda r: r["vectors"])
    per_vector = row[f"database_{name}"] / row["vectors"]
    return int((total - row[f"search_{name}"]) / per_vector)


def memory_table(rows: list[dict], total: int, markdown: bool) -> str:
    if not rows:
        return "memory not measured"
    names = [name for name in ("torchops", "numpy", "faiss") if f"database_{name}" in rows[0]]
    columns = ["vectors"] + [f"{name} {what} MiB" for name in names for what in ("database", "search")]
    body = [[size_label(r["vectors"])] + [f"{r[f'{what}_{name}'] / M:.1f}" for name in names
                                          for what in ("database", "search")] for r in rows]
    fits = ", ".join(f"{name} {largest_database(rows, name, total) / M:,.0f}M vectors" for name in names)
    return "\n".join([(markdown_rows if markdown else aligned_table)(columns, body, left=1), "",
                      f"Largest database in {total / 2 ** 30:.1f} GiB (MemTotal): {fits}; as float32 vectors "
                      f"({FLOAT32_BYTES} bytes each, no scratch counted) {total / FLOAT32_BYTES / M:,.1f}M."])


# ---------------------------------------------------------------------------------------------
# Reporting.

COLUMNS = ["case", "vectors", "thr", "torchops µs", "IQR", "numpy µs", "faiss µs", "torchops q/s", "numpy q/s",
           "faiss q/s", "×numpy", "×faiss"]


def cells(row: dict) -> list[str]:
    def number(key, digits=0):
        return f"{row[key]:,.{digits}f}" if key in row else "-"

    def ratio(key):
        return f"{row[key]:.2f}" if key in row else "-"

    case = [row["case"], size_label(row["vectors"]), str(row["threads"])]
    if "torchops_us" not in row:
        return case + [row["verified"]] + [""] * (len(COLUMNS) - len(case) - 1)
    noise = f"{row['spread']:.0%}" + ("*" if row["cores_busy"] else "")
    if row["case"] == "quantize":  # vectors per second in the q/s columns
        rates = [number("vectors_per_s_torchops"), "-", "-"]
    else:
        rates = [number("qps_torchops", 1), number("qps_numpy", 1), number("qps_faiss", 1)]
    return case + [number("torchops_us"), noise, number("numpy_us"), number("faiss_us"), *rates,
                   ratio("x_numpy"), ratio("x_faiss")]


def row_name(row: dict) -> str:
    return f"{row['case']} {size_label(row['vectors'])} thr={row['threads']}"


def summary_text(rows: list[dict]) -> str:
    """What the composite search costs next to faiss and NumPy, and quantizing next to NumPy, over
    the calm rows."""
    calm = [r for r in rows if "torchops_us" in r and not r["cores_busy"]]
    lines = []
    for threads in THREADS:
        search = [r for r in calm if r["case"] == "search" and r["threads"] == threads]
        if search:
            parts = [f"{name}'s time / torchops's {min(r[f'x_{name}'] for r in have):.2f}-"
                     f"{max(r[f'x_{name}'] for r in have):.2f}"
                     for name in ("faiss", "numpy") if (have := [r for r in search if f"x_{name}" in r])]
            lines.append(f"search, {threads} thread(s), {', '.join(size_label(r['vectors']) for r in search)} "
                         f"vectors: " + "; ".join(parts))
        for r in (r for r in calm if r["case"] == "quantize" and r["threads"] == threads):
            lines.append(f"quantize, {threads} thread(s): torchops {r['torchops_us']:,.0f} µs (of which PyTorch's "
                         f"e > 0 alone {r['torch_compare_us']:,.0f} µs), NumPy {r['numpy_us']:,.0f} µs "
                         f"(e > 0 alone {r['numpy_compare_us']:,.0f} µs)")
    return "\n".join(lines) or "no calm row"


def write_results(rows, memory, total, info, summary, out_dir, mode, wall_seconds):
    os.makedirs(out_dir, exist_ok=True)
    write_csv(os.path.join(out_dir, "results.csv"), rows, row_keys(rows))
    write_json(os.path.join(out_dir, "results.json"), info, mode, wall_seconds, rows, memory=memory)
    with open(os.path.join(out_dir, "results.md"), "w") as handle:
        handle.write(f"""# torchops binary-embedding benchmark results ({mode} run)

Produced by `benchmarks/embeddings.py{' --quick' if mode == 'quick' else ''}` in {wall_seconds:.0f} s.

## Machine

{machine_markdown(info)}

## How to read the table

- `search`: {QUERIES} queries searched at once in a database of `vectors` packed vectors of {DIM}
  bits ({DIM // 8} bytes each, random bits), the {K} nearest of each by Hamming distance.
  `torchops`: `examples/binary_embeddings.py`'s `hamming_topk` (blocks of 2048 database vectors:
  `torch.bitwise_xor` of int64 words with every query, `torchops.bitwise_count`, the counts added,
  `torch.topk`; then a topk of the blocks' best); `numpy`: its `numpy_hamming_topk`, the same blocks
  with `np.bitwise_xor`, `np.bitwise_count`, `np.argpartition`, single-threaded (timed in the 1-thread
  rows only); `faiss`:
  `faiss.IndexBinaryFlat({DIM}).search(queries, {K})` (faiss-cpu {info.get('faiss', '-')}, its OpenMP threads
  set to `thr`).
- `quantize`: {QUANTIZE_VECTORS} float32 vectors of {DIM} dimensions to bits:
  `torchops.packbits(e > 0, dim=-1)` against `np.packbits(e > 0, axis=-1)`, both allocating; its
  rate column is vectors per second. The summary gives each library's `e > 0` alone, timed with them.
- Times: medians (µs per call) over at least 3 repetitions, contenders alternating within each;
  `q/s`: queries per second (`{QUERIES}` / the median). `×numpy`, `×faiss`: that contender's time /
  torchops's (> 1: torchops faster). Every contender's distances are checked against torchops's
  first (and each index against the distance given for it).
- `IQR`: interquartile range / median of torchops's samples; `*`: a 2-thread row measured while
  another process held a core.

## Summary

```
{summary}
```

## Results

{markdown_rows(COLUMNS, [cells(r) for r in rows], left=3)}

## Memory

In a fresh process per size (`{' '.join(f'{k}={v}' for k, v in MALLOC_ENV.items())}`, so freed memory goes back to
the kernel): `database`, the growth of the resident size while the searchable database is made
(the packed tensor, which NumPy's search reads through `.numpy()`; faiss's index, which copies the
codes); `search`, the peak growth during one search of {QUERIES} queries (scratch and results),
the kernel's count (`VmHWM`, reset through `/proc/self/clear_refs`). The largest database that
fits is MemTotal less the search's growth, over the database's bytes per vector at the largest
size measured.

{memory_table(memory, total, markdown=True)}
""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"databases of {', '.join(map(size_label, QUICK_VECTORS))} vectors only")
    parser.add_argument("--out-dir", help="default: benchmarks/results/embeddings (--quick: .../embeddings/quick)")
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)  # measure_memory()'s process
    args = parser.parse_args()
    if args.memory_child:
        print(json.dumps(memory_row(args.memory_child)))
        return
    if args.out_dir is None:
        results = os.path.join(HERE, "results", "embeddings")
        args.out_dir = os.path.join(results, "quick") if args.quick else results
    mode = "quick" if args.quick else "full"
    sizes = QUICK_VECTORS if args.quick else VECTORS
    if faiss is None:
        print("faiss is not installed (pip install -r benchmarks/requirements.txt): measuring without it", flush=True)

    start = time.time()
    load_at_start = os.getloadavg()[0]
    all_threads = torch.get_num_threads()
    if load_at_start > 0.5:
        print(f"warning: load average {load_at_start:.2f} on {os.cpu_count()} cores: other processes are running",
              flush=True)
    print(f"binary-embedding benchmark ({mode}): {DIM}-bit vectors, databases of "
          f"{', '.join(map(size_label, sizes))}, {QUERIES} queries, k={K}, threads {THREADS}", flush=True)
    try:
        rows = run(sizes, seconds=0.05 if args.quick else 0.2, wait_budget=5.0 if args.quick else 60.0)
    finally:
        set_threads(all_threads)
    print("memory, a fresh process per size:", flush=True)
    memory = measure_memory(sizes)
    total = memory_available()

    wall = time.time() - start
    level = level_in_use()
    info = machine_info([level], level, all_threads)
    info["torchops source"] = source_version()
    info["faiss"] = faiss.__version__ if faiss is not None else "not installed"
    if faiss is not None:
        info["faiss compiled for"] = faiss.get_compile_options().strip()
    info["load average (1 min) at start / end"] = f"{load_at_start:.2f} / {os.getloadavg()[0]:.2f}"
    summary = summary_text(rows)
    print()
    print(aligned_table(COLUMNS, [cells(r) for r in rows], left=3))
    print("\n" + memory_table(memory, total, markdown=False))
    print("\n" + "\n".join(f"{key}: {value}" for key, value in info.items()))
    print("\n" + summary)
    write_results(rows, memory, total, info, summary, args.out_dir, mode, wall)
    print(f"\nresults written to {args.out_dir}/results.md, results.csv, results.json ({wall:.0f} s)")
    exit_if_mismatched(rows, row_name)


if __name__ == "__main__":
    main()
