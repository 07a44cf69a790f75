"""On a CUDA device: every overload gives the CPU kernels' answers, on both of the device's
paths (the Triton loops, where Triton is installed, and the ATen loops), eager, compiled,
under vmap and opcheck.

Skipped, with the reason, where no CUDA device is present: CI has none, and runs the same
paths on CPU tensors instead (TORCHOPS_CPU_KERNELS=composite and =triton over the kernel
suites; tests/test_devices.py, tests/test_inductor_triton.py). TORCHOPS_TEST_DEVICE=cpu runs
this file on CPU tensors, to check the file itself on a machine without a GPU.
"""
import os
import re
import warnings

import numpy as np
import pytest
import torch
from torch._inductor.utils import run_and_get_code

import torchops
from conftest import (
    FLOAT_DTYPES, INT_DTYPES, OPERATION_IDS, OPERATIONS, dtype_id, every_8bit_pair, floats_from_bits,
    interesting_counts, interesting_values, make_tensor, random_values, special_float_patterns,
)
from torchops import _triton

DEVICE = os.environ.get("TORCHOPS_TEST_DEVICE", "cuda")
pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(DEVICE == "cuda" and not torch.cuda.is_available(), reason="needs a CUDA device"),
]
op = torch.ops.torchops


@pytest.fixture(params=["triton", "aten"], scope="module")
def device_path(request):
    """The device's Triton loops, then its ATen loops (the Triton ones taken out)."""
    if request.param == "triton":
        if DEVICE.upper() not in _triton.registered():
            pytest.skip(f"no Triton loops for {DEVICE} (Triton is not installed)")
        yield "triton"
        return
    keys = _triton.registered()
    _triton.unregister()
    try:
        yield "aten"
    finally:
        if keys:
            _triton.register(cpu="CPU" in keys)


def on_device(*tensors):
    return [t.to(DEVICE) for t in tensors]


def cycled(dtype, n):
    """x and y of n elements: the interesting values and counts, cycled."""
    values, counts = interesting_values(dtype), interesting_counts(dtype)
    return (make_tensor([values[i % len(values)] for i in range(n)], dtype),
            make_tensor([counts[i % len(counts)] for i in range(n)], dtype))


def assert_same(device_result, cpu_result):
    assert device_result.device.type == torch.device(DEVICE).type
    assert device_result.dtype == cpu_result.dtype and device_result.shape == cpu_result.shape
    assert torch.equal(device_result.cpu(), cpu_result)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8], ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_every_8bit_pair(device_path, dtype, direction, arithmetic):
    xs, counts = every_8bit_pair(dtype)
    x, y = make_tensor(xs, dtype), make_tensor(counts, dtype)
    assert_same(torchops.bitshift(*on_device(x, y), direction, arithmetic), torchops.bitshift(x, y, direction, arithmetic))
    x_device, = on_device(x)
    for count in range(-10, 300, 7):
        assert_same(torchops.bitshift(x_device, count, direction, arithmetic), torchops.bitshift(x, count, direction, arithmetic))


