"""Side-by-side benchmark of torchops.

    .venv/bin/python benchmarks/bench.py [--quick | --layouts | --packing | --op OP] [--out-dir DIR]
                                         [--baseline OLD/results.json]
    (DIR: benchmarks/results, or .../results/quick)
    .venv/bin/python benchmarks/bench.py --device cuda [--quick]   (on a GPU: device.py)

Every case runs torchops and its peers in one process, alternating between them inside each
repetition, each writing into its own preallocated output (out=):

  torchops     torchops.bitshift(x, y, direction, arithmetic, out=) / torchops.signbit(x, out=) /
               torchops.bitwise_count(x, out=) / torchops.packbits(x, out=) / unpackbits / pack / unpack
               (the typed API: its compiled binding where torchops has it)
  torchops.op  the registered overload through torch.ops (sizes <= 1K only: shows the binding's gain)
  functional   (packing ops) the functional call, torchops.packbits(x): it allocates its result, as
               NumPy's packbits and unpackbits (which have no out=) do, so NumPy is set against it
  torch        torch.bitwise_left_shift / bitwise_right_shift / signbit (out=); for a logical
               right shift of a signed dtype, the fastest PyTorch equivalent we know (see
               torch_logical_right_shift); none for uint16/32/64 (PyTorch has no shifts for them);
               for bitwise_count, which PyTorch lacks, the fastest PyTorch equivalent we know
               (torch_bitwise_count); for the packing ops, which PyTorch lacks too, the fastest
               composites we know (torch_packbits, torch_pack, torch_unpack). The results label such a
               peer "composite" (torch_peer).
  numpy        np.left_shift / np.right_shift / np.signbit / np.bitwise_count (out=), np.packbits /
               np.unpackbits (no out=: they allocate), single-threaded; none for bfloat16, nor for
               2- and 4-bit packing (NumPy packs bits only)
  bandwidth    an op that moves the same bytes: torch.add with the same operands (viewed as the
               signed dtype of the same width) for a shift; for signbit and bitwise_count a narrowing
               copy of x (viewed as int) into the output's bytes (reads n * itemsize bytes, writes n bytes);
               for packing, the narrowing copy of x viewed as the int of a packed byte's elements
               (packbits: 8 bytes as an int64) into the packed bytes, and the widening copy back for
               unpacking (packbits of n bools reads n bytes and writes n / 8, as that copy does)

Before timing, each case checks once that every peer's output equals torchops's, so a wrong
answer is never timed. Times are medians over repetitions; a repetition runs every contender
once, in a fresh random order each time (timing.measure), so drift, noise from other
processes and the call before hit all contenders alike. Results: a table on stdout,
results.md, results.csv, results.json and speedup.png in --out-dir, and a TARGETS section: this run's rows
judged by bench.py's targets in targets.py (the kernels against PyTorch, NumPy and memory
bandwidth; the call path of small and mid-size calls). With --baseline, every case is also set
against the same case of an earlier run (its results.json), as ratios to PyTorch measured in
each run, so the two runs' machine load cancels out. Runs with packing rows also measure the peak
memory of one packing call (measure_memory(): in a fresh process, from the kernel's count of
resident pages) against its input and output.

This file holds what is measured (cases, operands, contenders, the check of their outputs, the
table's columns); the targets are targets.py's, the timing is timing.py's and the generic
reporting (tables, machine description, results files) report.py's, all shared with compiled.py.
"""
from __future__ import annotations

import argparse
import functools
import gc
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch

import targets
import torchops
from report import (
    NOISE, K, M, aligned_table, exit_if_mismatched, machine_info, machine_markdown, markdown_rows, row_keys,
    size_label, source_version, write_csv, write_json,
)
from timing import (
    MAX_SPREAD, MAX_WAIT_PER_CASE, MIN_REPS, RETRIES, SAMPLE_SECONDS, calmest, cores_busy, measure, ratio_interval,
    record_times, wait_for_cores,
)

SIZES = [1, 64, K, 4 * K, 16 * K, 64 * K, 256 * K, M, 4 * M, 16 * M]
CALL_PATH_SIZES = [K, 16 * K, 64 * K, 256 * K, M]  # where the call-path targets are set
MID_SIZES = [1, K, 64 * K, M, 16 * M]  # for the side sweeps (operand kinds, 1 thread, other levels)
LAYOUT_SIZES = [64 * K, M, 16 * M]  # where the layout target is set
# The quick run's: in the caches up to 256K (the kernels' own speed against their peers'), and
# 16M (memory speed, against the bandwidth reference). Not 1M: its 2-12 MB straddle the 2 cores'
# L2 on the machine of docs/performance.md, where torchops and PyTorch alike run at the
# bandwidth reference and their ratio is the noise's (0.92-1.03x over 21 samples); the full
# run has the 1M rows.
QUICK_SIZES = [1, K, 64 * K, 256 * K, 16 * M]
HUGE = 64 * M  # full mode only, a few key cases

SHIFT_OPS = ["left", "right", "right_logical"]  # right = arithmetic right shift
SHIFT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64,
                torch.uint8, torch.uint16, torch.uint32, torch.uint64]
SIGNBIT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64,
                  torch.int8, torch.int16, torch.int32, torch.int64]
NO_TORCH_SHIFT = {torch.uint16, torch.uint32, torch.uint64}
TORCH_SHIFT_DTYPES = [dtype for dtype in SHIFT_DTYPES if dtype not in NO_TORCH_SHIFT]
SIGNED_OF_WIDTH = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
BITWISE_COUNT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint32]
UNARY_OPS = ("signbit", "bitwise_count")  # f(x, out=): no count operand
# The packing ops and the bits of each field: packbits/unpackbits (NumPy's), pack/unpack of 2- and
# 4-bit fields. Their sizes are elements of the unpacked side; NumPy has the 1-bit ones only.
PACKING_BITS = {"packbits": 1, "unpackbits": 1, "pack2": 2, "pack4": 4, "unpack2": 2, "unpack4": 4}
PACKING_OPS = tuple(PACKING_BITS)
UNPACKING_OPS = ("unpackbits", "unpack2", "unpack4")
PACKING_SIZES = [64 * K, M, 16 * M]  # where the packing targets are set (from 64K; the mask's at 16M)
MEMORY_SIZE = 64 * M  # measure_memory()'s calls: large enough that a page or an allocator header is noise
SCALAR_COUNT = 3  # in range for every dtype, so every library defines the same answer

PARALLEL_FROM = 32 * K      # PyTorch's grain size: smaller calls run on one thread whatever set_num_threads says


# ---------------------------------------------------------------------------------------------
# The cases: this is the one place that says what gets measured.

@dataclass(frozen=True)
class Case:
    op: str        # left | right | right_logical | signbit | bitwise_count | a key of PACKING_BITS
    dtype: torch.dtype  # x's; for unpacking, the result's (uint8, or bool: a view of the uint8 result)
    size: int      # elements of x (and of the output); for packing, of the unpacked side
    operands: str  # a key of OPERANDS
    threads: int   # torch.set_num_threads value
    level: str     # torchops dispatch level


