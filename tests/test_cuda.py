"""On a CUDA device: every overload gives the CPU kernels' answers, on both of the device's
paths (the compute ops' Triton kernels, where Triton is installed, and their ATen kernels),
eager, compiled, under vmap and opcheck.

The cases of every op are made from what an op declares and from tests/calls.py, so that a
new op is swept here with no line of its own: each overload on every dtype of its
declaration (torchops/_contract.py), with the arguments of each of its OPCHECK_SAMPLES and
operands that cover the dtype (every value of the 8- and 16-bit dtypes, every pair of 8-bit
values for two operands; a packing op's x has them along the dim it packs); the errors of
BAD_CALLS; opcheck and vmap of a sample of each overload; a compiled graph of TYPED_CALLS.
The shift's own rules (Python-int counts, counts at the edges of the range, promotion,
layouts) have cases of their own below.

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
from calls import BAD_CALLS, OPCHECK_SAMPLES, TYPED_CALLS
from conftest import (
    OPERATION_IDS, OPERATIONS, argument_templates, as_bits, covering_operands, dtype_id, floats_from_bits,
    interesting_counts, interesting_values, make_tensor, operands_for, random_values, special_float_patterns,
)
from torchops import _triton
from torchops._contract import OVERLOADS, Packing, PackingCall, SearchCall, declaration_of, op_name

DEVICE = os.environ.get("TORCHOPS_TEST_DEVICE", "cuda")
pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(DEVICE == "cuda" and not torch.cuda.is_available(), reason="needs a CUDA device"),
]
op = torch.ops.torchops


@pytest.fixture(params=["triton", "aten"], scope="module")
def device_path(request):
    """The device's Triton compute kernels, then its ATen ones (the Triton ones taken out)."""
    if request.param == "triton":
        if DEVICE.upper() not in _triton.registered():
            pytest.skip(f"no Triton compute kernels for {DEVICE} (Triton is not installed)")
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


def assert_same(device_result, cpu_result, what="", layout=True):
    """The same dtype, shape, values and, for a result the op laid out (`layout`: not an out=
    or x it was given whole), strides: a later view or C++ kernel relies on them."""
    assert device_result.device.type == torch.device(DEVICE).type, what
    assert device_result.dtype == cpu_result.dtype and device_result.shape == cpu_result.shape, what
    assert not layout or device_result.stride() == cpu_result.stride(), \
        f"{what}: strides {device_result.stride()}, the CPU's {cpu_result.stride()}"
    assert torch.equal(device_result.cpu(), cpu_result), what


# --------------------------------------------------------------------------
# Every overload on every dtype its op declares


def call(overload, template, tensors):
    """The overload called with `template`'s arguments, `tensors` in its Nones; returns what
    it wrote (x in place, or out, made here of the declared result dtype and shape) or returned."""
    operands = iter(tensors)
    args = [next(operands) if a is None else a for a in template]
    if torch.Tag.out in overload.tags:
        checked = declaration_of(overload).check(op_name(overload), *args)
        if isinstance(checked, SearchCall):  # an out per result, by name
            names = declaration_of(overload).outs
            outs = {name: torch.empty(shape, dtype=dtype, device=tensors[0].device)
                    for name, (dtype, shape) in zip(names, checked.results)}
            returned = overload(*args, **outs)
            returned = returned if isinstance(returned, tuple) else (returned,)
            assert all(r is o for r, o in zip(returned, outs.values())), f"{overload} did not return its outs"
            return torch.cat([o.flatten().to(torch.int64) for o in outs.values()])
        if isinstance(checked, PackingCall):
            dtype, shape = checked.dtype, checked.shape
        else:
            dtype, shape = checked, torch.broadcast_shapes(*(t.shape for t in tensors))
        out = torch.empty(shape, dtype=dtype, device=tensors[0].device)
        assert overload(*args, out=out) is out, f"{overload} did not return out"
        return out
    result = overload(*args)
    if isinstance(result, tuple):  # hamming_topk's values and indices, as one tensor to compare
        return torch.cat([r.flatten().to(torch.int64) for r in result])
    if torch.Tag.inplace in overload.tags:
        assert result is args[0], f"{overload} did not return x"
    return result


SWEEPS = [(overload, dtype) for overload in OVERLOADS for dtype in declaration_of(overload).dtypes]


def along_packed_dim(overload, template, values):
    """A packing op's x: the covering values along the template's dim (the schema's default
    where the template stops before it), of the fewest dims that have that dim."""
    where = [argument.name for argument in overload._schema.arguments].index("dim")
    dim = template[where] if where < len(template) else -1
    if dim is None:
        return values
    shape = [1] * (dim + 1 if dim >= 0 else -dim)
    shape[dim] = values.numel()
    return values.reshape(shape)


