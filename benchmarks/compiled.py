"""Side-by-side benchmark of torch.compile'd chains that use torchops's shifts, signbit and packing ops.

    .venv/bin/python benchmarks/compiled.py [--quick] [--cases NAME ...] [--out-dir DIR]
    (DIR: benchmarks/results/compiled, or .../compiled/quick)

Each case is a small function written three times: with torchops's typed API, with the
same ops called as ``torch.ops.torchops.*`` (the registered overloads, nothing in between),
and with the PyTorch builtins a user would write for exactly the same result:

  unpack4      packed signed 4-bit values (uint8 bytes, two per byte) to float32:
               sign-extend each nibble with shifts, minus a zero point, times a scale, interleaved
  hash64       splitmix64's finalizer on int64 keys (three xor-shifts by LOGICAL right shifts,
               two wrapping multiplies), then a bucket id (& (2**20 - 1)); the builtin logical
               shift is the arithmetic shift plus a mask
  sign_select  torch.where(signbit(x), a * x, b * x) on float32 (leaky-relu-like)
  fmix32       murmur3's 32-bit finalizer on uint32 values (h ^= h >> 16; h *= 0x85ebca6b;
               h ^= h >> 13; h *= 0xc2b2ae35; h ^= h >> 16): torchops's shifts, torch's uint32
               xor and multiply (which wraps, on CPU); the builtin version widens to int64 and
               masks each product (PyTorch has no uint32 shifts)
  xorshift64   one step of Marsaglia's xorshift64 on uint64 values (x ^= x << 13; x ^= x >> 7;
               x ^= x << 17); the builtin version views the values as int64 and masks the
               arithmetic right shift (PyTorch has no uint64 shifts)
  dequant4     an int4 dequantize: unpack(p, 4, signed=True).to(float32) * scale on `size` bytes
               (2 * size outputs); the builtin version sign-extends the nibbles with two shifts
               ((p << 4).to(int8) >> 4, p.to(int8) >> 4) and interleaves them, converted and
               scaled, with torch.stack((high, low), -1): one kernel, as the unpack is
  packbits_gt  packbits(x > 0) of `size` float32 values; the builtin version packs each 8 bools
               with shifts and a sum. `extern compiled` is x > 0 compiled and packbits' C++
               kernel called on the bools it wrote

and runs as six contenders, in one process, alternating inside each repetition (seven for the
cases that NumPy computes too):

  torchops compiled  torch.compile(torchops version, fullgraph=True, dynamic=False), with
                     torchops's Inductor lowerings registered (the ops are generated inline)
  torch.ops compiled torch.compile(torch.ops version), the same way: the same generated code,
                     so what differs from torchops compiled is what Dynamo guards around it
  builtin compiled   torch.compile(builtin version), the same way
  torchops eager     the torchops version, uncompiled
  extern compiled    the torchops version compiled without fusing (TORCHOPS_INDUCTOR_LOWERINGS=0's
                     lowerings): the graph calls the C++ kernels as opaque ops
  builtin again      the builtin version compiled a second time (a copy of its code): the same
                     code as `builtin compiled`, so their ratio (A/A) is the noise of the row
  numpy              the case in NumPy on the same values (NUMPY_CASES: the unsigned chains,
                     whose shifts NumPy has), converted to NumPy arrays outside the timing

Every function returns a fresh output (functional style, as a compiled model would). Before
timing, each case checks once that every contender's output equals eager torchops's bit for
bit. Each graph is compiled for static shapes, once per size and per thread count (Inductor's
C++ code is specialized on torch.get_num_threads()), by its first call, outside the timed
region. Once per case the generated code is inspected (torch._inductor.utils.run_and_get_code):
"fused" if it no longer calls torch.ops.torchops. Timing is timing.py's, as bench.py's (a fresh
random order each repetition: see timing.measure).
Results: a table on stdout, results.md, results.csv and results.json in --out-dir, and TARGETS.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
import types

import numpy as np
import torch
import torch._inductor.lowering  # noqa: F401  (loads Inductor, which registers torchops's lowerings)
from torch._inductor.utils import run_and_get_code

import torchops
from torchops import _inductor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the shared modules beside this file
import targets  # noqa: E402
from bench import level_in_use, random_values  # noqa: E402  (importing bench only defines them)
from report import (  # noqa: E402
    K, M, aligned_table, exit_if_mismatched, machine_info, machine_markdown, markdown_rows, row_keys,
    size_label, source_version, write_csv, write_json,
)
from timing import MAX_WAIT_PER_CASE, MIN_REPS, calmest, cores_busy, measure, record_times, wait_for_cores  # noqa: E402

SIZES = [64, 64 * K, 256 * K, M, 4 * M, 16 * M]  # elements of each case's output; 64: where per-call costs show
QUICK_SIZES = [64, 64 * K, M]
THREADS = [1, 2]
KEYS = {"torchops compiled": "compiled", "torch.ops compiled": "torch_ops", "builtin compiled": "builtin",
        "torchops eager": "eager",
        "extern compiled": "extern", "builtin again": "builtin_again", "numpy": "numpy"}  # column names in results.csv/json: <key>_us
OPS = torch.ops.torchops
CODE_CHECK_SIZE = 64 * K
CODE_CONTENDERS = ["torchops compiled", "extern compiled", "builtin compiled"]  # whose generated code is read


# ---------------------------------------------------------------------------------------------
# The cases: each function with torchops and with builtins, and its inputs.

def unpack4_torchops(packed, scale, zero):
    q = packed.view(torch.int8)
    low = torchops.bitshift(torchops.bitshift(q, 4, "LEFT"), 4, "RIGHT")  # low nibble, sign-extended
    high = torchops.bitshift(q, 4, "RIGHT")
    # Stacked after the arithmetic, as floats: Inductor then writes both halves straight into
    # the output (one kernel); a stack of the int8 nibbles is an aten.cat call on CPU.
    return torch.stack(((low.float() - zero) * scale, (high.float() - zero) * scale), dim=-1).flatten()


def unpack4_torch_ops(packed, scale, zero):
    q = packed.view(torch.int8)
    low = OPS.bitshift.Scalar(OPS.bitshift.Scalar(q, 4, "LEFT"), 4, "RIGHT")
    high = OPS.bitshift.Scalar(q, 4, "RIGHT")
    return torch.stack(((low.float() - zero) * scale, (high.float() - zero) * scale), dim=-1).flatten()


def unpack4_builtin(packed, scale, zero):
    q = packed.view(torch.int8)
    low = (q << 4) >> 4
    high = q >> 4
    return torch.stack(((low.float() - zero) * scale, (high.float() - zero) * scale), dim=-1).flatten()


def unpack4_inputs(n):
    # n output values from n/2 bytes, every byte value; scale and zero point as 0-d tensors
    # (a per-tensor quantization's parameters), so the graph does not bake them in.
    return random_values(torch.uint8, (n // 2,)), torch.tensor(0.05), torch.tensor(0.5)


# splitmix64's multipliers as the int64 values of the same bits (PyTorch's int64 product wraps).
MIX1 = 0xBF58476D1CE4E5B9 - 2**64
MIX2 = 0x94D049BB133111EB - 2**64
BUCKETS = 1 << 20


def hash64_torchops(keys):
    x = keys ^ torchops.bitshift(keys, 30, "RIGHT", arithmetic=False)
    x = x * MIX1
    x = x ^ torchops.bitshift(x, 27, "RIGHT", arithmetic=False)
    x = x * MIX2
    x = x ^ torchops.bitshift(x, 31, "RIGHT", arithmetic=False)
    return x & (BUCKETS - 1)


def hash64_torch_ops(keys):
    x = keys ^ OPS.bitshift.Scalar(keys, 30, "RIGHT", False)
    x = x * MIX1
    x = x ^ OPS.bitshift.Scalar(x, 27, "RIGHT", False)
    x = x * MIX2
    x = x ^ OPS.bitshift.Scalar(x, 31, "RIGHT", False)
    return x & (BUCKETS - 1)


def logical_right_shift(x, k):
    """x >>> k for int64 and 0 < k < 64 from builtins: the arithmetic shift, its sign copies masked off."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def hash64_builtin(keys):
    x = keys ^ logical_right_shift(keys, 30)
    x = x * MIX1
    x = x ^ logical_right_shift(x, 27)
    x = x * MIX2
    x = x ^ logical_right_shift(x, 31)
    return x & (BUCKETS - 1)


