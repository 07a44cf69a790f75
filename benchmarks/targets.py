"""The performance targets: every current goal, in one list, each judged on the rows of the
benchmark that measures it (bench.py, compiled.py, call_cost.py).

A target is a ratio of median times measured side by side in one process (> 1: torchops
faster; bench.py's memory rows: a ratio of bytes) that every row it is set on must reach.
evaluate() gives each target's status for one run: PASS with its worst row; TIE when the
rows below the threshold are each within their own noise of it (the interval of the ratio
that the row's paired samples allow, timing.ratio_interval, reaches the threshold: where two
loops both run at memory speed, "at least 1.0x" is a coin's toss in any one run); MISS with
the rows measurably below and, for each, the measurement of the same row that bounds it (how
close torchops runs to the bandwidth reference, or how far the row's own noise moves a
ratio); or NOT MEASURED when the run had no row for it (a quick run measures a few).
docs/performance.md explains each miss of the recorded runs; a target that stops being a
goal leaves this list.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from report import NOISE, K, M

MEMORY_BOUND = 0.9  # a row at this fraction of the bandwidth reference runs at memory speed


@dataclass(frozen=True)
class Target:
    # whose rows: "bench", "memory" (bench.py's), "compiled", "call_cost" or "device" (bench.py --device)
    benchmark: str
    title: str
    selects: Callable[[dict], bool]  # the rows the target is set on
    ratio: str  # the row's ratio compared with the threshold
    threshold: float


# bench.py's operand kinds that are not a layout: contiguous operands of one shape, or a
# Python-int count (every other kind is one of its LAYOUTS).
PLAIN_OPERANDS = ("tensor", "scalar", "contiguous", "rows")
PACKING_OPS = ("packbits", "unpackbits", "pack2", "pack4", "unpack2", "unpack4")  # bench.py's PACKING_BITS
UNSIGNED_WIDE = ("uint16", "uint32", "uint64")  # no PyTorch shift: set against NumPy


def _builtin(row):
    return row.get("torch_peer") == "builtin"


def _vector_level(row):
    # The call-path targets are set for the vector levels: at the portable level the loop,
    # not the call, decides (it has no vector variable shifts).
    return row["level"] != "default"


TARGETS = [
    # bench.py: the kernels
    Target("bench", "every shift and signbit case >= 1.0x PyTorch builtin from 64K elements",
           lambda r: _builtin(r) and r["size"] >= 64 * K, "x_torch", 1.0),
    Target("bench", "every layout (broadcast counts, expanded, transposed, sliced, strided, channels_last) "
                    ">= 1.0x PyTorch builtin at 64K-16M elements, 1 and 2 threads",
           lambda r: _builtin(r) and r["operands"] not in PLAIN_OPERANDS and 64 * K <= r["size"] <= 16 * M, "x_torch", 1.0),
    # torch_peer "composite": bench.py's label of the fastest PyTorch equivalent.
    Target("bench", "logical right shift of int16/int32/int64 by a tensor count >= 3x the fastest PyTorch "
                    "equivalent",
           lambda r: r["op"] == "right_logical" and r.get("torch_peer") == "composite" and r["dtype"] != "int8"
           and r["operands"] == "tensor", "x_torch", 3.0),
    Target("bench", "bitwise_count >= 1.0x NumPy's np.bitwise_count from 64K elements, 1 and 2 threads",
           lambda r: r["op"] == "bitwise_count" and r["size"] >= 64 * K, "x_numpy", 1.0),
    Target("bench", "bitwise_count >= 3x the fastest PyTorch equivalent (a table gather for 8/16 bits, SWAR for "
                    "32/64) from 64K elements, 1 and 2 threads",
           lambda r: r["op"] == "bitwise_count" and r["size"] >= 64 * K, "x_torch", 3.0),
    # The packing ops' memory-speed target is the bool mask's, below.
    Target("bench", ">= 16M elements: >= 90% of the bandwidth reference",
           lambda r: r["size"] >= 16 * M and r["op"] not in PACKING_OPS, "x_bandwidth", MEMORY_BOUND),
    # bench.py: packing (sizes count the unpacked elements)
    Target("bench", "packbits and unpackbits >= 1.0x NumPy's np.packbits / np.unpackbits from 64K elements, "
                    "1 and 2 threads (both calls allocating their result)",
           lambda r: r["op"] in ("packbits", "unpackbits") and r["size"] >= 64 * K, "x_numpy", 1.0),
    Target("bench", "packbits and unpackbits >= 3x the fastest PyTorch composite from 64K elements, 1 and 2 threads",
           lambda r: r["op"] in ("packbits", "unpackbits") and r["size"] >= 64 * K, "x_torch", 3.0),
    Target("bench", "packbits of a 16M-element bool mask >= 90% of the bandwidth reference (a copy of the same bytes)",
           lambda r: r["op"] == "packbits" and r["dtype"] == "bool" and r["size"] == 16 * M, "x_bandwidth",
           MEMORY_BOUND),
    Target("memory", "a packing call's peak memory: no more than its input and output (growth <= output + 256 KiB)",
           lambda r: r["contender"] == "torchops", "x_memory", 1.0),
    # bench.py: the call path
    Target("bench", "call path (vector levels): a 1-element out= call takes at most PyTorch builtin's time",
           lambda r: _vector_level(r) and _builtin(r) and r["size"] == 1, "x_torch", 1.0),
    Target("bench", "call path (vector levels): tensor- and Python-int-count shifts at 1K-1M >= 1.0x PyTorch builtin",
           lambda r: _vector_level(r) and _builtin(r) and K <= r["size"] <= M and r["operands"] in ("tensor", "scalar"),
           "x_torch", 1.0),
    Target("bench", "call path (vector levels): uint16/32/64 shifts >= 1.0x NumPy from 4K",
           lambda r: _vector_level(r) and r["dtype"] in UNSIGNED_WIDE and r["size"] >= 4 * K
           and r["operands"] in ("tensor", "scalar"), "x_numpy", 1.0),
    # call_cost.py
    Target("call_cost", "a 1-element call of every typed function (functional, in place, out=) takes at most "
                        "the matching builtin's time, 1 and 2 threads, every vector level",
           lambda r: True, "x_builtin", 1.0),
    # compiled.py
    Target("compiled", "compiled torchops >= 1.0x the compiled builtin chain, every case",
           lambda r: True, "x_builtin", 1.0),
    Target("compiled", "compiled torchops >= 1.0x the same chain through torch.ops.torchops, every case",
           lambda r: True, "x_torch_ops", 1.0),
    Target("compiled", "compiled torchops >= 2x eager torchops from 1M elements",
           lambda r: r["size"] >= M, "x_eager", 2.0),
    Target("compiled", "the generated code of every compiled torchops case is fused (no torch.ops.torchops call)",
           lambda r: True, "fused", 1.0),
    # bench.py --device cuda (device.py): measured only on a machine with that device
    Target("device", "on the device: every shift and signbit case >= 1.0x PyTorch's builtin on it from 1M elements",
           lambda r: r["size"] >= M, "x_torch", 1.0),
    Target("device", "on the device: 256M elements at >= 90% of the bandwidth reference",
           lambda r: r["size"] >= 256 * M, "x_bandwidth", MEMORY_BOUND),
]


def bound(row: dict) -> str:
    """What the row's own measurements say about a miss: its distance from the bandwidth
    reference (bench.py), the noise of its ratios (compiled.py's A/A), its samples' spread."""
    notes = []
    if "x_bandwidth" in row:
        share = row["x_bandwidth"]
        notes.append(f"{share:.0%} of the bandwidth reference" + (": memory-bound" if share >= MEMORY_BOUND else ""))
    if "a_a" in row:
        notes.append(f"A/A {row['a_a']:.2f}")
    if "spread" in row:
        notes.append(f"IQR {row['spread']:.0%}")
    return ", ".join(notes)


def _listed(rows: list[dict], ratio: str, name: Callable[[dict], str], shown: int = 6) -> str:
    """The first `shown` rows: each one's ratio, name, the ratio's interval and bound()."""
    def described(row):
        interval = row.get(ratio + "_interval")
        notes = [f"interval {interval[0]:.2f}-{interval[1]:.2f}x"] if interval else []
        limit = bound(row)
        notes += [limit] if limit else []
        return f"{row[ratio]:.2f}x {name(row)}" + (f" ({', '.join(notes)})" if notes else "")
    more = f"; ... {len(rows) - shown} more" if len(rows) > shown else ""
    return "; ".join(described(r) for r in rows[:shown]) + more


def evaluate(benchmark: str, rows: list[dict], name: Callable[[dict], str]) -> list[tuple[str, str, str]]:
    """(PASS | TIE | MISS | NOT MEASURED, title, detail) for each of `benchmark`'s targets, on
    its timed rows (each a dict with the ratios and, where measured, each ratio's interval
    under "<ratio>_interval"); `name` names a row in the details."""
    results = []
    for target in (t for t in TARGETS if t.benchmark == benchmark):
        selected = [r for r in rows if target.ratio in r and target.selects(r)]
        if not selected:
            results.append(("NOT MEASURED", target.title, "no case in this run"))
            continue
        below = sorted((r for r in selected if r[target.ratio] < target.threshold), key=lambda r: r[target.ratio])
        worst = min(selected, key=lambda r: r[target.ratio])
        if not below:
            results.append(("PASS", target.title, f"{len(selected)} cases, worst {worst[target.ratio]:.2f}x "
                                                   f"({name(worst)})"))
            continue
        interval = target.ratio + "_interval"
        misses = [r for r in below if interval not in r or r[interval][1] < target.threshold]
        if not misses:
            results.append(("TIE", target.title, f"{len(below)} of {len(selected)} cases below {target.threshold}x, "
                                                  f"none measurably: {_listed(below, target.ratio, name)}"))
            continue
        within_noise = sum(r[target.ratio] >= target.threshold * NOISE for r in misses)
        tied = f"; {len(below) - len(misses)} more below it within their noise" if len(misses) < len(below) else ""
        results.append(("MISS", target.title, f"{len(misses)} of {len(selected)} cases measurably below "
                                              f"{target.threshold}x ({within_noise} within {1 - NOISE:.0%} of it): "
                                              f"{_listed(misses, target.ratio, name)}{tied}"))
    return results


def text(results: list[tuple[str, str, str]], indent: str = "  ") -> str:
    """The results as TARGETS lines: the measured ones, then the titles of those not measured."""
    lines = [f"{indent}{status:<5} {title}\n{indent}      {detail}" for status, title, detail in results
             if status != "NOT MEASURED"]
    unmeasured = [title for status, title, _ in results if status == "NOT MEASURED"]
    if unmeasured:
        lines.append(f"{indent}not measured by this run: " + "; ".join(unmeasured))
    return "\n".join(lines)