def list_cases(mode: str, level_in_use: str, other_levels: list[str], all_threads: int) -> list[Case]:
    """The cases of a run: mode "quick", "full", "layouts" (the full run's layout rows) or
    "packing" (the full run's packing rows)."""
    cases = []

    def add(ops, dtypes, sizes, operands=("tensor",), threads=(all_threads,), levels=(level_in_use,)):
        for level, thread_count, op, dtype, how, size in itertools.product(
                levels, threads, ops, dtypes, operands, sizes):
            if op in UNARY_OPS and how == "tensor":
                how = "contiguous"
            cases.append(Case(op, dtype, size, how, thread_count, level))

    if mode == "quick":
        add(["left", "right_logical"], [torch.int8], QUICK_SIZES)
        add(["right", "right_logical"], [torch.int32], QUICK_SIZES)
        add(["left"], [torch.uint32], QUICK_SIZES)
        add(["signbit"], [torch.float32, torch.bfloat16], QUICK_SIZES)
        add(["bitwise_count"], [torch.int8, torch.int64], QUICK_SIZES)
        add(["left"], [torch.int16], [256 * K], operands=["scalar"] + LAYOUTS)
        add(["packbits"], [torch.bool], [64 * K, M], operands=("contiguous",))
        add(["unpackbits"], [torch.uint8], [64 * K, M], operands=("contiguous",))
        return cases

    threads = (1, all_threads) if all_threads > 1 else (1,)
    # Packing: NumPy's packbits and unpackbits on a 1-D x and on rows (dim=-1), both result dtypes
    # of a mask, 1 and 2 threads; 2- and 4-bit fields; at the other levels, the bool mask.
    add(["packbits", "unpackbits"], [torch.uint8, torch.bool], PACKING_SIZES, operands=("contiguous", "rows"),
        threads=threads)
    add(["pack2", "pack4", "unpack2", "unpack4"], [torch.uint8], PACKING_SIZES, operands=("contiguous",),
        threads=threads)
    add(["packbits", "unpackbits"], [torch.bool], PACKING_SIZES, operands=("contiguous",), threads=threads,
        levels=other_levels)
    packing, cases = cases, []
    if mode == "packing":
        return packing

    # Every layout, for every dtype PyTorch shifts, at 1 and 2 threads (the arithmetic right
    # shift on one dtype of each kind of kernel: an emulated 8-bit one and a native one); at
    # the other levels, one dtype of each width.
    add(["left"], TORCH_SHIFT_DTYPES, LAYOUT_SIZES, operands=LAYOUTS, threads=threads)
    add(["left"], list(SIGNED_OF_WIDTH.values()), LAYOUT_SIZES, operands=LAYOUTS, threads=threads, levels=other_levels)
    add(["right"], [torch.int8, torch.int32], LAYOUT_SIZES, operands=LAYOUTS, threads=threads,
        levels=(level_in_use, *other_levels))
    if mode == "layouts":
        return cases

    # Every op and dtype at every size: tensor count, contiguous, all threads, the level in use.
    add(SHIFT_OPS, SHIFT_DTYPES, SIZES)
    add(["signbit"], SIGNBIT_DTYPES, SIZES)
    add(["bitwise_count"], BITWISE_COUNT_DTYPES, SIZES)
    # Operand kinds, on dtypes that cover each width and the NumPy-only family.
    add(SHIFT_OPS, [torch.int8, torch.int32, torch.int64, torch.uint16], MID_SIZES,
        operands=("scalar", "count_rows", "strided"))
    add(["signbit"], [torch.float32, torch.bfloat16, torch.int8], MID_SIZES, operands=("strided",))
    # One thread.
    if all_threads > 1:
        add(SHIFT_OPS, [torch.int8, torch.int32], MID_SIZES, threads=(1,))
        add(["signbit"], [torch.float32, torch.int8], MID_SIZES, threads=(1,))
        add(["bitwise_count"], BITWISE_COUNT_DTYPES, MID_SIZES + [16 * M], threads=(1,))
    # Every other dispatch level the CPU supports.
    add(SHIFT_OPS, [torch.int8, torch.int16, torch.int32, torch.int64], MID_SIZES, levels=other_levels)
    add(["signbit"], SIGNBIT_DTYPES, MID_SIZES, levels=other_levels)
    add(["bitwise_count"], BITWISE_COUNT_DTYPES, MID_SIZES, levels=other_levels)
    # 64M elements: a few key cases (each tensor is 64-256 MB).
    add(["left", "right_logical"], [torch.int8], [HUGE])
    add(["right"], [torch.int32], [HUGE])
    add(["signbit"], [torch.float32, torch.int8], [HUGE])
    # The call-path targets: tensor and Python-int counts of every dtype at 1K-1M; at 1
    # thread and at the other vector level, the dtypes PyTorch shifts and one NumPy-only one.
    add(SHIFT_OPS, SHIFT_DTYPES, CALL_PATH_SIZES, operands=("scalar",))
    vector_levels = [name for name in other_levels if name != "default"]
    torch_dtypes = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint32]
    if all_threads > 1:
        add(SHIFT_OPS, torch_dtypes, CALL_PATH_SIZES, operands=("tensor", "scalar"), threads=(1,))
    add(SHIFT_OPS, torch_dtypes, CALL_PATH_SIZES, operands=("tensor", "scalar"), levels=vector_levels)
    cases += packing
    return list(dict.fromkeys(cases))  # each case once, in the order first listed


# ---------------------------------------------------------------------------------------------
# Dispatch levels.

def level_in_use() -> str:
    return torchops.cpu_capability()


def supported_levels() -> list[str]:
    """The levels this CPU can run, lowest first."""
    return list(torch.ops.torchops._supported_cpu_capabilities())


def set_level(name: str) -> None:
    if name != level_in_use():
        torch.ops.torchops._set_cpu_capability(name)


# ---------------------------------------------------------------------------------------------
# Inputs and contenders.

def bits(dtype: torch.dtype) -> int:
    return dtype.itemsize * 8


def random_values(dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=torch.float32).to(dtype)
    count = math.prod(shape)
    raw = torch.randint(0, 256, (count * dtype.itemsize,), dtype=torch.uint8)
    return raw.view(dtype).reshape(shape)  # every bit pattern, negative values included


COLS = 1024  # columns of the 2-D layouts: x of shape (rows, COLS), rows = n // COLS
CHANNELS = 64  # the channels_last layouts: (n // (64 * 32 * 32), 64, 32, 32)

# How the operands of each kind are laid out: the one place that says it (results.md quotes it).
OPERANDS = {
    "tensor": "a count tensor of x's shape, both 1-D and contiguous",
    "scalar": f"a Python-int count ({SCALAR_COUNT}), x 1-D",
    "contiguous": "(signbit, bitwise_count, packing) a 1-D x",
    "rows": "(packing) x of shape (n / 1024, 1024) unpacked, (n / 1024, 1024 / per byte) packed, along dim=-1",
    "count_rows": "x (rows, 1024), a count of shape (rows, 1)",
    "count_cols": "x (rows, 1024), a count of shape (1024,)",
    "count_0d": "x (rows, 1024), a 0-d count tensor",
    "x_expanded": "x a (1, 1024) row expanded to (rows, 1024), a contiguous count of that shape",
    "x_transposed": "x the transpose of a (1024, rows) tensor, a contiguous (rows, 1024) count",
    "x_sliced": "x = a[:, :1024] of a contiguous (rows, 1088) tensor a, a contiguous count",
    "strided": "x = a[:, ::2] of a contiguous (rows, 2048) tensor a, a contiguous count",
    "channels_last": "x and the count (n / 64Ki, 64, 32, 32), both channels_last",
    "channels_last_per_channel": "x (n / 64Ki, 64, 32, 32) channels_last, a count of shape (64, 1, 1)",
}
# The layouts PyTorch users meet beyond contiguous operands of one shape (targets.py's rows
# set on layouts are the same: every kind but its PLAIN_OPERANDS).
LAYOUTS = [name for name in OPERANDS if name not in targets.PLAIN_OPERANDS]