def hash64_inputs(n):
    return (random_values(torch.int64, (n,)),)  # every bit pattern, negative keys included


NEG_SLOPE, POS_SLOPE = 0.125, 1.5


def sign_select_torchops(x):
    return torch.where(torchops.signbit(x), NEG_SLOPE * x, POS_SLOPE * x)


def sign_select_torch_ops(x):
    return torch.where(OPS.signbit.default(x), NEG_SLOPE * x, POS_SLOPE * x)


def sign_select_builtin(x):
    return torch.where(torch.signbit(x), NEG_SLOPE * x, POS_SLOPE * x)


def sign_select_inputs(n):
    x = torch.randn(n)
    # 0.0, -0.0, inf, -inf, NaN, NaN with the sign bit: both versions go by the sign bit
    specials = torch.tensor([0, -(2**31), 0x7F800000, -0x800000, 0x7FC00000, -0x400000], dtype=torch.int32)
    x[: len(specials)] = specials.view(torch.float32)
    return (x,)


FMIX1, FMIX2 = 0x85EBCA6B, 0xC2B2AE35  # murmur3's fmix32 multipliers
MASK32 = (1 << 32) - 1


def fmix32_torchops(h):
    h = h ^ torchops.bitshift(h, 16, "RIGHT")
    h = h * FMIX1  # uint32 products wrap, as in C
    h = h ^ torchops.bitshift(h, 13, "RIGHT")
    h = h * FMIX2
    return h ^ torchops.bitshift(h, 16, "RIGHT")