@pytest.mark.parametrize("overload,dtype", SWEEPS, ids=[f"{o}-{dtype_id(d)}" for o, d in SWEEPS])
def test_every_overload_on_every_declared_dtype(device_path, overload, dtype):
    packing = isinstance(declaration_of(overload), Packing)
    for template in argument_templates(overload):
        tensors = covering_operands(dtype, template.count(None))
        if packing:  # x alone, its values along the packed dim
            tensors = [along_packed_dim(overload, template, tensors[0])]
        tensors = list(operands_for(overload, tensors))  # a search op's codes
        # Every other element along every dim (the packed one too).
        for layout, view in [("contiguous", lambda t: t),
                             ("every other element", lambda t: t[(slice(None, None, 2),) * t.dim()])]:
            # Fresh copies on each side: an in-place overload writes its x.
            expected = call(overload, template, [view(t.clone()) for t in tensors])
            got = call(overload, template, [view(t.to(DEVICE, copy=True)) for t in tensors])
            assert got.device.type == torch.device(DEVICE).type, f"{overload} {template} {layout}: on {got.device}"
            assert (got.dtype, got.shape, got.stride()) == (expected.dtype, expected.shape, expected.stride()), \
                f"{overload} {template} {layout}"
            # as_bits: where the result is a float, NaN != NaN and the bits are the answer.
            got, expected = got.cpu().flatten(), expected.flatten()
            mismatched = (as_bits(got) != as_bits(expected)).nonzero().flatten()[:5]
            # A packing op's result elements are not its operands' (they have other shapes).
            operands = "" if packing else f", operands {[view(t)[mismatched].tolist() for t in tensors]}"
            assert not len(mismatched), (
                f"{overload} {template} {layout} on {dtype_id(dtype)}: the {DEVICE} result differs from the CPU's "
                f"at {mismatched.tolist()}{operands}: {got[mismatched].tolist()} against "
                f"{expected[mismatched].tolist()}")


