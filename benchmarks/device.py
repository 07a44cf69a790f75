"""bench.py --device cuda (or xpu): torchops against PyTorch's builtins on a GPU.

Every case runs, on the device, torchops (its compute ops' Triton kernels where Triton is
installed, else their ATen kernels), the PyTorch builtin that computes the same thing there
(for the packing ops, which PyTorch lacks, a composite of its ops: torch_packbits, torch_unpack),
and a bandwidth reference that moves the same bytes (torch.add of the same operands for a
shift, a compare into a bool output for signbit; for packing, the narrowing copy of x viewed
as the int of a packed byte's elements into the packed bytes, the widening copy back for
unpacking, as bench.py's), each writing into its own preallocated output, alternating inside
each repetition. Times come from the device's events; each case first checks that
torchops's output equals the builtin's and the CPU kernels'. Where no such device is present
the run says so and judges nothing: no GPU figure is ever made up.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

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
# The packing cases, sizes counting the unpacked elements (as bench.py's): (op, x's dtype, the
# result's dtype, bits per field). packbits of a byte and of a bool mask, unpackbits to bytes and
# to a mask (the uint8 result's bytes, viewed as bool), and the signed 4-bit fields of int4
# weights.
PACKING = [
    ("packbits", torch.uint8, torch.uint8, 1),
    ("packbits", torch.bool, torch.uint8, 1),
    ("unpackbits", torch.uint8, torch.uint8, 1),
    ("unpackbits", torch.uint8, torch.bool, 1),
    ("unpack4 signed", torch.uint8, torch.int8, 4),
]


@dataclass(frozen=True)
class Case:
    size: int  # elements (of the unpacked side, for packing)
    dtype: str  # x's, as a row names it; a packing row's: x's, -> the result's
    op: str
    x: torch.Tensor
    y: object  # the count operand of a shift, else None
    ours: Callable  # f(x, y, out), each contender writing its own out
    builtin: Callable
    bandwidth: Callable
    out_shape: tuple
    out_dtype: torch.dtype
    expected: Callable  # () -> the CPU kernels' result, of out's shape and dtype


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


def _field_shifts(bits: int, device) -> torch.Tensor:
    """Each field's shift in its byte, first field first (big bit order), as uint8."""
    per_byte = 8 // bits
    return torch.tensor([(per_byte - 1 - k) * bits for k in range(per_byte)], dtype=torch.uint8, device=device)


def torch_packbits(x: torch.Tensor, out: torch.Tensor):
    """A function that computes torchops.packbits(x) of a 1-D uint8 or bool x of a multiple of 8
    elements into `out` from PyTorch's ops on the device: each element's bit (x != 0) shifted
    into its place, then each byte's 8 summed (their bits are disjoint); scratch allocated here,
    once, as in bench.py's composites."""
    ones = torch.empty(x.shape, dtype=torch.bool, device=x.device)
    placed = torch.empty(x.shape, dtype=torch.uint8, device=x.device).view(-1, 8)
    shifts = _field_shifts(1, x.device)

    def packbits():
        torch.ne(x, 0, out=ones)
        torch.bitwise_left_shift(ones.view(torch.uint8).view(-1, 8), shifts, out=placed)
        return torch.sum(placed, dim=1, dtype=torch.uint8, out=out)

    return packbits


def torch_unpack(x: torch.Tensor, bits: int, signed: bool, out: torch.Tensor):
    """A function that computes torchops.unpackbits(x) or torchops.unpack(x, bits, signed=) of a
    1-D uint8 x into `out` (uint8, bool or int8, 8 // bits fields a byte) from PyTorch's ops on
    the device: each byte broadcast against its fields' shifts, then the field masked out, or,
    signed, moved to the top of an int8 and shifted back arithmetically (the sign extension)."""
    per_byte = 8 // bits
    fields = out.view(-1, per_byte)
    if signed:
        # Field k's top bit to bit 7: a left shift by 8 - bits - its shift.
        lefts = (8 - bits - _field_shifts(bits, x.device)).to(torch.int8)
        as_int8 = x.view(torch.int8).unsqueeze(-1)

        def unpack_signed():
            torch.bitwise_left_shift(as_int8, lefts, out=fields)
            return torch.bitwise_right_shift(fields, 8 - bits, out=fields)

        return unpack_signed
    shifts = _field_shifts(bits, x.device)
    column = x.unsqueeze(-1)
    fields = fields.view(torch.uint8)

    def unpack():
        torch.bitwise_right_shift(column, shifts, out=fields)
        return torch.bitwise_and(fields, (1 << bits) - 1, out=fields)

    return unpack


def _made_once(make):
    """f(x, y, out) of a composite made by make(x, out) (its scratch allocated there) on the first
    call with that out, then called again: the timed calls allocate nothing."""
    made = {}

    def call(x, y, out):
        if out.data_ptr() not in made:
            made[out.data_ptr()] = make(x, out)
        return made[out.data_ptr()]()

    return call