def fmix32_torch_ops(h):
    h = h ^ OPS.bitshift.Scalar(h, 16, "RIGHT")
    h = h * FMIX1
    h = h ^ OPS.bitshift.Scalar(h, 13, "RIGHT")
    h = h * FMIX2
    return h ^ OPS.bitshift.Scalar(h, 16, "RIGHT")


def fmix32_builtin(h):
    """PyTorch has no uint32 shifts: widened to int64 (where the values are never negative, so
    >> is logical), each product masked to 32 bits, narrowed back."""
    h = h.to(torch.int64)
    h = h ^ (h >> 16)
    h = (h * FMIX1) & MASK32
    h = h ^ (h >> 13)
    h = (h * FMIX2) & MASK32
    return (h ^ (h >> 16)).to(torch.uint32)


def fmix32_numpy(h):
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(FMIX1)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(FMIX2)
    return h ^ (h >> np.uint32(16))


def fmix32_inputs(n):
    return (random_values(torch.uint32, (n,)),)


def xorshift64_torchops(x):
    x = x ^ torchops.bitshift(x, 13, "LEFT")
    x = x ^ torchops.bitshift(x, 7, "RIGHT")
    return x ^ torchops.bitshift(x, 17, "LEFT")


def xorshift64_torch_ops(x):
    x = x ^ OPS.bitshift.Scalar(x, 13, "LEFT")
    x = x ^ OPS.bitshift.Scalar(x, 7, "RIGHT")
    return x ^ OPS.bitshift.Scalar(x, 17, "LEFT")


def xorshift64_builtin(state):
    """PyTorch has no uint64 shifts: the same bits as int64, the arithmetic right shift masked."""
    x = state.view(torch.int64)
    x = x ^ (x << 13)
    x = x ^ logical_right_shift(x, 7)
    return (x ^ (x << 17)).view(torch.uint64)