def make_operands(case: Case):
    """x, and y (a tensor or a Python int; None for signbit, bitwise_count and packing), laid out as OPERANDS says."""
    n, how = case.size, case.operands
    if case.op in PACKING_OPS:
        return packing_operand(case), None
    cols = min(n, COLS)
    rows = n // cols
    image = (max(1, n // (CHANNELS * 32 * 32)), CHANNELS, 32, 32)
    x_shape = {"tensor": (n,), "scalar": (n,), "contiguous": (n,)}.get(how, (rows, cols))

    def counts(shape):
        return torch.randint(0, bits(case.dtype), shape).to(case.dtype)  # in range: all peers agree

    if how == "strided":
        x = random_values(case.dtype, (rows, 2 * cols))[:, ::2]
    elif how == "x_sliced":
        x = random_values(case.dtype, (rows, cols + 64))[:, :cols]
    elif how == "x_expanded":
        x = random_values(case.dtype, (1, cols)).expand(rows, cols)
    elif how == "x_transposed":
        x = random_values(case.dtype, (cols, rows)).t()
    elif how.startswith("channels_last"):
        x = random_values(case.dtype, image).contiguous(memory_format=torch.channels_last)
    else:
        x = random_values(case.dtype, x_shape)
    if case.op in UNARY_OPS:
        return x, None
    if how == "scalar":
        return x, SCALAR_COUNT
    y_shape = {"count_rows": (rows, 1), "count_cols": (cols,), "count_0d": (),
               "channels_last_per_channel": (CHANNELS, 1, 1)}.get(how, tuple(x.shape))
    y = counts(y_shape)
    if how == "channels_last":
        y = y.contiguous(memory_format=torch.channels_last)
    return x, y


def packing_operand(case: Case) -> torch.Tensor:
    """x of a packing case: for packbits, zeros and random non-zero bytes half and half (or random
    bools), so that every value's rule (non-zero is a 1) is exercised; for pack, random bytes (the
    fields are their low bits); for unpacking, random packed bytes."""
    per_byte = 8 // PACKING_BITS[case.op]
    n = case.size if case.op not in UNPACKING_OPS else case.size // per_byte
    cols = COLS if case.op not in UNPACKING_OPS else COLS // per_byte
    shape = (n,) if case.operands == "contiguous" else (n // cols, cols)
    if case.op == "packbits" and case.dtype == torch.bool:
        return torch.randint(0, 2, shape, dtype=torch.bool)
    if case.op == "packbits":
        return torch.randint(0, 2, shape, dtype=torch.uint8) * torch.randint(1, 256, shape, dtype=torch.uint8)
    return torch.randint(0, 256, shape, dtype=torch.uint8)


def torch_logical_right_shift(x: torch.Tensor, y, out: torch.Tensor):
    """A function that computes out = x >>> y for a signed x from PyTorch builtins only.

    x >>> y zero-fills and gives 0 for an out-of-range count, for every count (check_equivalents).
    Scratch tensors are allocated here, once, like every contender's output: allocating them per
    call costs more than the arithmetic at 1M+ elements (fresh pages). The fastest variant we
    measured (1 to 16M elements, 1 and 2 threads): int8, one uint8 shift; int16/int32, widen, mask,
    shift, narrow; int64, shift, mask off the sign copies, zero the out-of-range counts;
    Python-int count, one shift and one mask.
    """
    n = bits(x.dtype)
    if isinstance(y, int):
        if not 0 <= y < n:
            return out.zero_
        if x.dtype == torch.int8:
            x_bytes, out_bytes = x.view(torch.uint8), out.view(torch.uint8)
            return lambda: torch.bitwise_right_shift(x_bytes, y, out=out_bytes)
        low_bits = -1 if y == 0 else (1 << (n - y)) - 1
        return lambda: torch.bitwise_right_shift(x, y, out=out).bitwise_and_(low_bits)

    if x.dtype == torch.int8:
        # uint8 shifts zero-fill, and a negative int8 count seen as uint8 is >= 128, so out of range: 0.
        x_bytes, y_bytes, out_bytes = x.view(torch.uint8), y.view(torch.uint8), out.view(torch.uint8)
        return lambda: torch.bitwise_right_shift(x_bytes, y_bytes, out=out_bytes)

    if x.dtype in (torch.int16, torch.int32):
        wide = torch.int32 if x.dtype == torch.int16 else torch.int64
        x_wide, y_wide = torch.empty(x.shape, dtype=wide), torch.empty(y.shape, dtype=wide)

        def widen_shift_narrow():
            # Widened and masked, x is non-negative, so PyTorch's fill for an out-of-range count is 0.
            x_wide.copy_(x).bitwise_and_((1 << n) - 1)
            y_wide.copy_(y)  # the same dtype as x_wide: a shift of mixed dtypes runs ~5x slower
            torch.bitwise_right_shift(x_wide, y_wide, out=x_wide)
            return out.copy_(x_wide)

        return widen_shift_narrow

    # int64, no wider type.
    minus_one, low_bits = torch.full_like(y, -1), torch.empty_like(y)
    out_of_range = torch.empty(y.shape, dtype=torch.bool)

    def shift_mask_zero():
        torch.bitwise_right_shift(x, y, out=out)
        torch.neg(y, out=low_bits).add_(n)  # n - y
        # the low n - y bits set: what the arithmetic shift did not fill (-1 << 64 is 0 in PyTorch)
        torch.bitwise_left_shift(minus_one, low_bits, out=low_bits).bitwise_not_()
        out.bitwise_and_(low_bits)
        torch.bitwise_and(y, -n, out=low_bits)  # non-zero exactly when y < 0 or y >= 64
        torch.ne(low_bits, 0, out=out_of_range)
        return out.masked_fill_(out_of_range, 0)

    return shift_mask_zero


# The number of 1 bits of |v| for every value v of an 8- or 16-bit dtype, as the table the
# PyTorch equivalent gathers from (made once per dtype: 65,536 Python counts for 16 bits).
@functools.cache
def _count_table(dtype: torch.dtype) -> torch.Tensor:
    info = torch.iinfo(dtype)
    values = torch.arange(info.min, info.max + 1, dtype=torch.int64)
    counts = torch.tensor([abs(v).bit_count() for v in values.tolist()], dtype=torch.uint8)
    # Indexed by the value's bits read as unsigned: a signed dtype's negative values come last.
    unsigned_order = torch.argsort(values.to(dtype).view(UNSIGNED_OF_WIDTH[dtype.itemsize]).to(torch.int64))
    return counts[unsigned_order].contiguous()


UNSIGNED_OF_WIDTH = {1: torch.uint8, 2: torch.uint16, 4: torch.uint32, 8: torch.uint64}


def torch_bitwise_count(x: torch.Tensor, out: torch.Tensor):
    """A function that computes np.bitwise_count(x) into the uint8 `out` from PyTorch builtins
    only (PyTorch has no bit count). Scratch tensors are allocated here, once, as in
    torch_logical_right_shift. The fastest variants we know: 8- and 16-bit x, a gather from a
    table of every value's count (the index widened to int32, which index_select takes); 32- and
    64-bit x, |x| then the SWAR count (2-, 4-, 8-bit field sums, then a multiply that adds the
    bytes into the top one), in place in one scratch tensor. PyTorch's integer arithmetic wraps,
    so |INT_MIN| stays INT_MIN, whose bits are the right magnitude; the shifts are arithmetic,
    and each is masked so that the copies of the sign bit never count."""
    if x.element_size() <= 2:
        table = _count_table(x.dtype)
        bits = x.view(UNSIGNED_OF_WIDTH[x.element_size()])
        index = torch.empty(x.shape, dtype=torch.int32)
        flat_out = out.view(-1) if out.is_contiguous() else None

        def gather():
            index.copy_(bits)
            return torch.index_select(table, 0, index.view(-1), out=flat_out)

        return gather
    signed = x.view(SIGNED_OF_WIDTH[x.element_size()])
    n = x.element_size() * 8
    mask = {k: int(f"{k:02x}" * (n // 8), 16) for k in (0x55, 0x33, 0x0F)}
    mask = {k: v - (1 << n) if v >= 1 << (n - 1) else v for k, v in mask.items()}
    ones = int("01" * (n // 8), 16)
    v, t = torch.empty_like(signed), torch.empty_like(signed)

    def swar():
        torch.abs(signed, out=v) if x.dtype.is_signed else v.copy_(signed)
        torch.bitwise_right_shift(v, 1, out=t).bitwise_and_(mask[0x55])
        v.sub_(t)
        torch.bitwise_right_shift(v, 2, out=t).bitwise_and_(mask[0x33])
        v.bitwise_and_(mask[0x33]).add_(t)
        torch.bitwise_right_shift(v, 4, out=t)
        v.add_(t).bitwise_and_(mask[0x0F]).mul_(ones)
        torch.bitwise_right_shift(v, n - 8, out=t)
        return out.copy_(t)

    return swar


# The packing composites read the elements of one packed byte as one integer lane (packbits: 8
# bytes as an int64; 2-bit fields: 4 bytes as an int32; 4-bit: 2 as an int16) and work on whole
# lanes, the passes PyTorch vectorizes best. Lanes are read in memory order: a little-endian machine
# (x86-64, aarch64), whose first byte is a lane's lowest.
PACK_LANES = {1: torch.int64, 2: torch.int32, 4: torch.int16}


def _signed(value: int, dtype: torch.dtype) -> int:
    bits_of_lane = dtype.itemsize * 8
    value &= (1 << bits_of_lane) - 1
    return value - (1 << bits_of_lane) if value >> (bits_of_lane - 1) else value


def pack_multiplier(bits_per_field: int) -> int:
    """The constant that gathers a lane's fields into its top byte: field k (0 first) sits at bit 8k,
    and its term moves it to bit 8 (p - 1) + (p - 1 - k) bits, its place in the packed byte (big
    bit order). Terms shift fields into other bytes or off the top, and no carry reaches the top
    byte: check_equivalents() tries every combination of fields. packbits: 0x8040201008040201."""
    per_byte = 8 // bits_per_field
    terms = (8 * (per_byte - 1) + (per_byte - 1 - k) * bits_per_field - 8 * k for k in range(per_byte))
    return _signed(sum(1 << shift for shift in terms), PACK_LANES[bits_per_field])


def torch_pack(x: torch.Tensor, bits_per_field: int, nonzero: bool, out: torch.Tensor):
    """A function that computes torchops.packbits(x) (nonzero: each non-zero element a 1) or
    torchops.pack(x, bits) (the low bits of each element) of a uint8 or bool x whose last dim is a
    multiple of 8 // bits, into the contiguous uint8 `out`, from PyTorch builtins only. Scratch
    tensors are allocated here, once, as in torch_logical_right_shift.

    The fastest variant we measured: each element to its field (packbits of bools: nothing;
    of bytes: clamp_max(x, 1); pack: an and with the field mask of every byte), one multiply of
    each lane by pack_multiplier(), then a copy of every lane's top byte into out. Slower ones, at
    1M elements on one thread, against this one's time: reshape to (-1, 8), multiply by the bit
    weights and sum(dtype=uint8), 10-16x; torch.ne(x, 0) instead of clamp_max, 2.6x; the multiply
    then a shift by 56 and a narrowing copy, as fast at 1M, 3x at 16M; ands, shifts and ors of
    the strided views x[k::per_byte] for 2- and 4-bit fields, 3-6x; 4-bit fields in int64 lanes
    (four bytes' worth per multiply), 1.6x.
    """
    lane = PACK_LANES[bits_per_field]
    per_byte = 8 // bits_per_field
    flat = x.reshape(-1).view(torch.uint8)
    lanes = flat.view(lane)
    products = torch.empty_like(lanes)
    top_bytes = products.view(torch.uint8)[per_byte - 1::per_byte]
    flat_out = out.view(-1)
    multiplier = pack_multiplier(bits_per_field)
    if not nonzero:
        mask = _signed(int.from_bytes(bytes([(1 << bits_per_field) - 1] * per_byte), "little"), lane)

        def and_multiply_copy():
            torch.bitwise_and(lanes, mask, out=products).mul_(multiplier)
            return flat_out.copy_(top_bytes)

        return and_multiply_copy
    if x.dtype == torch.bool:  # already 0 or 1 in every byte
        def multiply_copy():
            torch.mul(lanes, multiplier, out=products)
            return flat_out.copy_(top_bytes)

        return multiply_copy
    ones = torch.empty_like(flat)
    ones_lanes = ones.view(lane)

    def clamp_multiply_copy():
        torch.clamp_max(flat, 1, out=ones)
        torch.mul(ones_lanes, multiplier, out=products)
        return flat_out.copy_(top_bytes)

    return clamp_multiply_copy


def unpacked_fields(bits_per_field: int, packed: np.ndarray) -> np.ndarray:
    """NumPy's model of torchops.unpack (big bit order): each byte's fields, first field first."""
    per_byte = 8 // bits_per_field
    shifts = np.array([(per_byte - 1 - k) * bits_per_field for k in range(per_byte)], dtype=np.uint8)
    fields = (packed[..., None] >> shifts) & ((1 << bits_per_field) - 1)
    return fields.reshape(*packed.shape[:-1], -1).astype(np.uint8)


def torch_unpack(x: torch.Tensor, bits_per_field: int, out: torch.Tensor):
    """A function that computes torchops.unpackbits(x) or torchops.unpack(x, bits) of a uint8 x
    into the contiguous `out` (uint8, or bool for a mask) from PyTorch builtins only, one lane of
    out (its bytes the fields of one byte of x) per byte of x. Scratch allocated once, as in
    torch_logical_right_shift.

    The fastest variants we measured: for 1- and 2-bit fields, a gather from a table of the 256
    bytes' lanes (the index widened to int32, which index_select takes); for 4-bit fields, the
    byte widened to its int16 lane, multiplied by 0x1001 (a copy of the low field 12 bits up),
    shifted right by 4 and masked with 0x0F0F. Slower ones, at 1M elements on one thread:
    (x.unsqueeze(-1) >> shifts) & mask, 5-20x the gather's time; bitwise_and with the bit weights
    then ne(0), 15x (both broadcast over a last dim of 8 or fewer, which TensorIterator runs as
    short inner loops); the multiply for 1- and 2-bit fields (0x8040201008040201 on an int64,
    0x40100401 on an int32), 1.3-1.5x; the gather for 4-bit fields (of int16 lanes), 4x.
    """
    lane = PACK_LANES[bits_per_field]
    flat_x = x.reshape(-1)
    out_lanes = out.view(torch.uint8).view(lane).view(-1)
    if bits_per_field == 4:
        wide = torch.empty(flat_x.shape, dtype=lane)

        def multiply_shift_mask():
            wide.copy_(flat_x)
            torch.mul(wide, 0x1001, out=out_lanes)
            return out_lanes.bitwise_right_shift_(4).bitwise_and_(0x0F0F)

        return multiply_shift_mask
    table = torch.from_numpy(unpacked_fields(bits_per_field, np.arange(256, dtype=np.uint8)[:, None]))
    table = table.contiguous().view(lane).reshape(256)
    index = torch.empty(flat_x.shape, dtype=torch.int32)

    def gather():
        index.copy_(flat_x)
        return torch.index_select(table, 0, index, out=out_lanes)

    return gather


def check_equivalents() -> None:
    """The PyTorch equivalents must be right for every input, not only the timed ones: the logical
    right shift for every count, the bit count for every 8- and 16-bit value and the edges of
    the wider dtypes."""
    for dtype in BITWISE_COUNT_DTYPES + [torch.uint16, torch.uint64]:
        info = torch.iinfo(dtype)
        if dtype.itemsize <= 2:
            x = torch.arange(info.min, info.max + 1, dtype=torch.int64).to(dtype)
        else:
            edges = [e for e in (info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max) if info.min <= e <= info.max]
            as_int64 = [e - (1 << 64) if e >= 1 << 63 else e for e in edges]  # the same low bits
            x = torch.cat([torch.tensor(as_int64, dtype=torch.int64).to(dtype), random_values(dtype, (4096,))])
        got = torch.empty(x.shape, dtype=torch.uint8)
        torch_bitwise_count(x, got)()
        if not torch.equal(torchops.bitwise_count(x), got):
            sys.exit(f"bench.py: the PyTorch equivalent of the bit count is wrong for {dtype}: fix the benchmark")
    # The packing composites, on every combination of a packed byte's fields (with random high bits
    # or non-zero values around them): unpacked_fields() gives byte b's fields, which pack to b. For
    # 1-bit fields it is NumPy's unpackbits, which ties the 2- and 4-bit model to NumPy's bit order.
    generator = torch.Generator().manual_seed(0)
    every_byte = np.arange(256, dtype=np.uint8)
    if not np.array_equal(unpacked_fields(1, every_byte[:, None]), np.unpackbits(every_byte[:, None], axis=1)):
        sys.exit("bench.py: unpacked_fields() is not NumPy's unpackbits: fix the benchmark")
    for bits_per_field in PACK_LANES:
        fields = torch.from_numpy(unpacked_fields(bits_per_field, every_byte[:, None]))  # (256, fields per byte)
        if bits_per_field == 1:  # non-zero is a 1: any non-zero value, and bools
            inputs = [fields * torch.randint(1, 256, fields.shape, dtype=torch.uint8, generator=generator),
                      fields.bool()]
        else:  # a field is the low bits of its element: any high bits
            high_bits = torch.randint(0, 256, fields.shape, dtype=torch.uint8, generator=generator)
            inputs = [fields | (high_bits & ((0xFF << bits_per_field) & 0xFF))]
        for x in inputs:
            got = torch.empty(256, dtype=torch.uint8)
            torch_pack(x.reshape(-1), bits_per_field, bits_per_field == 1, got)()
            if not np.array_equal(got.numpy(), every_byte):
                sys.exit(f"bench.py: the PyTorch composite of packing {bits_per_field}-bit fields of {x.dtype} is "
                         "wrong: fix the benchmark")
        for dtype in (torch.uint8, torch.bool) if bits_per_field == 1 else (torch.uint8,):
            got = torch.empty(fields.numel(), dtype=dtype)
            torch_unpack(torch.from_numpy(every_byte), bits_per_field, got)()
            if not torch.equal(got.view(torch.uint8), fields.reshape(-1)):
                sys.exit(f"bench.py: the PyTorch composite of unpacking {bits_per_field}-bit fields is wrong: "
                         "fix the benchmark")
    for dtype in [torch.int8, torch.int16, torch.int32, torch.int64]:
        n = bits(dtype)
        info = torch.iinfo(dtype)
        x = random_values(dtype, (64, 64))
        counts = list(range(-n - 2, n + 3)) + [info.min, info.max]
        y = torch.tensor(counts, dtype=dtype).repeat(64 * 64 // len(counts) + 1)[: 64 * 64].reshape(64, 64)
        for count in [y, y[:, :1], *counts, 1 << 70]:
            expected = torchops.bitshift(x, count, "RIGHT", False)
            got = torch.empty_like(x)
            torch_logical_right_shift(x, count, got)()
            if not torch.equal(expected, got):
                sys.exit(f"bench.py: the PyTorch equivalent of the logical right shift is wrong for {dtype}, "
                         f"count {count if isinstance(count, int) else 'tensor'}: fix the benchmark")


def packing_call(op: str, x: torch.Tensor):
    """torchops's call of a packing op on x (dim=-1, big bit order), taking out= if given."""
    if op in ("packbits", "unpackbits"):
        return functools.partial(getattr(torchops, op), x)
    return functools.partial(torchops.unpack if op in UNPACKING_OPS else torchops.pack, x, PACKING_BITS[op])


def make_packing_contenders(case: Case, x: torch.Tensor) -> dict:
    """make_contenders() of a packing case. The functional call and NumPy's (which has no out=)
    return their result, so their output is None."""
    bits_per_field = PACKING_BITS[case.op]
    unpacking = case.op in UNPACKING_OPS
    call = packing_call(case.op, x)
    result = call()
    # unpackbits of a mask: the uint8 result seen as bool, which costs a view (NumPy's too)
    as_bool = unpacking and case.dtype == torch.bool
    out = torch.empty(result.shape, dtype=torch.bool if as_bool else torch.uint8)
    out_bytes = out.view(torch.uint8)
    contenders = {
        "torchops": ("torchops", lambda: call(out=out_bytes), out),
        "functional": ("torchops", (lambda: call().view(torch.bool)) if as_bool else call, None),
    }
    composite_out = torch.empty_like(out)
    composite = (torch_unpack(x, bits_per_field, composite_out) if unpacking else
                 torch_pack(x, bits_per_field, case.op == "packbits", composite_out))
    contenders["torch"] = ("composite", composite, composite_out)
    if bits_per_field == 1:
        x_np = x.numpy()
        if unpacking:
            numpy_call = (lambda: np.unpackbits(x_np, axis=-1).view(bool)) if as_bool else \
                (lambda: np.unpackbits(x_np, axis=-1))
        else:
            numpy_call = lambda: np.packbits(x_np, axis=-1)  # noqa: E731
        contenders["numpy"] = ("numpy", numpy_call, None)
    # The same bytes moved: the elements of one packed byte seen as one int of their width, and
    # the packed bytes as int8.
    elements_of_a_byte = SIGNED_OF_WIDTH[8 // bits_per_field]
    reference_out = torch.empty_like(out)
    if unpacking:  # widening: each packed byte to its elements' bytes
        destination, source = reference_out.view(torch.uint8).view(elements_of_a_byte), x.view(torch.int8)
    else:  # narrowing: a packed byte's elements' bytes to one byte
        destination, source = reference_out.view(torch.int8), x.view(torch.uint8).view(elements_of_a_byte)
    contenders["bandwidth"] = ("reference", lambda: destination.copy_(source), reference_out)
    return contenders


def make_contenders(case: Case, x: torch.Tensor, y):
    """name -> (kind, function, output); every function writes its answer into its own output,
    or (output None) returns it."""
    if case.op in PACKING_OPS:
        return make_packing_contenders(case, x)
    # Every output has the layout the functional call gives (PyTorch's rule for pointwise
    # ops: it follows the inputs' memory order), so that out= changes nothing but the allocation.
    layout = getattr(torchops, case.op)(x) if case.op in UNARY_OPS else torchops.bitshift(x, y, "LEFT")
    contenders = {}

    def output():
        return torch.empty_strided(layout.size(), layout.stride(), dtype=layout.dtype)

    def add(name, kind, make_function):
        out = output()
        contenders[name] = (kind, make_function(out), out)

    as_signed = SIGNED_OF_WIDTH[case.dtype.itemsize]
    xs = x.view(as_signed)
    x_np = x.numpy() if case.dtype != torch.bfloat16 else None

    if case.op == "signbit":
        add("torchops", "torchops", lambda o: lambda: torchops.signbit(x, out=o))
        if case.size <= K:
            add("torchops.op", "torchops", lambda o: lambda: torch.ops.torchops.signbit.out(x, out=o))
        add("torch", "builtin", lambda o: lambda: torch.signbit(x, out=o))
        if x_np is not None:
            add("numpy", "numpy", lambda o: (lambda o_np: lambda: np.signbit(x_np, out=o_np))(o.numpy()))
        # Not torch.ne(x, 0, out=bool): PyTorch's comparisons run ~10x below memory speed (measured).
        add("bandwidth", "reference", lambda o: (lambda o_bytes: lambda: o_bytes.copy_(xs))(o.view(torch.uint8)))
        return contenders

    if case.op == "bitwise_count":
        add("torchops", "torchops", lambda o: lambda: torchops.bitwise_count(x, out=o))
        if case.size <= K:
            add("torchops.op", "torchops", lambda o: lambda: torch.ops.torchops.bitwise_count.out(x, out=o))
        add("torch", "composite", lambda o: torch_bitwise_count(x, o))
        add("numpy", "numpy", lambda o: (lambda o_np: lambda: np.bitwise_count(x_np, out=o_np))(o.numpy()))
        add("bandwidth", "reference", lambda o: (lambda o_bytes: lambda: o_bytes.copy_(xs))(o.view(torch.uint8)))
        return contenders

    direction = "LEFT" if case.op == "left" else "RIGHT"
    arithmetic = case.op != "right_logical"
    scalar = isinstance(y, int)
    ys = y if scalar else y.view(as_signed)
    y_np = y if scalar else y.numpy()
    overload = torch.ops.torchops.bitshift.Scalar_out if scalar else torch.ops.torchops.bitshift.out

    add("torchops", "torchops", lambda o: lambda: torchops.bitshift(x, y, direction, arithmetic, out=o))
    if case.size <= K:
        add("torchops.op", "torchops", lambda o: lambda: overload(x, y, direction, arithmetic, out=o))

    signed = case.dtype.is_signed
    if case.dtype not in NO_TORCH_SHIFT:
        if case.op == "left":
            add("torch", "builtin", lambda o: lambda: torch.bitwise_left_shift(x, y, out=o))
        elif case.op == "right" or not signed:  # on unsigned dtypes PyTorch's >> is the logical shift
            add("torch", "builtin", lambda o: lambda: torch.bitwise_right_shift(x, y, out=o))
        else:
            add("torch", "composite", lambda o: torch_logical_right_shift(x, y, o))

    if case.op == "left":
        add("numpy", "numpy", lambda o: (lambda o_np: lambda: np.left_shift(x_np, y_np, out=o_np))(o.numpy()))
    elif case.op == "right" or not signed:
        add("numpy", "numpy", lambda o: (lambda o_np: lambda: np.right_shift(x_np, y_np, out=o_np))(o.numpy()))
    else:  # NumPy's logical right shift of a signed array: view it as unsigned
        unsigned = np.dtype(f"u{case.dtype.itemsize}")
        xu, yu = x_np.view(unsigned), (y_np if scalar else y_np.view(unsigned))
        add("numpy", "numpy",
            lambda o: (lambda o_np: lambda: np.right_shift(xu, yu, out=o_np))(o.numpy().view(unsigned)))

    add("bandwidth", "reference", lambda o: (lambda os_: lambda: torch.add(xs, ys, out=os_))(o.view(as_signed)))
    return contenders


def bytes_moved(case: Case, x: torch.Tensor, y) -> int:
    """Bytes of the elements read and written (each element once, whatever the strides)."""
    total = x.numel() * x.element_size()
    if case.op in PACKING_OPS:
        per_byte = 8 // PACKING_BITS[case.op]
        return total + (x.numel() * per_byte if case.op in UNPACKING_OPS else x.numel() // per_byte)
    if case.op in UNARY_OPS:
        return total + x.numel()  # + one bool or uint8 per element
    if isinstance(y, torch.Tensor):
        total += y.numel() * y.element_size()
    return total + x.numel() * x.element_size()


def verify(contenders) -> list[str]:
    """Run every contender once; the names of the peers whose output differs from torchops's."""
    for name, (_, _, out) in contenders.items():
        # torchops's output starts out different from the peers', so one that writes nothing can't pass
        mine = name == "torchops"
        if out is not None:
            out.fill_(mine if out.dtype == torch.bool else (17 if mine else 42))
    outputs = {}
    for name, (_, function, out) in contenders.items():
        returned = function()
        # a contender without an output returns its result (a tensor, or NumPy's array)
        outputs[name] = out if out is not None else torch.as_tensor(returned)
    expected = outputs["torchops"]
    return [name for name, (kind, _, _) in contenders.items() if kind != "reference"
            and not (outputs[name].dtype == expected.dtype and torch.equal(outputs[name], expected))]


# ---------------------------------------------------------------------------------------------
# Running the cases.

def run_case(case: Case, seconds_per_contender: float) -> dict:
    x, y = make_operands(case)
    contenders = make_contenders(case, x, y)
    row = {
        "op": case.op, "dtype": str(case.dtype).removeprefix("torch."), "size": case.size,
        "operands": case.operands, "threads": case.threads, "level": case.level,
        # "builtin", or "composite": the fastest PyTorch equivalent (the label that results files
        # and targets.py hold)
        "torch_peer": contenders["torch"][0] if "torch" in contenders else "",
        "bytes": bytes_moved(case, x, y),
    }
    wrong = verify(contenders)
    row["verified"] = "ok" if not wrong else "MISMATCH: " + ", ".join(wrong)
    if wrong:
        return row  # never time a wrong answer
    functions = {name: function for name, (_, function, _) in contenders.items()}
    samples = calmest(lambda: measure(functions, seconds_per_contender))
    times = record_times(row, samples, "torchops")
    mine = times["torchops"]
    row["gbps"] = row["bytes"] / mine / 1e9

    def ratio(ratio_name, peer, me="torchops"):
        # > 1: torchops is faster; the interval of the ratio that the noise allows (targets.py)
        row[ratio_name] = times[peer] / times[me]
        row[ratio_name + "_interval"] = ratio_interval(samples[peer], samples[me])

    for name, ratio_name in [("torch", "x_torch"), ("numpy", "x_numpy"), ("bandwidth", "x_bandwidth")]:
        if name in times:
            ratio(ratio_name, name)
    if "numpy" in times and "functional" in times:
        # NumPy's packbits and unpackbits allocate their result: set against torchops's call that does
        ratio("x_numpy", "numpy", "functional")
    if "torch" in times and "torchops.op" in times:
        row["x_torch_op"] = times["torch"] / times["torchops.op"]  # without the Python layer
    return row


def run(cases: list[Case], seconds_per_contender: float, wait_budget: float, progress: bool) -> list[dict]:
    rows = []
    start = time.time()
    waited = 0.0
    for index, case in enumerate(cases):
        set_level(case.level)
        torch.set_num_threads(case.threads)
        busy = False
        parallel = case.threads > 1 and case.size >= PARALLEL_FROM
        if parallel:
            seconds, busy = wait_for_cores(min(MAX_WAIT_PER_CASE, max(0.0, wait_budget - waited)))
            waited += seconds
        row = run_case(case, seconds_per_contender)
        row["cores_busy"] = parallel and (busy or cores_busy())
        rows.append(row)
        if progress:
            print(f"[{index + 1}/{len(cases)} {time.time() - start:5.0f}s] {format_row(row)}", flush=True)
    if waited > 1:
        print(f"waited {waited:.0f} s in all for other processes to free a core", flush=True)
    return rows


# ---------------------------------------------------------------------------------------------
# Peak memory of a packing call.

# What a call's peak may exceed its output by and still hold no scratch of its input's size: page
# rounding, an allocator's headers, Python's objects (64M-element calls: outputs of 8-64 MiB).
MEMORY_SLACK = 256 * K
# glibc serves allocations of at least this size with mmap and gives them back to the kernel when
# freed (by default the threshold grows with what a process frees, and freed memory stays resident,
# where a later call would reuse it unseen).
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(128 * K)}
MEMORY_CASES = [("packbits", torch.bool), ("packbits", torch.uint8), ("unpackbits", torch.uint8),
                ("pack2", torch.uint8), ("pack4", torch.uint8), ("unpack2", torch.uint8), ("unpack4", torch.uint8)]


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024  # the kernel writes kB


def peak_growth(call) -> int:
    """Bytes by which the process's resident memory peaked above what it held before call(), the
    kernel's count of pages (VmHWM, reset to the current size through /proc/self/clear_refs)."""
    gc.collect()
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")
    before = _status_bytes("VmRSS")
    result = call()
    growth = _status_bytes("VmHWM") - before
    del result
    return growth


def memory_rows() -> list[dict]:
    """Run in a fresh process (measure_memory): each packing call of MEMORY_CASES at MEMORY_SIZE
    elements, functional (allocating its result): torchops, NumPy's and the composite, whose
    scratch is allocated by the call. Each is called once first, so the measured call finds the
    code loaded and the thread pool started."""
    rows = []
    for op, dtype in MEMORY_CASES:
        case = Case(op, dtype, MEMORY_SIZE, "contiguous", torch.get_num_threads(), level_in_use())
        x = packing_operand(case)
        bits_per_field = PACKING_BITS[op]
        unpacking = op in UNPACKING_OPS
        shape = (case.size,) if unpacking else (case.size // (8 // bits_per_field),)  # the result's, uint8
        output_bytes = shape[0]

        def composite():
            out = torch.empty(shape, dtype=torch.uint8)
            if unpacking:
                torch_unpack(x, bits_per_field, out)()
            else:
                torch_pack(x, bits_per_field, op == "packbits", out)()
            return out

        calls = {"torchops": packing_call(op, x), "composite": composite}
        if bits_per_field == 1:
            calls["numpy"] = functools.partial(np.unpackbits if unpacking else np.packbits, x.numpy())
        for name, call in calls.items():
            call()
            growth = peak_growth(call)
            rows.append({"op": op, "dtype": str(dtype).removeprefix("torch."), "size": case.size, "contender": name,
                         "threads": case.threads, "level": case.level, "input_bytes": x.numel() * x.element_size(),
                         "output_bytes": output_bytes, "growth_bytes": growth,
                         "x_memory": (output_bytes + MEMORY_SLACK) / max(growth, 1)})
    return rows


def measure_memory() -> list[dict]:
    """memory_rows() in a fresh process (this one's allocator holds what the timing freed)."""
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child"], capture_output=True,
                           text=True, env={**os.environ, **MALLOC_ENV})
    if child.returncode != 0:
        print(f"memory measurement failed (exit {child.returncode}):\n{child.stderr}", file=sys.stderr, flush=True)
        return []
    return json.loads(child.stdout)


def memory_table(rows: list[dict], markdown: bool) -> str:
    columns = ["op", "dtype", "size", "contender", "input MiB", "output MiB", "peak growth MiB", "growth / output"]
    body = [[r["op"], r["dtype"], size_label(r["size"]), r["contender"], f"{r['input_bytes'] / M:.1f}",
             f"{r['output_bytes'] / M:.1f}", f"{r['growth_bytes'] / M:.1f}",
             f"{r['growth_bytes'] / r['output_bytes']:.2f}"] for r in rows]
    return (markdown_rows if markdown else aligned_table)(columns, body, left=4)


def memory_name(row: dict) -> str:
    return f"{row['op']} {row['dtype']} {size_label(row['size'])} {row['contender']}"


# ---------------------------------------------------------------------------------------------
# Reporting.

COLUMNS = ["op", "dtype", "operands", "thr", "level", "size", "torchops µs", "IQR", "op µs", "fn µs", "torch µs",
           "numpy µs", "ref µs", "GB/s", "×torch", "×numpy", "×ref"]


def cells(row: dict) -> list[str]:
    def us(key):
        if key not in row:
            return "-"
        return f"{row[key]:.2f}" if row[key] < 100 else f"{row[key]:.0f}"

    def ratio(key):
        return f"{row[key]:.2f}" if key in row else "-"

    case = [row["op"], row["dtype"], row["operands"], str(row["threads"]), row["level"], size_label(row["size"])]
    if "torchops_us" not in row:
        return case + [row["verified"]] + [""] * (len(COLUMNS) - len(case) - 1)
    noise = f"{row['spread']:.0%}" + ("*" if row["cores_busy"] else "")
    composite = "c" if row["torch_peer"] == "composite" else ""
    return case + [us("torchops_us"), noise, us("torchops.op_us"), us("functional_us"), us("torch_us") + composite,
                   us("numpy_us"), us("bandwidth_us"), f"{row['gbps']:.1f}",
                   ratio("x_torch"), ratio("x_numpy"), ratio("x_bandwidth")]


def format_row(row: dict) -> str:
    return " ".join(cells(row))


def text_table(rows: list[dict]) -> str:
    return aligned_table(COLUMNS, [cells(row) for row in rows], left=6)


def markdown_table(rows: list[dict]) -> str:
    return markdown_rows(COLUMNS, [cells(row) for row in rows], left=6)


def case_name(row: dict) -> str:
    return (f"{row['op']} {row['dtype']} {row['operands']} {size_label(row['size'])} "
            f"thr={row['threads']} {row['level']}")


def baseline_text(rows: list[dict], baseline_path: str) -> str:
    """Each case against the same case of an earlier run (its results.json): torchops's
    speed-up over PyTorch (where PyTorch has no op, over NumPy; for neither, over the
    bandwidth reference) now, divided by the same speed-up then. Both speed-ups are ratios
    measured within one process, so the machine's load on either day cancels out; < 1
    means torchops lost ground."""
    with open(baseline_path) as handle:
        old = json.load(handle)

    def key(row):
        return row["op"], row["dtype"], row["size"], row["operands"], row["threads"], row["level"]

    then = {key(r): r for r in old["rows"] if "torchops_us" in r and not r["cores_busy"]}
    compared = []
    for row in rows:
        before = then.get(key(row))
        if before is None or "torchops_us" not in row or row["cores_busy"]:
            continue
        peer = next(p for p in ("x_torch", "x_numpy", "x_bandwidth") if p in row and p in before)
        compared.append((row[peer] / before[peer], peer, row))
    if not compared:
        return f"BASELINE ({baseline_path}): no case in common"
    compared.sort(key=lambda item: item[0])
    slower = [item for item in compared if item[0] < NOISE]
    ratios = [ratio for ratio, _, _ in compared]
    lines = [f"BASELINE: {len(compared)} cases set against the same cases of {baseline_path} "
             f"(torchops source {old['machine'].get('torchops source', '?')}); speed-up now / speed-up then: "
             f"median {statistics.median(ratios):.2f}, lowest {ratios[0]:.2f}, highest {ratios[-1]:.2f}; "
             f"{len(slower)} below {NOISE} (the noise of one run)"]
    for ratio, peer, row in slower[:12]:
        lines.append(f"  {ratio:.2f}  {case_name(row)}  ({peer} now {row[peer]:.2f}, then "
                     f"{then[key(row)][peer]:.2f})")
    return "\n".join(lines)


def targets_text(rows: list[dict], levels: list[str], memory: list[dict] = ()) -> str:
    lines = ["TARGETS (benchmarks/targets.py; ratios of median times, > 1 means torchops is faster)"]
    for level in levels:
        level_rows = [r for r in rows if r["level"] == level]
        if not level_rows:
            continue
        calm = [r for r in level_rows if not r["cores_busy"]]
        left_out = len(level_rows) - len(calm)
        lines.append(f"level {level} ({len(level_rows)} cases"
                     + (f"; {left_out} left out, measured while another process held a core)" if left_out else ")")
                     + ":")
        timed = [r for r in calm if "torchops_us" in r]
        lines.append(targets.text(targets.evaluate("bench", timed, case_name)))
    if memory:
        lines.append(f"peak memory of a packing call ({len(memory)} calls, level {memory[0]['level']}):")
        lines.append(targets.text(targets.evaluate("memory", memory, memory_name)))
    return "\n".join(lines)


def plot(rows: list[dict], level: str, threads: int, path: str) -> str:
    """Speed-up over PyTorch against size, one panel per op, one line per dtype (the main sweep)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError as error:
        return f"plot skipped: matplotlib is not installed ({error}); pip install -r benchmarks/requirements.txt"
    panels = [("left", "left shift"), ("right", "arithmetic right shift"),
              ("right_logical", "logical right shift (vs PyTorch equivalent)"), ("signbit", "signbit"),
              ("bitwise_count", "bitwise_count (vs PyTorch equivalent)")]
    figure, axes = plt.subplots(2, 3, figsize=(18, 8), sharex=True)
    for axis, (op, title) in zip(axes.flat, panels):
        main = [r for r in rows if r["op"] == op and r["operands"] in ("tensor", "contiguous") and "x_torch" in r
                and r["threads"] == threads and r["level"] == level
                and (op != "right_logical" or r["torch_peer"] == "composite")]
        for dtype in dict.fromkeys(r["dtype"] for r in main):
            points = sorted((r["size"], r["x_torch"]) for r in main if r["dtype"] == dtype)
            axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=dtype)
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.axhline(3.0 if op in ("right_logical", "bitwise_count") else 2.0, color="gray", linestyle="--",
                     linewidth=0.8)
        axis.set_xscale("log", base=2)
        axis.set_yscale("log", base=2)
        axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: size_label(int(value))))
        axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.3g}×"))
        largest = max((r["size"] for r in main), default=1)
        axis.set_xticks([size for size in [1, 64, K, 16 * K, 256 * K, 4 * M, 64 * M] if size <= largest])
        axis.set_title(title)
        axis.set_ylabel("speed-up over PyTorch (×)")
        axis.grid(True, which="both", alpha=0.3)
        if main:
            axis.legend(fontsize=8)
    for axis in axes[1]:
        axis.set_xlabel("elements")
    figure.suptitle(f"torchops vs PyTorch (level {level}, {threads} threads, "
                    "tensor count, contiguous; dashed: the kernel target)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return f"plot written to {path}"


def write_results(rows, info, summary, out_dir, mode, wall_seconds, memory=()):
    os.makedirs(out_dir, exist_ok=True)
    write_csv(os.path.join(out_dir, "results.csv"), rows, row_keys(rows))
    write_json(os.path.join(out_dir, "results.json"), info, mode, wall_seconds, rows, memory=list(memory))
    memory_text = "" if not memory else f"""
## Peak memory of a packing call

Each call once, functional (its result allocated), on {size_label(MEMORY_SIZE)} elements, in a fresh
process (`bench.py --memory-child`, with `{' '.join(f'{k}={v}' for k, v in MALLOC_ENV.items())}` so that freed
memory goes back to the kernel); growth: the kernel's peak resident size during the call
(`VmHWM`, reset first through `/proc/self/clear_refs`) less the resident size before it. The
composite's growth counts its scratch, which the timed runs allocate once per case.

{memory_table(memory, markdown=True)}
"""
    machine = machine_markdown(info)
    operands_text = "; ".join(f"`{name}` = {description}" for name, description in OPERANDS.items())
    with open(os.path.join(out_dir, "results.md"), "w") as handle:
        handle.write(f"""# torchops benchmark results ({mode} run)

Produced by `benchmarks/bench.py{'' if mode == 'full' else ' --' + mode}` in {wall_seconds:.0f} s.

## Machine

{machine}

## How to read the table

- Times are medians (µs per call) over at least {MIN_REPS} repetitions; a repetition runs every
  contender once, in a fresh random order (a rotation would give each contender the same
  predecessor every time, and from 1M elements a call's speed depends on it); a sample
  batches calls up to ~{SAMPLE_SECONDS * 1e3:.0f} ms. Inputs stay in cache when they fit (repeated calls on the same data).
- `torchops`: `torchops.bitshift(..., out=)` / `torchops.signbit(..., out=)` /
  `torchops.bitwise_count(..., out=)` / `torchops.packbits(x, out=)` / `unpackbits(x, out=)` /
  `pack(x, bits, out=)` / `unpack(x, bits, out=)` (ops `pack2`, `pack4`, `unpack2`, `unpack4`: 2- and
  4-bit fields; all along dim=-1, big bit order). `torch`: `torch.bitwise_left_shift` / `bitwise_right_shift` /
  `signbit` with `out=`; a `c` after the time marks the fastest PyTorch equivalent for a logical
  right shift of a signed dtype (int8: a uint8 shift of the same bytes; int16/int32: widen, mask,
  shift, narrow; int64: shift, mask, zero the out-of-range counts; its scratch tensors are allocated
  once per case, like the outputs; it is checked against torchops for every count, out-of-range ones
  included, before the run); `-` where PyTorch has no op (uint16/32/64 shifts). For bitwise_count,
  which PyTorch lacks, the fastest PyTorch equivalent (`c`): a gather from a table of every value's
  count for 8- and 16-bit x, |x| and the SWAR count for 32- and 64-bit x (checked against torchops
  on every 8- and 16-bit value first). For the packing ops, which PyTorch lacks too, the fastest
  composites (`c`) we know: packing reads a packed byte's elements as one integer lane (8 bytes as
  int64 for bits, 4 as int32 for 2-bit fields, 2 as int16 for 4-bit ones), makes each a field
  (`clamp_max(x, 1)` for bytes, nothing for bools, an and with the field mask), multiplies the lane by
  a constant that gathers the fields into its top byte (0x8040201008040201 for bits) and copies the
  top bytes out; unpacking gathers each byte's lane from a table of the 256 bytes' (`index_select`);
  both checked on every combination of a byte's fields first. `dtype` of an unpacking row: the result's
  (bool: the uint8 result viewed as bool, for torchops and NumPy alike).
  `numpy`: `np.left_shift` / `np.right_shift` (on an unsigned view for a logical shift) /
  `np.signbit` / `np.bitwise_count` with `out=`, single-threaded; NumPy's signbit casts integers to float64.
  `np.packbits` / `np.unpackbits` (axis=-1) have no `out=`: they allocate their result, so `×numpy`
  of a packing row is set against torchops's functional call (`fn µs`), which does too.
  `ref`: a PyTorch op that moves the same bytes: `torch.add` with the same operands (viewed as
  the signed dtype of the same width) for a shift; for signbit and bitwise_count a narrowing copy,
  `out.view(torch.uint8).copy_(x viewed as the signed int of its width)`: it reads n·itemsize bytes
  and writes n bytes, as signbit does (`torch.ne(x, 0, out=bool)` moves the same bytes but runs
  ~10x below memory speed in this PyTorch, so it would flatter torchops). For packing, the
  narrowing copy of x viewed as the int of a packed byte's elements into the packed bytes (packbits
  of n bools: n bytes read, n / 8 written), for unpacking the widening copy the other way.
- `IQR`: interquartile range of torchops's samples / their median, a measure of the noise in that row;
  `*`: a multi-threaded case measured while another process held a core (every library's parallel
  calls then wait a scheduler slice); such rows are left out of the TARGETS
  (a case where any contender's exceeds {MAX_SPREAD:.0%} is measured again, up to {RETRIES} times, keeping the calmest).
- `op µs` (sizes <= 1K): the registered overload (`torch.ops.torchops.bitshift.out` / `.Scalar_out` /
  `signbit.out` / `bitwise_count.out`) called directly, without the Python layer of `torchops.bitshift`.
- `fn µs` (packing): torchops's functional call, which allocates its result.
- `GB/s`: bytes of the elements read and written by torchops (x, a tensor count, the output) per second.
- `×torch`, `×numpy`: peer time / torchops time (> 1: torchops faster). `×ref`: reference time /
  torchops time, the fraction of the reference's bandwidth torchops reaches.
- operands: {operands_text}.
  `thr`: torch.set_num_threads. Counts are random in [0, bit width) so every library defines the result;
  each case checks once that every peer's output equals torchops's before timing.

## Targets

```
{summary}
```

## Results

{markdown_table(rows)}
{memory_text}""")


def report_again(out_dir: str, baseline: str | None) -> None:
    with open(os.path.join(out_dir, "results.json")) as handle:
        saved = json.load(handle)
    rows, info, memory = saved["rows"], saved["machine"], saved.get("memory", [])
    level = info["torchops level"]
    levels = info["levels measured"].split(", ")
    summary = targets_text(rows, [level] + [name for name in levels if name != level], memory)
    if baseline:
        summary += "\n\n" + baseline_text(rows, baseline)
    print(summary)
    write_results(rows, info, summary, out_dir, saved["mode"], saved["wall_seconds"], memory)
    if saved["mode"] != "packing":
        print("\n" + plot(rows, level, info["torch threads"], os.path.join(out_dir, "speedup.png")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--quick", action="store_true", help="a handful of sizes and dtypes, well under a minute")
    scope.add_argument("--layouts", action="store_true",
                       help="only the full run's layout rows, at every level (about 12 minutes on 2 cores)")
    scope.add_argument("--packing", action="store_true",
                       help="only the full run's packing rows (packbits, unpackbits, 2- and 4-bit fields) and the "
                            "peak memory of a packing call (a few minutes)")
    scope.add_argument("--op", choices=["left", "right", "right_logical", "signbit", "bitwise_count", *PACKING_OPS],
                       help="only the full run's rows of one op (a new op's figures without the whole run)")
    scope.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)  # measure_memory()'s process
    parser.add_argument("--out-dir", help="default: benchmarks/results (--quick: benchmarks/results/quick, "
                                          "so a demo run does not overwrite the full results; --layouts: "
                                          "benchmarks/results/layouts; --packing: benchmarks/results/packing; "
                                          "--op OP: benchmarks/results/OP)")
    parser.add_argument("--baseline", help="an earlier run's results.json: every case in both is compared")
    parser.add_argument("--device", choices=["cuda", "xpu"],
                        help="measure on that GPU instead (device.py): against PyTorch's builtins there")
    parser.add_argument("--report-only", action="store_true",
                        help="measure nothing: rewrite results.md and the plot from --out-dir's results.json "
                             "(after a change to the targets)")
    args = parser.parse_args()
    if args.memory_child:
        print(json.dumps(memory_rows()))
        return
    mode = "quick" if args.quick else "layouts" if args.layouts else "packing" if args.packing else "full"
    if args.out_dir is None:
        results = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
        args.out_dir = os.path.join(results, args.op) if args.op else results if mode == "full" else \
            os.path.join(results, mode)
    if args.report_only:
        report_again(args.out_dir, args.baseline)
        return
    if args.device:
        import device

        sys.exit(device.run(args.device, args.quick))

    start = time.time()
    load_at_start = os.getloadavg()[0]
    torch.manual_seed(0)
    all_threads = torch.get_num_threads()
    level = level_in_use()
    levels = [level] if args.quick else supported_levels()
    other_levels = [name for name in levels if name != level]
    cases = list_cases(mode, level, other_levels, all_threads)
    if args.op:
        cases = [case for case in cases if case.op == args.op]
    check_equivalents()
    if load_at_start > 0.5:
        print(f"warning: load average {load_at_start:.2f} on {os.cpu_count()} cores: other processes are running; "
              "multi-threaded times suffer most (a parallel call waits for its busiest thread)", flush=True)
    print(f"torchops benchmark ({mode}): {len(cases)} cases, level {level}"
          f"{' (others: ' + ', '.join(other_levels) + ')' if other_levels else ''}, {all_threads} threads",
          flush=True)

    try:
        rows = run(cases, seconds_per_contender=0.02 if args.quick else 0.05,
                   wait_budget=5.0 if args.quick else 180.0, progress=not args.quick)
    finally:
        if level != level_in_use():
            set_level(level)
        torch.set_num_threads(all_threads)

    memory = []
    if mode != "quick" and any(case.op in PACKING_OPS for case in cases):
        print(f"peak memory of packing calls ({size_label(MEMORY_SIZE)} elements, a fresh process)", flush=True)
        memory = measure_memory()
        print(memory_table(memory, markdown=False), flush=True)
    wall = time.time() - start
    info = machine_info(levels, level, all_threads)
    info["torchops source"] = source_version()
    # Other processes on the machine slow the multi-threaded calls most (a thread waits for a core).
    info["load average (1 min) at start / end"] = f"{load_at_start:.2f} / {os.getloadavg()[0]:.2f}"
    summary = targets_text(rows, [level] + other_levels, memory)
    if args.baseline:
        summary += "\n\n" + baseline_text(rows, args.baseline)
    print()
    print(text_table(rows))
    print("IQR: noise of torchops's samples; *: measured while another process held a core (left out of TARGETS); "
          "c: the fastest PyTorch equivalent")
    print("\n" + "\n".join(f"{key}: {value}" for key, value in info.items()))
    print("\n" + summary)
    write_results(rows, info, summary, args.out_dir, f"op {args.op}" if args.op else mode, wall, memory)
    if mode != "packing":  # the plot's panels are the shifts', signbit's and bitwise_count's
        print("\n" + plot(rows, level, all_threads, os.path.join(args.out_dir, "speedup.png")))
    print(f"results written to {args.out_dir}/results.md, results.csv, results.json ({wall:.0f} s)")
    exit_if_mismatched(rows, case_name)


if __name__ == "__main__":
    main()