def _packing_cases(device, size, generator):
    for op, dtype, out_dtype, bits in PACKING:
        per_byte = 8 // bits
        # A packed byte's elements as one integer (packbits: 8 as an int64), for the bandwidth copies.
        lane = SAME_WIDTH_INT[per_byte]
        label = f"{str(dtype).removeprefix('torch.')} -> {str(out_dtype).removeprefix('torch.')}"
        if op == "packbits":
            x = torch.randint(0, 2, (size,), dtype=dtype, device=device, generator=generator)
            if dtype == torch.uint8:  # zeros and random non-zero bytes: every value's rule (non-zero is a 1)
                x *= torch.randint(1, 256, (size,), dtype=dtype, device=device, generator=generator)
            yield Case(size, label, op, x, None,
                       lambda x, y, out: torchops.packbits(x, out=out),
                       _made_once(torch_packbits),
                       lambda x, y, out, lane=lane: out.copy_(x.view(torch.uint8).view(lane)),
                       (size // per_byte,), out_dtype, lambda x=x: torchops.packbits(x.cpu()))
            continue
        x = torch.randint(0, 256, (size // per_byte,), dtype=torch.uint8, device=device, generator=generator)
        signed = out_dtype == torch.int8
        yield Case(size, label, op, x, None,
                   lambda x, y, out, bits=bits, signed=signed: _unpack(x, bits, signed, out),
                   _made_once(lambda x, out, bits=bits, signed=signed: torch_unpack(x, bits, signed, out)),
                   lambda x, y, out, lane=lane: out.view(torch.uint8).view(lane).copy_(x),
                   (size,), out_dtype,
                   lambda x=x, bits=bits, signed=signed: _unpack(x.cpu(), bits, signed).view(out_dtype))


def _unpack(x, bits, signed, out=None):
    """torchops's unpacking call of a case: unpackbits for 1-bit fields (a bool out: its bytes),
    else unpack."""
    if bits == 1:
        return torchops.unpackbits(x, out=None if out is None else out.view(torch.uint8))
    return torchops.unpack(x, bits, signed=signed, out=out)


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
                direction = "LEFT" if name == "left" else "RIGHT"
                yield Case(size, str(dtype).removeprefix("torch."), name, x, y, ours, builtin,
                           lambda x, y, out: torch.add(x, y, out=out), (size,), dtype,
                           lambda x=x, y=y, direction=direction: torchops.bitshift(x.cpu(), y.cpu(), direction))
        for dtype in SIGNBIT_DTYPES:
            x = torch.randn(size, device=device, generator=generator).to(dtype)
            as_int = x.view(SAME_WIDTH_INT[x.itemsize])
            yield Case(size, str(dtype).removeprefix("torch."), "signbit", x, None,
                       lambda x, y, out: torchops.signbit(x, out=out), lambda x, y, out: torch.signbit(x, out=out),
                       lambda x, y, out, as_int=as_int: torch.ne(as_int, 0, out=out), (size,), torch.bool,
                       lambda x=x: torchops.signbit(x.cpu()))
        yield from _packing_cases(device, size, generator)


def _checked_calls(case: Case):
    """The case's three calls, each into its own output, and whether torchops's output equals the
    builtin's and the CPU kernels' (after one call of each)."""
    outs = [torch.empty(case.out_shape, dtype=case.out_dtype, device=case.x.device) for _ in range(3)]
    contenders = (case.ours, case.builtin, case.bandwidth)
    calls = [lambda f=f, out=out: f(case.x, case.y, out) for f, out in zip(contenders, outs)]
    for call in calls:
        call()
    return calls, torch.equal(outs[0], outs[1]) and torch.equal(outs[0].cpu(), case.expected())


def run(device: str, quick: bool) -> int:
    """Measures and prints the device cases and the device targets; 0 when nothing mismatched."""
    device_module = getattr(torch, device, None)
    if device_module is None or not device_module.is_available():
        print(f"device benchmark: no {device} device on this machine; nothing measured")
        print("TARGETS\n" + targets.text(targets.evaluate("device", [], lambda r: "")))
        return 0
    rows, mismatched = [], []
    for case in _cases(device, quick):
        calls, matched = _checked_calls(case)
        if not matched:
            mismatched.append(f"{case.op} {case.dtype} {size_label(case.size)}")
            continue
        reps = 20 if case.size >= 256 * M else 100
        ours_ms, builtin_ms, bandwidth_ms = _median_ms(device_module, calls, reps)
        rows.append(dict(size=case.size, dtype=case.dtype, op=case.op, torchops_ms=ours_ms, torch_ms=builtin_ms,
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