def xorshift64_numpy(x):
    x = x ^ (x << np.uint64(13))
    x = x ^ (x >> np.uint64(7))
    return x ^ (x << np.uint64(17))


def xorshift64_inputs(n):
    return (random_values(torch.uint64, (n,)),)


def dequant4_torchops(packed, scale):
    return torchops.unpack(packed, 4, signed=True).to(torch.float32) * scale


def dequant4_torch_ops(packed, scale):
    return OPS.unpack.default(packed, 4, -1, None, "big", True).to(torch.float32) * scale


def dequant4_builtin(packed, scale):
    low = (packed << 4).to(torch.int8) >> 4  # the low nibble in the high bits, shifted back sign-extended
    high = packed.to(torch.int8) >> 4
    # Stacked as floats, the first field high: Inductor then writes both halves straight into the
    # output (one kernel); a stack of the int8 nibbles is an aten.cat call on CPU.
    return torch.stack((high.to(torch.float32) * scale, low.to(torch.float32) * scale), dim=-1).flatten(-2)


def dequant4_inputs(n):
    # n bytes, every byte value; the scale a 0-d tensor (a per-tensor quantization's), not baked in.
    return random_values(torch.uint8, (n,)), torch.tensor(0.05)


PACK_WEIGHTS = [7, 6, 5, 4, 3, 2, 1, 0]  # the shift of each of 8 bits, the first the highest


def packbits_gt_torchops(x):
    return torchops.packbits(x > 0)


def packbits_gt_torch_ops(x):
    return OPS.packbits.default(x > 0)


def packbits_gt_builtin(x):
    bits = (x > 0).reshape(-1, 8).to(torch.uint8)  # sizes are multiples of 8
    return (bits << torch.tensor(PACK_WEIGHTS, dtype=torch.uint8)).sum(-1, dtype=torch.uint8)


def packbits_gt_inputs(n):
    return (torch.randn(n),)


# name: (torchops version, torch.ops version, builtin version, inputs)
CASES = {
    "unpack4": (unpack4_torchops, unpack4_torch_ops, unpack4_builtin, unpack4_inputs),
    "hash64": (hash64_torchops, hash64_torch_ops, hash64_builtin, hash64_inputs),
    "sign_select": (sign_select_torchops, sign_select_torch_ops, sign_select_builtin, sign_select_inputs),
    "fmix32": (fmix32_torchops, fmix32_torch_ops, fmix32_builtin, fmix32_inputs),
    "xorshift64": (xorshift64_torchops, xorshift64_torch_ops, xorshift64_builtin, xorshift64_inputs),
    "dequant4": (dequant4_torchops, dequant4_torch_ops, dequant4_builtin, dequant4_inputs),
    "packbits_gt": (packbits_gt_torchops, packbits_gt_torch_ops, packbits_gt_builtin, packbits_gt_inputs),
}
#: The cases NumPy computes too (it has unsigned shifts; PyTorch does not): name -> NumPy version.
NUMPY_CASES = {"fmix32": fmix32_numpy, "xorshift64": xorshift64_numpy}


# ---------------------------------------------------------------------------------------------
# Compiling.

def compiled(fn):
    return torch.compile(fn, fullgraph=True, dynamic=False)