@pytest.mark.parametrize("dtype", [torch.int16, torch.uint16], ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_every_16bit_value(device_path, dtype, direction, arithmetic):
    low, high = torch.iinfo(dtype).min, torch.iinfo(dtype).max
    x = make_tensor(list(range(low, high + 1)), dtype)
    x_device, = on_device(x)
    for count in interesting_counts(dtype):
        y = make_tensor([count], dtype).expand(x.shape)
        assert_same(torchops.bitshift(x_device, *on_device(y), direction, arithmetic), torchops.bitshift(x, y, direction, arithmetic))


@pytest.mark.parametrize("dtype", [torch.int32, torch.uint32, torch.int64, torch.uint64], ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_wide_values_against_interesting_counts(device_path, dtype, direction, arithmetic):
    rng = np.random.default_rng(0)
    values = interesting_values(dtype) + random_values(dtype, 2000, rng)
    counts = interesting_counts(dtype)
    x = make_tensor([v for v in values for _ in counts], dtype)
    y = make_tensor([c for _ in values for c in counts], dtype)
    assert_same(torchops.bitshift(*on_device(x, y), direction, arithmetic), torchops.bitshift(x, y, direction, arithmetic))


PROMOTIONS = [  # (x dtype, y dtype, y 0-d)
    (torch.int8, torch.uint8, False), (torch.uint8, torch.int64, False), (torch.int16, torch.int8, False),
    (torch.int8, torch.int64, True), (torch.uint16, torch.int64, True), (torch.uint64, torch.int8, True),
]


@pytest.mark.parametrize("x_dtype,y_dtype,zero_dim", PROMOTIONS)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_promotion(device_path, x_dtype, y_dtype, zero_dim, direction, arithmetic):
    x = make_tensor(interesting_values(x_dtype), x_dtype)
    counts = interesting_counts(y_dtype)
    y = make_tensor(counts[len(counts) // 2], y_dtype) if zero_dim else make_tensor(
        [counts[i % len(counts)] for i in range(x.numel())], y_dtype)
    assert_same(torchops.bitshift(*on_device(x, y), direction, arithmetic), torchops.bitshift(x, y, direction, arithmetic))


def layouts(dtype):
    """(name, x, y) pairs of every layout kind: transposed, broadcast counts, sliced, channels_last."""
    base, counts = cycled(dtype, 6 * 35)
    image = base[:2 * 3 * 5 * 7].reshape(2, 3, 5, 7).contiguous(memory_format=torch.channels_last)
    return [
        ("transposed x", base.reshape(6, 35).t(), counts.reshape(35, 6)),
        ("count per row", base.reshape(6, 35), counts[:6].reshape(6, 1)),
        ("count per column", base.reshape(6, 35), counts[:35]),
        ("0-d count", base.reshape(6, 35), counts[3]),
        ("every other element", base[::2], counts[1::2]),
        ("channels_last, per-channel count", image, counts[:3].reshape(1, 3, 1, 1)),
    ]


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint16, torch.int32, torch.uint64], ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_layouts_out_and_in_place(device_path, dtype, direction, arithmetic):
    for name, x, y in layouts(dtype):
        x_device, y_device = on_device(x, y)
        expected = torchops.bitshift(x, y, direction, arithmetic)
        got = torchops.bitshift(x_device, y_device, direction, arithmetic)
        assert_same(got, expected)
        assert got.stride() == expected.stride(), name
        out = torch.empty((*expected.shape, 2), dtype=dtype, device=DEVICE)[..., 1]  # of the shape, not contiguous
        assert torchops.bitshift(x_device, y_device, direction, arithmetic, out=out) is out
        assert_same(out, expected)
        if x.shape == expected.shape:
            written = x_device.clone()
            (torchops.bitwise_left_shift_ if direction == "LEFT" else torchops.bitwise_right_shift_)(
                written, y_device, is_arithmetic=arithmetic)
            assert_same(written, expected)


def test_out_of_another_shape_is_resized_with_pytorchs_warning(device_path):
    x = make_tensor(list(range(-50, 50)), torch.int8)
    out = torch.empty(3, dtype=torch.int8, device=DEVICE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torchops.bitshift(*on_device(x), 3, "LEFT", out=out)
    assert any("resized" in str(w.message) for w in caught)
    assert_same(out, torchops.bitshift(x, 3, "LEFT"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + [torch.bool], ids=dtype_id)
def test_signbit(device_path, dtype):
    if dtype in (torch.float16, torch.bfloat16):
        x = floats_from_bits(list(range(1 << 16)), dtype)  # every pattern
    elif dtype.is_floating_point:
        x = floats_from_bits([bits for _, bits, _ in special_float_patterns(dtype)], dtype)
    elif dtype == torch.bool:
        x = torch.tensor([True, False, True])
    else:
        x = make_tensor(interesting_values(dtype), dtype)
    x_device, = on_device(x)
    assert_same(torchops.signbit(x_device), torchops.signbit(x))
    assert_same(torchops.signbit(x_device[::2]), torchops.signbit(x[::2]))
    out = torch.empty(x.numel(), dtype=torch.bool, device=DEVICE)
    assert_same(torchops.signbit(x_device, out=out), torchops.signbit(x))


@pytest.mark.parametrize("dtype", INT_DTYPES + [torch.bool], ids=dtype_id)
def test_bitwise_count(device_path, dtype):
    if dtype == torch.bool:
        x = torch.tensor([True, False, True])
    elif torch.iinfo(dtype).bits <= 16:  # every value
        x = torch.arange(torch.iinfo(dtype).min, torch.iinfo(dtype).max + 1).to(dtype)
    else:
        x = make_tensor(interesting_values(dtype) + random_values(dtype, 4096, np.random.default_rng(0)), dtype)
    x_device, = on_device(x)
    expected = torch.from_numpy(np.bitwise_count(x.numpy()))
    assert_same(torchops.bitwise_count(x_device), expected)
    assert_same(torchops.bitwise_count(x_device[::2]), expected[::2])
    out = torch.empty(x.numel(), dtype=torch.uint8, device=DEVICE)
    assert_same(torchops.bitwise_count(x_device, out=out), expected)


BAD_CALLS = [  # (what, call with tensors made on `device`)
    ("float x", lambda d: op.bitshift(torch.ones(3, device=d), torch.ones(3, dtype=torch.int8, device=d), "LEFT")),
    ("direction", lambda d: op.bitshift(torch.ones(3, dtype=torch.int8, device=d), 1, "Left")),
    ("out dtype", lambda d: op.bitshift.Scalar_out(torch.ones(3, dtype=torch.int8, device=d), 1, "LEFT",
                                                   out=torch.empty(3, dtype=torch.int16, device=d))),
    ("in place widens", lambda d: op.bitshift_(torch.ones(3, dtype=torch.int8, device=d),
                                               torch.ones(3, dtype=torch.int64, device=d), "LEFT")),
    ("no common dtype", lambda d: op.bitshift(torch.ones(3, dtype=torch.uint16, device=d),
                                              torch.ones(3, dtype=torch.int32, device=d), "LEFT")),
    ("shapes", lambda d: op.bitshift(torch.ones(3, dtype=torch.int8, device=d), torch.ones(2, dtype=torch.int8, device=d),
                                     "LEFT")),
    ("partial overlap", lambda d: (lambda b: op.bitshift.out(b[:-1], 1 + 0 * b[1:], "LEFT", out=b[1:]))(
        torch.ones(5, dtype=torch.int8, device=d))),
    ("complex signbit", lambda d: op.signbit(torch.ones(3, dtype=torch.complex64, device=d))),
    ("float bitwise_count", lambda d: op.bitwise_count(torch.ones(3, device=d))),
]


@pytest.mark.parametrize("what,call", BAD_CALLS, ids=[what for what, _ in BAD_CALLS])
def test_errors_are_the_cpu_kernels(device_path, what, call):
    with pytest.raises(Exception) as on_cpu:
        call("cpu")
    with pytest.raises(type(on_cpu.value)) as on_the_device:
        call(DEVICE)
    assert str(on_the_device.value) == str(on_cpu.value)


def test_a_tensor_on_another_device_is_refused():
    if DEVICE == "cpu":
        pytest.skip("needs a second device")
    with pytest.raises(RuntimeError, match=r"^torchops\.bitshift: y is on device cpu but x is on device cuda:0; "):
        op.bitshift(torch.ones(3, dtype=torch.int8, device=DEVICE), torch.ones(3, dtype=torch.int8), "LEFT")


def chain(x, y, f):
    shifted = op.bitshift(op.bitshift(x, y, "RIGHT", False), 1, "LEFT")
    return shifted + 1, op.bitshift(x, y, "RIGHT"), op.signbit(f * 2), op.bitwise_count(x + 1)


def test_compiled_graphs_are_fused_and_exact(device_path):
    x, y = cycled(torch.int32, 721)
    f = floats_from_bits([bits for _, bits, _ in special_float_patterns(torch.float32)], torch.float32)
    got, code = run_and_get_code(torch.compile(chain, fullgraph=True), *on_device(x, y, f))
    assert not re.search(r"torch\.ops\.torchops\.\w+\.\w+\(", "\n".join(code))
    for result, expected in zip(got, chain(x, y, f)):
        assert_same(result, expected)


def test_vmap(device_path):
    x = make_tensor(interesting_values(torch.int16), torch.int16).reshape(1, -1).repeat(4, 1)
    y = make_tensor([[c] for c in interesting_counts(torch.int16)[:4]], torch.int16)
    shift = torch.vmap(lambda a, b: op.bitshift(a, b, "RIGHT", False))
    assert_same(shift(*on_device(x, y)), shift(x, y))


def test_opcheck(device_path):
    x_device, y_device = on_device(*cycled(torch.int16, 100))
    for overload, args, kwargs in [
        (op.bitshift.default, (x_device, y_device, "RIGHT", False), {}),
        (op.bitshift.Scalar, (x_device, 3, "LEFT"), {}),
        (op.bitshift.out, (x_device, y_device, "LEFT"), {"out": torch.empty_like(x_device)}),
        (op.bitshift_.Scalar, (x_device.clone(), 2, "RIGHT"), {}),
        (op.signbit.default, (x_device.float(),), {}),
        (op.bitwise_count.default, (x_device,), {}),
        # An out of the result's shape, as bitshift.out's: torch 2.14 and 2.15's AOT dispatch cannot copy
        # back into an out= the op resizes (test_torch_integration._aot_dispatch_takes_a_resized_out).
        (op.bitwise_count.out, (x_device,), {"out": torch.empty_like(x_device, dtype=torch.uint8)}),
    ]:
        torch.library.opcheck(overload, args, kwargs)
