"""Instructions per element of every layout case, torchops's and PyTorch's, counted by callgrind.

    .venv/bin/python benchmarks/instructions.py [--quick] [--out-dir DIR]
    (DIR: benchmarks/results/instructions, or .../instructions/quick)

A time depends on the CPU a run draws (its vector width, caches and memory); the instructions a
call executes do not, beyond the kernel level it runs. So beside bench.py's times, this counts,
for the same operands (bench.py's make_operands) and the same out= call (bench.py's contenders),
how many instructions torchops and PyTorch's builtin execute per element: a layout path that
does more work per element than PyTorch's loop shows here on any machine, AVX-512 or not.

How: one process under `valgrind --tool=callgrind`, counting only from just before to just after
one call of each contender (client requests from a small helper compiled at run time), after a
first, uncounted call: the whole out= call a user makes, Python and dispatch included, less what
counting an empty call costs. The per-call part is a few thousand instructions for either
library: under 0.01 per element at 1M, so there the count is the loop's. torchops is counted at
every kernel level the CPU has that valgrind runs (valgrind runs AVX2 but no AVX-512 code: an
AVX-512 CPU is counted at its AVX2 and portable levels). The vector levels are set against
PyTorch at the level it picks itself, as a user's CPU runs it; the portable level against
PyTorch's portable one (ATEN_CPU_CAPABILITY=default), which is what both run on a CPU whose
best level that is.
One thread: the count is what one thread executes (at 2 threads the same instructions are split
between two). Counts are exact and repeatable for the same build and operands, whatever else the
machine is doing.

Needs valgrind (Debian's package). Results: results.md and results.json in --out-dir.
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import torch

import bench
from report import K, M, markdown_rows, machine_info, machine_markdown, size_label, source_version, write_json

OPS = ["left", "right"]  # the shifts PyTorch has a builtin for on every signed dtype
DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64]
SIZES = [64 * K, M]  # bench.py's layout sizes but 16M: the same paths as 1M, 16x longer under valgrind
QUICK = dict(operands=["tensor", "count_rows", "count_cols", "x_transposed"], dtypes=[torch.int16, torch.int32],
             sizes=[M], ops=["left"])

# Turns callgrind's counting on and off from the worker: client requests, compiled at run time
# (valgrind's headers come with Debian's valgrind package).
COUNTING_C = r"""
#include <valgrind/callgrind.h>
void counting_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; CALLGRIND_TOGGLE_COLLECT; }
void counting_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS; }
"""


def list_cases(quick: bool, levels: list[str]) -> list[bench.Case]:
    choice = QUICK if quick else dict(operands=["tensor"] + bench.LAYOUTS, dtypes=DTYPES, sizes=SIZES, ops=OPS)
    return [bench.Case(op, dtype, size, how, 1, level)
            for level in levels for op in choice["ops"] for dtype in choice["dtypes"]
            for how in choice["operands"] for size in choice["sizes"]]


# ---------------------------------------------------------------------------------------------
# Under valgrind: count one call of each contender per case, after a first one.

CONTENDERS = ("torchops", "torch")


def worker(cases_path: str, counting_path: str, counted_path: str) -> None:
    torch.set_num_threads(1)
    counting = ctypes.CDLL(counting_path)
    with open(cases_path) as handle:
        cases = [bench.Case(c["op"], getattr(torch, c["dtype"]), c["size"], c["operands"], 1, c["level"])
                 for c in json.load(handle)]

    def counted(function):
        counting.counting_start()
        function()
        counting.counting_stop()

    # What counting itself costs (the calls in and out through ctypes): counted first, three times.
    counted_calls = [(-1, "nothing")] * 3
    for _ in range(3):
        counted(lambda: None)
    for index, case in enumerate(cases):
        bench.set_level(case.level)
        x, y = bench.make_operands(case)
        contenders = bench.make_contenders(case, x, y)
        wrong = bench.verify(contenders)  # also the first call of each
        if wrong:
            sys.exit(f"instructions.py: {case}: outputs differ: {wrong}")
        for name in CONTENDERS:
            if name == "torch" and case.level != cases[0].level:
                continue  # PyTorch does not depend on torchops's level: counted at the first only
            counted(contenders[name][1])
            counted_calls.append((index, name))
    with open(counted_path, "w") as handle:
        json.dump({"calls": counted_calls, "torch level": torch.backends.cpu.get_cpu_capability().lower()}, handle)


# ---------------------------------------------------------------------------------------------
# The parent: runs the worker under callgrind, reads one profile per counted call.

def dump_total(path: str) -> int:
    with open(path) as handle:
        for line in handle:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    return 0


def count(cases: list[bench.Case], torch_capability: str | None) -> tuple[list[dict], int]:
    """The rows of `cases`, PyTorch running at `torch_capability` (None: the level it picks)."""
    with tempfile.TemporaryDirectory() as scratch:
        counting_path = os.path.join(scratch, "counting.so")
        source = os.path.join(scratch, "counting.c")
        with open(source, "w") as handle:
            handle.write(COUNTING_C)
        compiler = os.environ.get("CC", "cc")
        built = subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", counting_path, source],
                               capture_output=True, text=True)
        if built.returncode != 0:
            sys.exit(f"instructions.py: could not compile the counting helper (valgrind's headers: Debian's "
                     f"valgrind package):\n{built.stderr}")
        cases_path = os.path.join(scratch, "cases.json")
        counted_path = os.path.join(scratch, "counted.json")
        with open(cases_path, "w") as handle:
            json.dump([dict(op=c.op, dtype=str(c.dtype).removeprefix("torch."), size=c.size, operands=c.operands,
                            level=c.level) for c in cases], handle)
        out_file = os.path.join(scratch, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", "--instr-atstart=no",
                   "--collect-atstart=no", sys.executable, os.path.abspath(__file__), "--worker", cases_path,
                   counting_path, counted_path]
        env = dict(os.environ, **({"ATEN_CPU_CAPABILITY": torch_capability} if torch_capability else {}))
        result = subprocess.run(command, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            sys.exit(f"instructions.py: the run under valgrind failed ({result.returncode}):\n{result.stderr[-3000:]}")
        with open(counted_path) as handle:
            counted = json.load(handle)
        counted_calls, torch_level = counted["calls"], counted["torch level"]
        # One profile per counted call, numbered in order (the last one, at exit, counted nothing).
        dumps = sorted(glob.glob(out_file + ".*"), key=lambda path: int(path.rsplit(".", 1)[1]))
        if len(dumps) < len(counted_calls):
            sys.exit(f"instructions.py: {len(counted_calls)} counted calls but {len(dumps)} profiles")
        totals = [dump_total(path) for path in dumps[:len(counted_calls)]]
    overhead = min(total for (index, _), total in zip(counted_calls, totals) if index < 0)
    per_element = {}
    for (index, name), total in zip(counted_calls, totals):
        if index >= 0:
            per_element[index, name] = (total - overhead) / cases[index].size
    rows = []
    for index, case in enumerate(cases):
        # PyTorch's count, made at the first level, holds for the same case at every level.
        torch_index = next(i for i, other in enumerate(cases)
                           if (other.op, other.dtype, other.size, other.operands)
                           == (case.op, case.dtype, case.size, case.operands))
        mine, theirs = per_element[index, "torchops"], per_element[torch_index, "torch"]
        rows.append({"op": case.op, "dtype": str(case.dtype).removeprefix("torch."), "size": case.size,
                     "operands": case.operands, "level": case.level, "torch_level": torch_level,
                     "torchops_per_element": mine,
                     "torch_per_element": theirs, "ratio": mine / theirs})
    return rows, overhead


COLUMNS = ["layout", "op", "dtype", "size", "level", "PyTorch level", "torchops", "PyTorch", "torchops / PyTorch"]


def cells(row: dict) -> list[str]:
    return [row["operands"], row["op"], row["dtype"], size_label(row["size"]), row["level"], row["torch_level"],
            f"{row['torchops_per_element']:.2f}", f"{row['torch_per_element']:.2f}", f"{row['ratio']:.2f}"]


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        return worker(*sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few layouts at 1M: about two minutes")
    parser.add_argument("--out-dir", help="where results.md and results.json go")
    args = parser.parse_args()
    out_dir = args.out_dir or os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "instructions",
                                           *(["quick"] if args.quick else []))
    levels = list(reversed(bench.supported_levels()))  # the best first
    # valgrind runs no AVX-512 code: such a level is left out, and said so.
    runnable = [name for name in levels if not name.startswith("avx512")]
    # The vector levels against PyTorch's own choice (a user's CPU runs PyTorch's best level
    # whatever torchops runs); the portable level against PyTorch's portable one, which is what
    # both run on a CPU whose best level it is.
    groups = {}
    for level in runnable:
        groups.setdefault("default" if level == "default" else None, []).append(level)
    cases = list_cases(args.quick, runnable)
    print(f"instructions.py: {len(cases)} cases at levels {', '.join(runnable)} under callgrind"
          f"{' (not ' + ', '.join(sorted(set(levels) - set(runnable))) + ': valgrind runs no AVX-512 code)' if len(runnable) < len(levels) else ''}",
          flush=True)
    start = time.monotonic()
    rows, overheads = [], []
    for capability, group in groups.items():
        group_rows, overhead = count(list_cases(args.quick, group), capability)
        rows += group_rows
        overheads.append(overhead)
    wall = time.monotonic() - start
    body = [cells(row) for row in rows]
    print(markdown_rows(COLUMNS, body, left=6))
    worse = [row for row in rows if row["ratio"] > 1.0]
    verdict = ("every case executes at most PyTorch's instructions per element" if not worse else
               f"{len(worse)} of {len(rows)} cases execute more instructions per element than PyTorch: "
               + ", ".join(f"{r['operands']} {r['op']} {r['dtype']} {size_label(r['size'])} {r['level']} "
                           f"{r['ratio']:.2f}x" for r in worse))
    print("\n" + verdict)
    info = machine_info(levels, levels[0], 1)
    info["levels counted"] = ", ".join(runnable)
    info["instructions of an empty counted call (subtracted)"] = ", ".join(map(str, overheads))
    info["torchops source"] = source_version()
    os.makedirs(out_dir, exist_ok=True)
    write_json(os.path.join(out_dir, "results.json"), info, "quick" if args.quick else "full", wall, rows)
    with open(os.path.join(out_dir, "results.md"), "w") as handle:
        handle.write("# Instructions per element (callgrind)\n\n" + machine_markdown(info) + "\n\n"
                     + __doc__.split("\n\n", 2)[2].split("\n\nNeeds")[0] + "\n\n" + verdict + "\n\n"
                     + markdown_rows(COLUMNS, body, left=6) + "\n")
    print(f"\nwrote {out_dir}/results.md ({wall:.0f} s)")


if __name__ == "__main__":
    main()