def code_copy(fn):
    """fn with a code object of its own. Dynamo keeps compiled graphs on the code object, so a
    second torch.compile of the same function would be handed the graph compiled with the
    lowerings; torch._dynamo.reset() would avoid that but also drop every other contender's."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def without_lowerings(function, *args):
    """function(*args) with torchops's kernel-calling lowerings in Inductor's table instead of
    the fusing ones (compiles extern)."""
    _inductor.register(fuse=False)
    try:
        return function(*args)
    finally:
        _inductor.register()


def code_status(name: str) -> dict:
    """Compiles each case's torchops version with and without the lowerings (and its builtin
    version) at one size and reads the generated code: whether it calls torch.ops.torchops,
    and how many C++ kernels it has. run_and_get_code resets Dynamo, so this runs first."""
    fn_torchops, _, fn_builtin, inputs = CASES[name]
    args = inputs(CODE_CHECK_SIZE)

    def read(code):
        text = "\n".join(code)
        return {"calls torchops": "torch.ops.torchops" in text, "kernels": text.count("async_compile.cpp_pybinding("),
                "sources": re.findall(r"r'''(.*?)'''", text, re.DOTALL)}  # the C++ of each kernel

    status = {"torchops compiled": read(run_and_get_code(compiled(fn_torchops), *args)[1]),
              "extern compiled": read(without_lowerings(run_and_get_code, compiled(fn_torchops), *args)[1]),
              "builtin compiled": read(run_and_get_code(compiled(fn_builtin), *args)[1])}
    status["code"] = "extern" if status["torchops compiled"]["calls torchops"] else "fused"
    # Kernels identical to the builtin chain's: then only the Python side (Dynamo's guards) can differ.
    status["same C++ as builtin"] = status["torchops compiled"]["sources"] == status["builtin compiled"]["sources"]
    for contender in CODE_CONTENDERS:
        del status[contender]["sources"]
    return status


# ---------------------------------------------------------------------------------------------
# Checking and timing.

def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal bit for bit (so NaNs compare, -0.0 differs from 0.0)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        as_int = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        a, b = a.view(as_int), b.view(as_int)
    return torch.equal(a, b)


def run_case(name: str, functions: dict, size: int, threads: int, seconds_per_contender: float) -> dict:
    args = CASES[name][3](size)
    row = {"case": name, "size": size, "threads": threads}
    # The first call compiles (the extern one without the lowerings); then every output is
    # compared with eager torchops's, one at a time (at 16M a hash64 output is 128 MB).
    expected = functions["torchops eager"](*args)
    wrong = []
    for contender, function in functions.items():
        first_call = without_lowerings if contender == "extern compiled" else (lambda f, *a: f(*a))
        if not same(first_call(function, *args), expected):
            wrong.append(contender)
    del expected
    row["verified"] = "ok" if not wrong else "MISMATCH: " + ", ".join(wrong)
    if wrong:
        return row  # never time a wrong answer

    calls = {contender: (lambda f: lambda: f(*args))(function) for contender, function in functions.items()}
    if name in NUMPY_CASES:
        arrays = [a.numpy() for a in args]
        if not same(torch.from_numpy(NUMPY_CASES[name](*arrays)), functions["torchops eager"](*args)):
            row["verified"] = "MISMATCH: numpy"
            return row
        calls["numpy"] = lambda: NUMPY_CASES[name](*arrays)
    samples = calmest(lambda: measure(calls, seconds_per_contender))
    times = record_times(row, samples, "torchops compiled", key=KEYS.get)
    mine = times["torchops compiled"]
    row["x_builtin"] = times["builtin compiled"] / mine  # > 1: compiled torchops is faster
    row["x_torch_ops"] = times["torch.ops compiled"] / mine
    row["x_eager"] = times["torchops eager"] / mine
    row["x_extern"] = times["extern compiled"] / mine
    row["a_a"] = times["builtin again"] / times["builtin compiled"]  # identical code: 1 but for noise
    if "numpy" in times:
        row["x_numpy"] = times["numpy"] / mine
    return row


def run(names: list[str], sizes: list[int], seconds_per_contender: float, wait_budget: float,
        code: dict) -> list[dict]:
    rows = []
    waited = 0.0
    start = time.time()
    for threads in THREADS:
        torch.set_num_threads(threads)
        torch._dynamo.reset()  # compile again: the generated code is made for one thread count
        for name in names:
            fn_torchops, fn_torch_ops, fn_builtin, _ = CASES[name]
            functions = {"torchops compiled": compiled(fn_torchops), "torch.ops compiled": compiled(fn_torch_ops),
                         "builtin compiled": compiled(fn_builtin),
                         "torchops eager": fn_torchops, "extern compiled": compiled(code_copy(fn_torchops)),
                         "builtin again": compiled(code_copy(fn_builtin))}
            for size in sizes:
                busy = False
                if threads > 1:
                    seconds, busy = wait_for_cores(min(MAX_WAIT_PER_CASE, max(0.0, wait_budget - waited)))
                    waited += seconds
                row = run_case(name, functions, size, threads, seconds_per_contender)
                row["cores_busy"] = threads > 1 and (busy or cores_busy())
                rows.append(row)
                print(f"[{time.time() - start:5.0f}s] {' '.join(cells(row, code))}", flush=True)
    if waited > 1:
        print(f"waited {waited:.0f} s in all for other processes to free a core", flush=True)
    return rows


# ---------------------------------------------------------------------------------------------
# Reporting.

COLUMNS = ["case", "size", "thr", "code", "torchops compiled µs", "IQR", "builtin compiled µs", "torchops eager µs",
           "extern compiled µs", "numpy µs", "×builtin", "A/A", "×torch.ops", "×eager", "extern→fused", "×numpy"]


def cells(row: dict, code: dict) -> list[str]:
    def us(key):
        return f"{row[key]:.1f}" if row[key] < 1000 else f"{row[key]:.0f}"

    case = [row["case"], size_label(row["size"]), str(row["threads"]), code.get(row["case"], {}).get("code", "?")]
    if "compiled_us" not in row:
        return case + [row["verified"]] + [""] * (len(COLUMNS) - len(case) - 1)
    noise = f"{row['spread']:.0%}" + ("*" if row["cores_busy"] else "")
    numpy = "numpy_us" in row
    return case + [us("compiled_us"), noise, us("builtin_us"), us("eager_us"), us("extern_us"),
                   us("numpy_us") if numpy else "",
                   f"{row['x_builtin']:.2f}", f"{row['a_a']:.2f}", f"{row['x_torch_ops']:.2f}", f"{row['x_eager']:.2f}",
                   f"{row['x_extern']:.2f}", f"{row['x_numpy']:.2f}" if numpy else ""]


def text_table(rows: list[dict], code: dict) -> str:
    return aligned_table(COLUMNS, [cells(row, code) for row in rows], left=4)


def markdown_table(rows: list[dict], code: dict) -> str:
    return markdown_rows(COLUMNS, [cells(row, code) for row in rows], left=4)


def code_text(code: dict) -> str:
    lines = []
    for name, status in code.items():
        parts = [f"{contender}: {'calls torch.ops.torchops' if status[contender]['calls torchops'] else 'inline'}, "
                 f"{status[contender]['kernels']} C++ kernel(s)" for contender in CODE_CONTENDERS]
        same = ", the same C++ as the builtin chain's" if status["same C++ as builtin"] else ""
        lines.append(f"  {name:<12} {status['code']}{same} ({'; '.join(parts)})")
    return "\n".join(lines)


def targets_text(rows: list[dict], code: dict) -> str:
    timed = [r for r in rows if "compiled_us" in r]
    # Each row carries its case's generated-code status, which one target judges.
    calm = [{**r, "fused": float(code[r["case"]]["code"] == "fused")} for r in timed if not r["cores_busy"]]
    left_out = len(timed) - len(calm)
    lines = ["TARGETS (benchmarks/targets.py; ratios of median times, > 1 means compiled torchops is faster"
             + (f"; {left_out} rows left out, measured while another process held a core)" if left_out else ")")]
    lines.append(targets.text(targets.evaluate("compiled", calm, row_name)))
    medians = ", ".join(f"{name} {statistics.median(r['x_builtin'] for r in calm if r['case'] == name):.2f}x"
                        for name in CASES if any(r["case"] == name for r in calm))
    lines.append(f"  median x_builtin per case: {medians}")
    return "\n".join(lines)


def row_name(row: dict) -> str:
    return f"{row['case']} {size_label(row['size'])} thr={row['threads']}"


def write_results(rows, code, info, summary, out_dir, mode, wall_seconds):
    os.makedirs(out_dir, exist_ok=True)
    # results.csv has each row's case's code status ("fused" or "extern") as its last column
    write_csv(os.path.join(out_dir, "results.csv"), ({**row, "code": code[row["case"]]["code"]} for row in rows),
              row_keys(rows) + ["code"])
    write_json(os.path.join(out_dir, "results.json"), info, mode, wall_seconds, rows, generated_code=code)
    machine = machine_markdown(info)
    with open(os.path.join(out_dir, "results.md"), "w") as handle:
        handle.write(f"""# torchops compiled-graph benchmark results ({mode} run)

