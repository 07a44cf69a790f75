"""Where the time of a 1-element call goes: the evidence behind docs/performance.md's
"per-call cost" section.

    .venv/bin/python benchmarks/call_cost.py

It times one-element calls (median of many) of the same shift reached in different ways:
PyTorch's builtin through its own Python binding, PyTorch's *own* aten op through
torch.ops (the path every custom operator takes from Python), torchops through torch.ops
and through its Python API, and both ops inside a TorchScript loop (no Python per call).
If aten's own op costs the same as torchops's through torch.ops, the difference to the
builtin is torch.ops's Python binding, not torchops's C++ code.
"""
import statistics
import time

import torch

import torchops


def per_call_us(function, calls=2000, repeats=15):
    for _ in range(100):
        function()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


@torch.jit.script
def builtin_loop(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, calls: int):
    for _ in range(calls):
        torch.bitwise_left_shift(x, y, out=out)


@torch.jit.script
def torchops_loop(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, calls: int):
    for _ in range(calls):
        torch.ops.torchops.bitshift(x, y, "LEFT", True, out=out)  # TorchScript picks .out


def main():
    torch.set_num_threads(1)
    x = torch.ones(1, dtype=torch.int32)
    out = torch.empty_like(x)
    aten_out = torch.ops.aten.bitwise_left_shift.Tensor_out
    torchops_out = torch.ops.torchops.bitshift.out
    rows = [
        ("torch.bitwise_left_shift(x, y, out=)  (builtin binding)", lambda: torch.bitwise_left_shift(x, x, out=out)),
        ("torch.ops.aten.bitwise_left_shift.Tensor_out  (aten via torch.ops)", lambda: aten_out(x, x, out=out)),
        ("torch.ops.torchops.bitshift.out  (torchops via torch.ops)", lambda: torchops_out(x, x, "LEFT", True, out=out)),
        ("torchops.bitshift(x, y, 'LEFT', out=)  (Python API)", lambda: torchops.bitshift(x, x, "LEFT", out=out)),
    ]
    print(f"1-element int32 left shift, 1 thread, torch {torch.__version__}, level {torchops.cpu_capability()}")
    for name, function in rows:
        print(f"  {per_call_us(function):6.2f} us  {name}")
    calls = 20000
    for name, loop in [("builtin", builtin_loop), ("torchops", torchops_loop)]:
        loop(x, x, out, 100)
        microseconds = per_call_us(lambda: loop(x, x, out, calls), calls=1, repeats=9) / calls
        print(f"  {microseconds:6.2f} us  TorchScript loop, {name} (no Python per call)")


if __name__ == "__main__":
    main()
