"""Shifts by a tensor count against PyTorch on 1 and 2 threads, at the sizes where a second
thread starts to pay: the evidence behind docs/performance.md's "Tensor-count shifts
against PyTorch, CPU by CPU".

    .venv/bin/python benchmarks/shift_threads.py [--seconds S] [--out-dir DIR]

For each dtype (int16, int32, int64 and their unsigned twins), size (64K, 256K, 1M
elements) and thread count (1, 2): a right shift (arithmetic for the signed dtypes) and a
left shift of x by a tensor count y of x's shape, into a preallocated output, set against
PyTorch's own shift of the same bytes (for an unsigned dtype, which PyTorch does not shift,
its signed twin's arithmetic right or left shift: the same loads, stores and one vector
shift an element) and against torch.add of the same operands (the bandwidth reference).
Contenders alternate in a fresh random order each repetition (timing.measure), and each
ratio carries the sign test's 95% interval of its paired ratios (timing.ratio_interval):
a ratio whose interval reaches 1.0 is no measurable loss.

Results: a table on stdout and shift_threads.md in --out-dir (default
benchmarks/results/shift-threads/<cpu>/), with the machine it ran on.
"""
from __future__ import annotations

import argparse
import os
import statistics

import torch

import report
import timing
import torchops

DTYPES = [torch.int16, torch.int32, torch.int64, torch.uint16, torch.uint32, torch.uint64]
SIGNED_TWIN = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}
SIZES = [1 << 16, 1 << 18, 1 << 20]
THREADS = [1, 2]
DIRECTIONS = ["RIGHT", "LEFT"]


def operands(dtype, n: int, generator):
    width = torch.iinfo(dtype).bits
    twin = SIGNED_TWIN.get(dtype, dtype)
    x = torch.randint(torch.iinfo(twin).min, torch.iinfo(twin).max, (n,), dtype=twin, generator=generator).view(dtype)
    y = torch.randint(0, width, (n,), dtype=twin, generator=generator).view(dtype)
    return x, y


def contenders(dtype, direction: str, x, y) -> dict:
    twin = SIGNED_TWIN.get(dtype, dtype)
    xs, ys = x.view(twin), y.view(twin)
    # One output for every contender: where a buffer lies against x and y (their addresses
    # modulo 4 KiB, which decide whether a store and a later load seem to alias) moves a
    # call's time by up to 20% here at 256K-1M elements, whatever the code; with one buffer
    # that is the same for all.
    out = torch.empty_like(x)
    outs = out.view(twin)
    torch_shift = torch.bitwise_right_shift if direction == "RIGHT" else torch.bitwise_left_shift
    return {
        "torchops": lambda: torchops.bitshift(x, y, direction, True, out=out),
        "torch": lambda: torch_shift(xs, ys, out=outs),
        "bandwidth": lambda: torch.add(xs, ys, out=outs),
    }


def cpu_family_model() -> str:
    """"family 25 model 17": a model name such as "AMD EPYC" alone names no generation."""
    fields = {}
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    return f"family {fields.get('cpu family', '?')} model {fields.get('model', '?')}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=0.6, help="seconds of samples per contender and case")
    parser.add_argument("--out-dir", help="default: benchmarks/results/shift-threads/<cpu>")
    args = parser.parse_args()
    info = report.machine_info([torchops.cpu_capability()], torchops.cpu_capability(), torch.get_num_threads())
    info["cpu family/model"] = cpu_family_model()
    all_threads = torch.get_num_threads()
    generator = torch.Generator().manual_seed(0)
    columns = ["dtype", "op", "n", "threads", "torchops us", "torch us", "vs torch", "95% interval", "vs bandwidth"]
    body = []
    for dtype in DTYPES:
        for n in SIZES:
            x, y = operands(dtype, n, generator)
            for direction in DIRECTIONS:
                functions = contenders(dtype, direction, x, y)
                for threads in THREADS:
                    if threads > all_threads:
                        continue
                    torch.set_num_threads(threads)
                    samples = timing.measure(functions, args.seconds)
                    median = {name: statistics.median(s) for name, s in samples.items()}
                    low, high = timing.ratio_interval(samples["torch"], samples["torchops"])
                    body.append([str(dtype).removeprefix("torch."), direction.lower(), report.size_label(n),
                                 str(threads), f"{median['torchops'] * 1e6:.1f}", f"{median['torch'] * 1e6:.1f}",
                                 f"{median['torch'] / median['torchops']:.2f}x", f"{low:.2f}-{high:.2f}",
                                 f"{median['bandwidth'] / median['torchops']:.2f}x"])
                    print(report.aligned_table(columns, [body[-1]], 4).splitlines()[-1], flush=True)
    torch.set_num_threads(all_threads)
    table = report.aligned_table(columns, body, 4)
    print(table)
    cpu = f"{info['cpu']} {info['cpu family/model']} {info['torchops level']}".replace(" ", "-").replace("/", "-")
    out_dir = args.out_dir or os.path.join(os.path.dirname(__file__), "results", "shift-threads", cpu)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "shift_threads.md"), "w") as f:
        f.write("# Tensor-count shifts against PyTorch, 1 and 2 threads\n\n")
        f.write(report.machine_markdown(info) + "\n\n")
        f.write("`vs torch`: PyTorch's median time over torchops's (above 1: torchops faster); the interval is "
                "the sign test's 95% interval of the paired ratios; `vs bandwidth`: torch.add's over "
                "torchops's.\n\n")
        f.write(report.markdown_rows(columns, body, 4) + "\n")


if __name__ == "__main__":
    main()