Produced by `benchmarks/compiled.py{' --quick' if mode == 'quick' else ''}` in {wall_seconds:.0f} s.

## Machine

{machine}

## How to read the table

- Cases (each written with torchops ops and with the PyTorch builtins that give the same bits):
  `unpack4`: packed signed int4 (a uint8 tensor of size/2 bytes) to float32, `(q - zero) * scale`,
  the low nibble (`(q << 4) >> 4` on int8) and the high one (`q >> 4`) interleaved;
  `hash64`: splitmix64's finalizer on int64 keys, logical right shifts (builtin: `(x >> k) & mask`),
  wrapping multiplies, `& (2**20 - 1)`; `sign_select`: `torch.where(signbit(x), 0.125 * x, 1.5 * x)`, float32;
  `fmix32`: murmur3's 32-bit finalizer on uint32 values, torchops's shifts with torch's uint32 xor and
  multiply (builtin: widened to int64, each product masked to 32 bits); `xorshift64`: one xorshift64
  step on uint64 values (builtin: viewed as int64, the right shift masked). PyTorch has no shifts of
  uint16/32/64, hence those builtin workarounds. `dequant4`: an int4 dequantize,
  `unpack(p, 4, signed=True).to(float32) * scale` (builtin: `(p << 4).to(int8) >> 4` and
  `p.to(int8) >> 4`, converted, scaled and interleaved by `torch.stack((high, low), -1).flatten(-2)`); `packbits_gt`:
  `packbits(x > 0)` of float32 values (builtin: the bools 8 to a row, shifted and summed; its
  `extern compiled` is `x > 0` compiled, then packbits' C++ kernel on the bools it wrote).
- `size`: elements of the output (= of the input), except `unpack4` (its input has size/2 bytes),
  `dequant4` (bytes of its input: 2 * size outputs) and `packbits_gt` (elements of its input:
  size/8 bytes out).
  `thr`: torch.set_num_threads; every graph is compiled for the thread count it runs at.
- Contenders: `torchops compiled` = `torch.compile(fullgraph=True, dynamic=False)` of the torchops
  version with the Inductor lowerings; `torch.ops compiled` = the same of the version that calls
  `torch.ops.torchops.*` (the same generated code: only Dynamo's guards around it can differ);
  `builtin compiled` = the same of the builtin version;
  `torchops eager` = the torchops version uncompiled; `extern compiled` = the torchops version
  compiled without fusing (the lowerings of `TORCHOPS_INDUCTOR_LOWERINGS=0`: the graph calls the C++ kernels as opaque ops);
  `numpy` = the same chain in NumPy (fmix32 and xorshift64 only), on arrays made outside the timing.
  Each call returns a fresh output (functional), so every contender pays its allocations.
- Times: medians (µs per call) over at least {MIN_REPS} repetitions; a repetition runs every contender
  once, in a fresh random order (from 1M elements a call runs slower after one that swept more
  memory, and a rotation would give each contender the same predecessor every time); a sample
  batches calls up to ~1 ms; compiling happens before, outside the timing. Every contender's
  output is checked bit for bit against eager torchops's before timing.
- `×builtin` = builtin compiled / torchops compiled, `A/A` = builtin again / builtin compiled
  (the same code twice: how far from 1 this row's noise alone moves a ratio),
  `×torch.ops` = torch.ops compiled / torchops compiled,
  `×eager` = torchops eager / torchops compiled,
  `extern→fused` = extern compiled / torchops compiled (> 1: torchops compiled faster),
  `×numpy` = numpy / torchops compiled.
- `code`: `fused` when the generated code of `torchops compiled` no longer calls `torch.ops.torchops`
  (read once per case at {size_label(CODE_CHECK_SIZE)} with `torch._inductor.utils.run_and_get_code`; details below).
- `IQR`: interquartile range / median of the torchops compiled samples; `*`: a 2-thread row measured
  while another process held a core (left out of the TARGETS). Ratios near 1 vary by ~10% between runs.

## Targets

```
{summary}
```

## Generated code (at {size_label(CODE_CHECK_SIZE)} elements)

```
{code_text(code)}
```

## Results

{markdown_table(rows, code)}
""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"sizes {', '.join(map(size_label, QUICK_SIZES))} only, "
                                                             "fewer repetitions")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES), metavar="NAME",
                        help=f"these cases only (of {', '.join(CASES)}; default: all)")
    parser.add_argument("--out-dir", help="default: benchmarks/results/compiled (--quick: .../compiled/quick)")
    args = parser.parse_args()
    if args.out_dir is None:
        results = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "compiled")
        args.out_dir = os.path.join(results, "quick") if args.quick else results

    start = time.time()
    load_at_start = os.getloadavg()[0]
    torch.manual_seed(0)
    all_threads = torch.get_num_threads()
    mode = "quick" if args.quick else "full"
    _inductor.register()  # in case something took them out; a no-op when they are in
    if not _inductor.registered():
        print(f"warning: torchops's Inductor lowerings are not enabled (torch {torch.__version__}, written for "
              f"{', '.join(_inductor.WRITTEN_FOR)}, or TORCHOPS_INDUCTOR_LOWERINGS=0): 'torchops compiled' is extern too",
              flush=True)
    if load_at_start > 0.5:
        print(f"warning: load average {load_at_start:.2f} on {os.cpu_count()} cores: other processes are running; "
              "2-thread times suffer most", flush=True)
    sizes = QUICK_SIZES if args.quick else SIZES
    print(f"torchops compiled-graph benchmark ({mode}): {len(args.cases)} cases x {len(sizes)} sizes x threads "
          f"{THREADS}; compiling takes seconds per graph", flush=True)

    try:
        torch.set_num_threads(1)
        code = {name: code_status(name) for name in args.cases}
        print("generated code:\n" + code_text(code), flush=True)
        rows = run(args.cases, sizes, 0.03 if args.quick else 0.2, 5.0 if args.quick else 120.0, code)
    finally:
        torch.set_num_threads(all_threads)
        _inductor.register()

    wall = time.time() - start
    level = level_in_use()
    info = machine_info([level], level, all_threads)
    info["torchops source"] = source_version()
    info["lowerings registered"] = _inductor.registered()
    if args.cases != list(CASES):
        info["cases"] = ", ".join(args.cases)
    info["load average (1 min) at start / end"] = f"{load_at_start:.2f} / {os.getloadavg()[0]:.2f}"
    summary = targets_text(rows, code)
    print()
    print(text_table(rows, code))
    print("µs: median per call; IQR: noise of torchops compiled's samples; *: measured while another process "
          "held a core (left out of TARGETS); ×: other / torchops compiled (> 1: torchops compiled faster)")
    print("\n" + "\n".join(f"{key}: {value}" for key, value in info.items()))
    print("\n" + summary)
    write_results(rows, code, info, summary, args.out_dir, mode, wall)
    print(f"\nresults written to {args.out_dir}/results.md, results.csv, results.json ({wall:.0f} s)")
    exit_if_mismatched(rows, row_name)


if __name__ == "__main__":
    main()
