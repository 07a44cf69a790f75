"""bench.py --device cuda (or xpu): torchops against PyTorch's builtins on a GPU.

Every case runs, on the device, torchops (its compute ops' Triton kernels where Triton is
installed, else their ATen kernels), the PyTorch builtin that computes the same thing there,
and a bandwidth reference that moves the same bytes (torch.add of the same operands for a
shift, a compare into a bool output for signbit), each writing into its own preallocated
output, alternating inside each repetition. Times come from the device's events; each case
first checks that torchops's output equals the builtin's and the CPU kernels'. Where no
such device is present the run says so and judges nothing: no GPU figure is ever made up.
"""
from __future__ import annotations

import statistics

import torch

import targets
import torchops
from report import M, aligned_table, size_label

# (name, dtype, the torchops call, the builtin call), all writing `out`.
SHIFTS = [
    ("left", lambda x, y, out: torchops.bitshift(x, y, "LEFT", out=out),
     lambda x, y, out: torch.bitwise_left_shift(x, y, out=out)),
    ("right", lambda x, y, out: torchops.bitshift(x, y, "RIGHT", out=out),
     lambda x, y, out: torch.bitwise_right_shift(x, y, out=out)),
]
SHIFT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
SIGNBIT_DTYPES = [torch.float16, torch.bfloat16, torch.float32]
SAME_WIDTH_INT = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _median_ms(device_module, contenders, reps):
    """Median milliseconds of each contender over `reps` repetitions, the order rotating."""
    times = [[] for _ in contenders]
    for rep in range(reps):
        order = [(rep + k) % len(contenders) for k in range(len(contenders))]
        for index in order:
            start, end = device_module.Event(enable_timing=True), device_module.Event(enable_timing=True)
            start.record()
            contenders[index]()
            end.record()
            end.synchronize()
            times[index].append(start.elapsed_time(end))
    return [statistics.median(t) for t in times]


def _cases(device, quick):
    sizes = [M, 16 * M] if quick else [M, 16 * M, 256 * M]
    generator = torch.Generator(device=device).manual_seed(0)
    for size in sizes:
        for dtype in SHIFT_DTYPES:
            info = torch.iinfo(dtype)
            x = torch.randint(info.min, info.max, (size,), dtype=dtype, device=device, generator=generator)
            y = torch.randint(0, info.bits, (size,), dtype=dtype, device=device, generator=generator)
            for name, ours, builtin in SHIFTS:
                # Counts in range: the builtins' answer for out-of-range ones differs by device.
                yield (size, str(dtype).removeprefix("torch."), name, x, y, ours, builtin,
                       lambda x, y, out: torch.add(x, y, out=out), dtype)
        for dtype in SIGNBIT_DTYPES:
            x = torch.randn(size, device=device, generator=generator).to(dtype)
            as_int = x.view(SAME_WIDTH_INT[x.itemsize])
            yield (size, str(dtype).removeprefix("torch."), "signbit", x, None,
                   lambda x, y, out: torchops.signbit(x, out=out), lambda x, y, out: torch.signbit(x, out=out),
                   lambda x, y, out, as_int=as_int: torch.ne(as_int, 0, out=out), torch.bool)


def run(device: str, quick: bool) -> int:
    """Measures and prints the device cases and the device targets; 0 when nothing mismatched."""
    device_module = getattr(torch, device, None)
    if device_module is None or not device_module.is_available():
        print(f"device benchmark: no {device} device on this machine; nothing measured")
        print("TARGETS\n" + targets.text(targets.evaluate("device", [], lambda r: "")))
        return 0
    rows, mismatched = [], []
    for size, dtype, op, x, y, ours, builtin, bandwidth, out_dtype in _cases(device, quick):
        outs = [torch.empty(x.shape, dtype=out_dtype, device=device) for _ in range(3)]
        calls = [lambda f=f, out=out: f(x, y, out) for f, out in zip((ours, builtin, bandwidth), outs)]
        for call in calls:
            call()
        expected = (torchops.signbit(x.cpu()) if y is None else
                    torchops.bitshift(x.cpu(), y.cpu(), "LEFT" if op == "left" else "RIGHT"))
        if not (torch.equal(outs[0], outs[1]) and torch.equal(outs[0].cpu(), expected)):
            mismatched.append(f"{op} {dtype} {size_label(size)}")
            continue
        reps = 20 if size >= 256 * M else 100
        ours_ms, builtin_ms, bandwidth_ms = _median_ms(device_module, calls, reps)
        rows.append(dict(size=size, dtype=dtype, op=op, torchops_ms=ours_ms, torch_ms=builtin_ms,
                         bandwidth_ms=bandwidth_ms, x_torch=builtin_ms / ours_ms, x_bandwidth=bandwidth_ms / ours_ms))
    name = torch.get_device_module(device).get_device_name()
    print(f"device benchmark on {name} ({device}), torch {torch.__version__}, torchops's compute kernels: "
          f"{'Triton' if device.upper() in torchops._triton.registered() else 'ATen'}")
    print(aligned_table(["op", "dtype", "size", "torchops ms", "torch ms", "x torch", "x bandwidth"],
                        [[r["op"], r["dtype"], size_label(r["size"]), f"{r['torchops_ms']:.4f}", f"{r['torch_ms']:.4f}",
                          f"{r['x_torch']:.2f}", f"{r['x_bandwidth']:.2f}"] for r in rows], left=3))
    print("TARGETS\n" + targets.text(targets.evaluate(
        "device", rows, lambda r: f"{r['op']} {r['dtype']} {size_label(r['size'])}")))
    if mismatched:
        print("MISMATCH (not timed): " + "; ".join(mismatched))
    return 1 if mismatched else 0