# --------------------------------------------------------------------------
# The shift's own rules: Python-int counts, counts at the edges of the range, promotion,
# layouts, out= and in place of every kind


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8], ids=dtype_id)
@pytest.mark.parametrize("direction,arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_every_8bit_value_with_python_int_counts(device_path, dtype, direction, arithmetic):
    x = torch.arange(torch.iinfo(dtype).min, torch.iinfo(dtype).max + 1).to(dtype)
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


def test_promoted_operands_of_other_layouts_give_the_cpu_kernels_layout(device_path):
    # The CPU kernels lay a promoted result out by the converted copies of its operands: an
    # expanded or broadcast operand of another dtype counts as dense there.
    def operands(device):  # made on the device: moving a view there would make it dense
        return [(torch.arange(5, dtype=torch.uint8, device=device).reshape(1, 5).expand(5, 5),
                 torch.arange(25, dtype=torch.int8, device=device).reshape(5, 5).t()),
                (torch.arange(5, dtype=torch.int64, device=device).reshape(1, 5).t(),
                 torch.zeros(1, 1, dtype=torch.int32, device=device).expand(5, 1))]

    for (a, b), (a_device, b_device) in zip(operands("cpu"), operands(DEVICE)):
        expected = torchops.bitshift(a, b, "LEFT")
        assert_same(torchops.bitshift(a_device, b_device, "LEFT"), expected)
        out = torch.empty(0, dtype=expected.dtype, device=DEVICE)  # resized as the CPU kernels resize it
        assert_same(torchops.bitshift(a_device, b_device, "LEFT", out=out), expected)


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
        assert_same(out, expected, layout=False)
        if x.shape == expected.shape:
            written = x_device.clone()
            (torchops.bitwise_left_shift_ if direction == "LEFT" else torchops.bitwise_right_shift_)(
                written, y_device, is_arithmetic=arithmetic)
            assert_same(written, expected, layout=False)


def test_out_of_another_shape_is_resized_with_pytorchs_warning(device_path):
    x = make_tensor(list(range(-50, 50)), torch.int8)
    out = torch.empty(3, dtype=torch.int8, device=DEVICE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torchops.bitshift(*on_device(x), 3, "LEFT", out=out)
    assert any("resized" in str(w.message) for w in caught)
    assert_same(out, torchops.bitshift(x, 3, "LEFT"))


# --------------------------------------------------------------------------
# Errors, opcheck, vmap and torch.compile of every overload


@pytest.mark.parametrize("row", BAD_CALLS, ids=[row.id for row in BAD_CALLS])
def test_errors_are_the_cpu_kernels(device_path, row):
    with pytest.raises(Exception) as on_cpu:
        row.call(*row.tensors)
    with pytest.raises(type(on_cpu.value)) as on_the_device:
        row.call(*on_device(*row.tensors))
    assert str(on_the_device.value) == str(on_cpu.value), f"tests/calls.py's BAD_CALLS row {row.id}"


def test_partial_overlap_is_the_cpu_kernels_error(device_path):
    # Aliasing, which BAD_CALLS's separate tensors cannot express: out overlaps x in part.
    def overlapping(device):
        base = torch.ones(5, dtype=torch.int8, device=device)
        return op.bitshift.out(base[:-1], 1 + 0 * base[1:], "LEFT", out=base[1:])

    with pytest.raises(Exception) as on_cpu:
        overlapping("cpu")
    with pytest.raises(type(on_cpu.value)) as on_the_device:
        overlapping(DEVICE)
    assert str(on_the_device.value) == str(on_cpu.value)


def test_a_tensor_on_another_device_is_refused():
    if DEVICE == "cpu":
        pytest.skip("needs a second device")
    with pytest.raises(RuntimeError, match=r"^torchops\.bitshift: y is on device cpu but x is on device cuda:0; "):
        op.bitshift(torch.ones(3, dtype=torch.int8, device=DEVICE), torch.ones(3, dtype=torch.int8), "LEFT")


def every_overload(x, y, f):
    """tests/calls.py's TYPED_CALLS in one graph (they reach every overload), each result
    used by an ATen op that Inductor fuses with it."""
    results = [typed(x, y, f) for _, typed, _ in TYPED_CALLS]
    return [tuple(r + 1 for r in result) if isinstance(result, tuple) else result + 1 for result in results]


def test_compiled_graphs_are_fused_and_exact(device_path):
    x, y = cycled(torch.int32, 721)
    f = floats_from_bits([bits for _, bits, _ in special_float_patterns(torch.float32)], torch.float32)
    got, code = run_and_get_code(torch.compile(every_overload, fullgraph=True), *on_device(x, y, f))
    # Every op is generated inline but hamming_topk, whose lowering calls its kernel (a top-k
    # over a database is no pointwise or reduction IR: it keeps k candidates, not N).
    assert not re.search(r"torch\.ops\.torchops\.(?!hamming_topk)\w+\.\w+\(", "\n".join(code))
    expected = every_overload(x, y, f)
    assert len(got) == len(expected)
    for (name, _, _), result, want in zip(TYPED_CALLS, got, expected):
        # Inductor lays out its own buffers, by device: the values are torchops's.
        for one, wanted in zip(result, want) if isinstance(want, tuple) else [(result, want)]:
            assert_same(one, wanted, f"tests/calls.py's TYPED_CALLS row {name!r}", layout=False)


def one_sample_of_each_overload():
    """tests/calls.py's first OPCHECK_SAMPLES row of each overload that does not resize an out
    (torch 2.14 and 2.15's AOT dispatch cannot copy back into an out= the op resizes:
    test_torch_integration._aot_dispatch_takes_a_resized_out)."""
    samples = {}
    for sample in OPCHECK_SAMPLES:
        if "resize" not in sample[0]:
            samples.setdefault(sample[1], sample)
    return list(samples.values())


SAMPLES = one_sample_of_each_overload()


def sample_on(device, sample):
    """(args, kwargs) of an OPCHECK_SAMPLES row, its tensors made on `device`."""
    _, _, make_args, *make_kwargs = sample

    def moved(value):
        if not isinstance(value, torch.Tensor):
            return value
        return value.detach().to(device, copy=True).requires_grad_(value.requires_grad)

    kwargs = make_kwargs[0]() if make_kwargs else {}
    return [moved(a) for a in make_args()], {key: moved(value) for key, value in kwargs.items()}


@pytest.mark.parametrize("sample", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_opcheck(device_path, sample):
    args, kwargs = sample_on(DEVICE, sample)
    torch.library.opcheck(sample[1], args, kwargs)


FUNCTIONAL_SAMPLES = [s for s in SAMPLES if not s[1]._schema.is_mutable]


@pytest.mark.parametrize("sample", FUNCTIONAL_SAMPLES, ids=[s[0] for s in FUNCTIONAL_SAMPLES])
def test_vmap(device_path, sample):
    def batched(device):
        # A batch of two examples, each the sample's tensors (the batching rule is what runs).
        args, _ = sample_on(device, sample)
        where = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]

        def example(*tensors):
            merged = list(args)
            for i, tensor in zip(where, tensors):
                merged[i] = tensor
            return sample[1](*merged)

        return torch.vmap(example)(*[torch.stack([args[i], args[i]]) for i in where])

    got, expected = batched(DEVICE), batched("cpu")
    for one, wanted in zip(got, expected) if isinstance(expected, tuple) else [(got, expected)]:
        assert_same(one, wanted, sample[0])
