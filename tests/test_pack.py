"""torchops.packbits, unpackbits, pack and unpack: NumPy's np.packbits and np.unpackbits bit
for bit, and fields of 2 and 4 bits (docs/semantics.md), against NumPy and the model
(tests/model.py) at every kernel level, on both call paths: every integer dtype and bool,
every dim (negative, None, a 0-d x), both bit orders, counts, empty tensors, sizes around the
vector widths, layouts, out=, every message of the contract; NumPy's own tests of packbits
and unpackbits (numpy/lib/tests/test_packbits.py), translated, and the places where we
differ from NumPy on purpose, shown as our behaviour."""

import functools
import re
import warnings
from itertools import chain

import numpy as np
import pytest
import torch

import model
import torchops
from conftest import (
    INT_DTYPES, NUMPY_DTYPES, OTHER_DEVICES_PATH, OUT_KINDS, assert_unchanged, dtype_id, make_out,
    only_compiled_levels, random_values, snapshot,
)

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = [pytest.mark.usefixtures("call_path"), pytest.mark.kernels]

ops = torch.ops.torchops
DTYPES = INT_DTYPES + [torch.bool]
BITORDERS = ("big", "little")
# The field widths pack and unpack take, and the fields a byte holds of each.
BITS = (1, 2, 4)
# Sizes of the packed dim: every one up to 70 (each vector width's tails, for elements of
# 1 to 8 bytes), and around the wider vectors' multiples. The other devices' kernels (under
# TORCHOPS_CPU_KERNELS, where a Triton call costs milliseconds) have no vector loops: their
# blocks' edges only.
SIZES = (list(range(1, 71)) + [127, 128, 129, 191, 192, 193, 255, 256, 257, 1023, 1024, 1025]
         if OTHER_DEVICES_PATH is None else [1, 2, 7, 8, 9, 63, 64, 65, 1023, 1024, 1025])
FUNCTIONS = ("packbits", "unpackbits", "pack", "unpack")
# The dtypes the sweeps take: all, or on the other devices' paths a dtype of each width and
# signedness, and bool (their kernels are one body for every dtype).
SWEPT_DTYPES = DTYPES if OTHER_DEVICES_PATH is None else [torch.int8, torch.uint16, torch.int32, torch.uint64,
                                                          torch.bool]


def call(api, name, *args, **kwargs):
    """torchops.<name>(...) (api "python": the typed function) or its op through torch.ops
    (api "ops": the .out overload when out= is given, which must return out)."""
    if api == "python":
        return getattr(torchops, name)(*args, **kwargs)
    overload = getattr(ops, name)
    if kwargs.get("out") is None:
        kwargs.pop("out", None)
        return overload.default(*args, **kwargs)
    returned = overload.out(*args, **kwargs)
    assert returned is kwargs["out"], f"torch.ops.torchops.{name}.out did not return out"
    return returned


@pytest.fixture(params=["python", "ops"])
def api(request):
    """The four functions through one API: ``api.packbits(x, ...)``."""
    if request.param == "python" and not all(hasattr(torchops, name) for name in FUNCTIONS):
        pytest.skip("the typed functions torchops.packbits, unpackbits, pack and unpack are not in torchops/ops.py")
    return type("Api", (), {name: staticmethod(functools.partial(call, request.param, name)) for name in FUNCTIONS}
                | {"name": request.param})


def random_tensor(dtype, shape, rng, zeros=0.3):
    """Values of `dtype` over its whole range (bool: both), about `zeros` of them 0, so
    that packbits' nonzero rule sees both."""
    if dtype == torch.bool:
        return torch.from_numpy(np.asarray(rng.random(shape) >= zeros))
    low, high = model.value_range(dtype)
    values = rng.integers(low, high, size=shape, endpoint=True, dtype=NUMPY_DTYPES[dtype])
    values[rng.random(shape) < zeros] = 0
    return torch.from_numpy(np.asarray(values))


def random_bytes(shape, rng):
    return torch.from_numpy(rng.integers(0, 256, size=shape, dtype=np.uint8))


def assert_equal(result, expected, what=""):
    """result (a tensor) holds expected (a NumPy array): dtype, shape and values."""
    expected = np.asarray(expected)
    assert result.numpy().dtype == expected.dtype, f"{what}: {result.dtype}, expected {expected.dtype}"
    assert tuple(result.shape) == expected.shape, f"{what}: shape {tuple(result.shape)}, expected {expected.shape}"
    if not np.array_equal(result.numpy(), expected):
        wrong = np.argwhere(result.numpy() != expected)[:5].tolist()
        raise AssertionError(f"{what}: differs at {wrong}: {result.numpy()[tuple(np.array(wrong).T)]} "
                             f"against {expected[tuple(np.array(wrong).T)]}")


def numpy_axis(x, dim):
    """NumPy's axis for our dim: a 0-d x is one element, which NumPy packs flattened."""
    return None if x.dim() == 0 else dim


# --------------------------------------------------------------------------
# The model and NumPy agree (the two references of the tests below)


def test_the_model_is_numpys_packbits_and_unpackbits(rng):
    for dtype in DTYPES:
        for shape in [(), (0,), (1,), (9,), (3, 0), (0, 4), (2, 3, 17)]:
            x = random_tensor(dtype, shape, rng).numpy()
            for dim in [None, *range(-len(shape), len(shape))]:
                axis = None if x.ndim == 0 else dim
                for bitorder in BITORDERS:
                    packed = np.packbits(x, axis=axis, bitorder=bitorder)
                    np.testing.assert_array_equal(model.packbits_model(x, dim, bitorder), packed)
                    for count in [None, 0, 1, 7, 8, 9, 30, -1, -8]:
                        try:
                            expected = np.unpackbits(packed, axis=axis, count=count, bitorder=bitorder)
                        except ValueError:
                            with pytest.raises(ValueError):
                                model.unpackbits_model(packed, axis, count, bitorder)
                            continue
                        if count and not packed.size:
                            continue  # NumPy leaves the bits it appends to an empty x unwritten
                        np.testing.assert_array_equal(model.unpackbits_model(packed, axis, count, bitorder), expected)
    # fields of 2 and 4 bits, which NumPy does not have: unpacking gives back what was packed
    for bits in (2, 4):
        fields = rng.integers(0, 2**bits, size=(3, 11), dtype=np.uint8)
        for dim in (0, 1, None):
            for bitorder in BITORDERS:
                packed = model.pack_model(fields, bits, dim, bitorder)
                count = fields.size if dim is None else fields.shape[dim]
                np.testing.assert_array_equal(model.unpack_model(packed, bits, dim, count, bitorder),
                                              fields.reshape(-1) if dim is None else fields)


# --------------------------------------------------------------------------
# packbits and unpackbits are NumPy's


def shapes_and_dims():
    """Shapes (0-d, empty, odd sizes, several dims) with every dim each takes, and None."""
    for shape in [(), (0,), (13,), (3, 0), (0, 5), (4, 9), (2, 3, 17)]:
        for dim in [None, *range(-max(len(shape), 1), max(len(shape), 1))]:
            yield shape, dim


SHAPES_AND_DIMS = list(shapes_and_dims())


def fields_along(x, dim, per_byte):
    """The fields x's bytes hold along dim (all of x for None or a 0-d x)."""
    return per_byte * (x.numel() if dim is None or x.dim() == 0 else x.shape[dim])


def counts_for(available):
    """None, 0, counts below, at and past the end, and negative ones that leave some."""
    counts = [None, 0, 1, available - 1, available, available + 5, -1, -available]
    return list(dict.fromkeys(c for c in counts if c is None or c >= 0 or available + c >= 0))


def test_packbits_is_numpys(api, cpu_capability, rng):
    for dtype in SWEPT_DTYPES:
        for shape, dim in SHAPES_AND_DIMS:
            x = random_tensor(dtype, shape, rng)
            for bitorder in BITORDERS:
                result = api.packbits(x, dim, bitorder)
                expected = np.packbits(x.numpy(), axis=numpy_axis(x, dim), bitorder=bitorder)
                assert_equal(result, expected, f"packbits({dtype_id(dtype)} of {shape}, {dim}, {bitorder!r})")
                assert result.is_contiguous()


def test_unpackbits_is_numpys(api, cpu_capability, rng):
    for shape, dim in SHAPES_AND_DIMS:
        x = random_bytes(shape, rng)
        available = fields_along(x, dim, 8)
        for count in counts_for(available):
            for bitorder in BITORDERS:
                result = api.unpackbits(x, dim=dim, count=count, bitorder=bitorder)
                expected = np.unpackbits(x.numpy(), axis=numpy_axis(x, dim), count=count, bitorder=bitorder)
                if available == 0 and count:
                    # NumPy leaves the bits past an empty x unwritten; ours are zeros
                    assert expected.shape == tuple(result.shape)
                    expected = np.zeros_like(expected)
                assert_equal(result, expected, f"unpackbits(uint8 of {shape}, {dim}, {count}, {bitorder!r})")
                assert result.is_contiguous()


def test_sizes_around_the_vector_widths(api, cpu_capability, rng):
    for dtype in SWEPT_DTYPES:
        for size in SIZES:
            x = random_tensor(dtype, (size + 1,), rng)
            for start in (0, 1):  # and an unaligned start: the same values one element in
                view = x[start:start + size]
                for bitorder in BITORDERS:
                    assert_equal(api.packbits(view, -1, bitorder), np.packbits(view.numpy(), bitorder=bitorder),
                                 f"packbits({dtype_id(dtype)} of {size} from {start}, {bitorder!r})")
                bits, bitorder = (2, "big") if size % 2 else (4, "little")
                assert_equal(api.pack(view, bits, -1, bitorder), model.pack_model(view, bits, -1, bitorder),
                             f"pack({dtype_id(dtype)} of {size} from {start}, {bits}, {bitorder!r})")


def test_unpacking_sizes_around_the_vector_widths(api, cpu_capability, rng):
    for size in SIZES:
        x = random_bytes((size + 1,), rng)
        for start in (0, 1):
            view = x[start:start + size]
            for bitorder in BITORDERS:
                assert_equal(api.unpackbits(view, -1, None, bitorder), np.unpackbits(view.numpy(), bitorder=bitorder),
                             f"unpackbits({size} bytes from {start}, {bitorder!r})")
            for bits in (2, 4):
                count = size * (8 // bits) - size % 3  # some fields dropped from the end
                expected = model.unpack_model(view, bits, -1, count, "big", bits == 4)
                assert_equal(api.unpack(view, bits, -1, count, "big", bits == 4), expected,
                             f"unpack({size} bytes from {start}, {bits}, count {count})")


def layouts(dtype, rng):
    """x in layouts other than contiguous (values: random_tensor's), by name."""
    base = random_tensor(dtype, (6, 5, 20), rng)
    four = random_tensor(dtype, (2, 3, 4, 5), rng)
    return {
        "transposed": base.transpose(0, 2),
        "sliced": base[:, 1:, ::2],
        "every_third_element": base[..., ::3],
        "offset": base[1:, 1:, 1:],
        "expanded": base[:, :1].expand(6, 5, 20),
        "expanded_along_the_last_dim": base[:, :, :1].expand(6, 5, 20),
        "permuted": base.permute(2, 0, 1),
        "channels_last": four.contiguous(memory_format=torch.channels_last),
        "reversed_strides": four.permute(3, 2, 1, 0),
    }


@pytest.mark.parametrize("layout", list(layouts(torch.int8, np.random.default_rng(0))))
def test_layouts_of_x(api, layout, cpu_capability, rng):
    for dtype in (torch.int8, torch.int32, torch.int64, torch.bool):
        x = layouts(dtype, rng)[layout]
        for dim in (None, *range(-x.dim(), x.dim())):
            what = f"of {dtype_id(dtype)} {layout} {tuple(x.shape)} strides {x.stride()} along {dim}"
            assert_equal(api.packbits(x, dim, "little"), model.packbits_model(x, dim, "little"), "packbits " + what)
            assert_equal(api.pack(x, 2, dim, "big"), model.pack_model(x, 2, dim, "big"), "pack " + what)
    x = layouts(torch.uint8, rng)[layout]
    for dim in (None, *range(-x.dim(), x.dim())):
        what = f"of a {layout} {tuple(x.shape)} strides {x.stride()} along {dim}"
        assert_equal(api.unpackbits(x, dim, 5, "big"), np.unpackbits(x.numpy(), axis=dim, count=5),
                     "unpackbits " + what)
        assert_equal(api.unpack(x, 4, dim, None, "little", True), model.unpack_model(x, 4, dim, None, "little", True),
                     "unpack " + what)


# --------------------------------------------------------------------------
# pack and unpack: fields of 1, 2 and 4 bits


def test_every_byte_round_trips(api, cpu_capability):
    x = torch.arange(256).to(torch.uint8)
    for bits in BITS:
        for bitorder in BITORDERS:
            what = f"{bits} bits, {bitorder!r}"
            fields = api.unpack(x, bits, bitorder=bitorder)
            assert_equal(fields, model.unpack_model(x, bits, bitorder=bitorder), what)
            assert_equal(api.pack(fields, bits, bitorder=bitorder), x.numpy(), what)
            # signed: each field sign-extended from `bits` bits (bits=1: 0 or -1)
            signed = api.unpack(x, bits, -1, None, bitorder, True)
            values = fields.numpy().astype(np.int16)
            assert_equal(signed, np.where(values >= 2 ** (bits - 1), values - 2**bits, values).astype(np.int8), what)
            # their low bits are the fields: packed again, the same bytes
            assert_equal(api.pack(signed, bits, bitorder=bitorder), x.numpy(), what)
            # one byte a row, its fields along dim 1
            rows = api.unpack(x.reshape(256, 1), bits, dim=1, bitorder=bitorder)
            assert_equal(rows, fields.numpy().reshape(256, 8 // bits), what)
            assert_equal(api.pack(rows, bits, 1, bitorder), x.numpy().reshape(256, 1), what)


def every_value(dtype):
    if dtype == torch.bool:
        return torch.tensor([False, True])
    info = torch.iinfo(dtype)
    return torch.arange(info.min, info.max + 1).to(dtype)


def test_pack_is_the_model_on_every_dtype(api, cpu_capability, rng):
    for dtype in SWEPT_DTYPES:
        x = random_tensor(dtype, (3, 13), rng)
        for bits in BITS:
            for dim in (None, 0, 1, -1):
                bitorder = BITORDERS[(bits + (dim or 0)) % 2]
                assert_equal(api.pack(x, bits, dim, bitorder), model.pack_model(x, bits, dim, bitorder),
                             f"pack({dtype_id(dtype)}, {bits}, {dim}, {bitorder!r})")
    # every value of the narrow dtypes: a field is the value's low bits, whatever its sign or size
    for dtype in (torch.int8, torch.uint8, torch.bool):
        x = every_value(dtype)
        for bits in BITS:
            low_bits = x.to(torch.int64) & (2**bits - 1)
            result = api.pack(x, bits, -1, "little")
            assert_equal(result, model.pack_model(x, bits, -1, "little"), f"pack(every {dtype_id(dtype)}, {bits})")
            assert torch.equal(result, api.pack(low_bits, bits, -1, "little"))


def test_unpack_is_the_model(api, cpu_capability, rng):
    x = random_bytes((4, 7), rng)
    for bits in BITS:
        for dim in (None, 0, 1, -2):
            for count in counts_for(fields_along(x, dim, 8 // bits)):
                for signed in (False, True):
                    bitorder = BITORDERS[(bits + (count or 0)) % 2]
                    assert_equal(api.unpack(x, bits, dim, count, bitorder, signed),
                                 model.unpack_model(x, bits, dim, count, bitorder, signed),
                                 f"unpack(uint8 (4, 7), {bits}, {dim}, {count}, {bitorder!r}, {signed})")


def test_the_contracts_examples(api, cpu_capability):
    # pack takes a field's low bits, two's complement: -1 in 4 bits is 15 (1111)
    assert api.pack(torch.tensor([-1]), 4).tolist() == [0b1111_0000]
    assert api.pack(torch.tensor([-1]), 4, bitorder="little").tolist() == [0b0000_1111]
    # pack with bits=1 takes the low bit (2 packs a 0), packbits any nonzero (2 packs a 1)
    two = torch.tensor([2, 1, -2, 3], dtype=torch.int8)
    assert api.pack(two, 1).tolist() == [0b0101_0000]
    assert api.packbits(two).tolist() == [0b1111_0000]
    # the first element in the most significant bits ("big"), or the least ("little")
    assert api.pack(torch.tensor([1, 2, 3], dtype=torch.uint8), 2).tolist() == [0b01_10_11_00]
    assert api.pack(torch.tensor([1, 2, 3], dtype=torch.uint8), 2, bitorder="little").tolist() == [0b00_11_10_01]
    # unpack, signed: 4-bit fields -8..7, 1-bit fields 0 or -1
    assert api.unpack(torch.tensor([0xF3, 0x80], dtype=torch.uint8), 4, signed=True).tolist() == [-1, 3, -8, 0]
    assert api.unpack(torch.tensor([0b1010_0000], dtype=torch.uint8), 1, count=3, signed=True).tolist() == [-1, 0, -1]
    # count: the first fields, or zeros past the end; a negative count drops from the end
    byte = torch.tensor([0b1110_0100], dtype=torch.uint8)
    assert api.unpack(byte, 2, count=6).tolist() == [3, 2, 1, 0, 0, 0]
    assert api.unpack(byte, 2, count=-1).tolist() == [3, 2, 1]
    # a 0-d x is one element: dims -1, 0 and None, a 1-d result
    for dim in (-1, 0, None):
        assert api.packbits(torch.tensor(7), dim).tolist() == [0b1000_0000]
        assert api.unpack(torch.tensor(0x5A, dtype=torch.uint8), 4, dim).tolist() == [5, 10]
    # dim=None packs x flattened, row-major
    grid = torch.tensor([[1, 0, 1], [1, 1, 0]], dtype=torch.uint8)
    assert api.packbits(grid, None).tolist() == [0b1011_1000]
    assert api.packbits(grid).tolist() == [[0b1010_0000], [0b1100_0000]]


@only_compiled_levels  # the CPU entries' split of the result across threads
def test_thread_count_does_not_change_results(api, restore_num_threads, cpu_capability, rng):
    x = random_tensor(torch.int16, (200, 701), rng)  # beyond the grain: split across threads
    b = random_bytes((200, 701), rng)
    results = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        results.append([api.packbits(x, 0), api.packbits(x, 1), api.pack(x.t(), 4, 0), api.unpack(b, 2, 1, None),
                        api.unpackbits(b.t(), 1, 555)])
    for one, two in zip(*results):
        assert torch.equal(one, two)
    assert_equal(results[0][0], np.packbits(x.numpy(), axis=0))
    assert_equal(results[0][1], np.packbits(x.numpy(), axis=1))
    assert_equal(results[0][4], np.unpackbits(b.numpy().T, axis=1, count=555))


# --------------------------------------------------------------------------
# out=


@pytest.mark.parametrize("out_kind", OUT_KINDS)
def test_out(api, out_kind, cpu_capability, rng, capfd):
    x, b = random_tensor(torch.int16, (3, 20), rng), random_bytes((3, 4), rng)
    for name, args, expected in [
        ("packbits", (x, -1, "little"), model.packbits_model(x, -1, "little")),
        ("unpackbits", (b, 0, 5, "big"), model.unpackbits_model(b, 0, 5, "big")),
        ("pack", (x, 2, 0, "big"), model.pack_model(x, 2, 0, "big")),
        ("unpack", (b, 4, -1, 7, "little", True), model.unpack_model(b, 4, -1, 7, "little", True)),
    ]:
        out = make_out(out_kind, expected.shape, torch.from_numpy(expected).dtype, 99)
        stride, pointer = out.stride(), out.data_ptr()
        before = snapshot(*args)
        capfd.readouterr()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert getattr(api, name)(*args, out=out) is out
        # PyTorch's resize warning: a Python warning, or printed by C++ through torch.ops
        warned = [str(w.message) for w in caught] + capfd.readouterr().err.splitlines()
        assert_equal(out, expected, f"{name} into an out {out_kind}")
        if out_kind in ("right_shape", "right_shape_strided"):
            assert (out.stride(), out.data_ptr()) == (stride, pointer), f"{name}: a right-shaped out was reallocated"
        else:
            assert out.is_contiguous(), f"{name}: a resized out is contiguous"
        resized = [message for message in warned if re.search(r"resized", message)]
        assert bool(resized) == (out_kind == "wrong_shape"), (name, warned)
        assert_unchanged(before)


# --------------------------------------------------------------------------
# Refusals: the contract's words exactly, and nothing written or resized


def pack_dtype_message(name, dtype):
    return (f"torchops.{name}: x must be an integer or bool tensor (int8, int16, int32, int64, uint8, uint16, uint32, "
            f"uint64, bool), got {dtype}; NumPy's packbits refuses floats too: pack x != 0, or a float's bits "
            "through x.view(torch.int32)")


def out_dtype_message(name, got, result):
    return (f"torchops.{name}: out has dtype {got} but the result has dtype {result}; out= does not convert, "
            f"pass an out of dtype {result}")


def u8(*shape):
    return torch.arange(int(np.prod(shape))).to(torch.uint8).reshape(shape)


def i32(*shape):
    return torch.arange(int(np.prod(shape)), dtype=torch.int32).reshape(shape) - 3


def out(*shape, dtype=torch.uint8):
    """An out of `shape` (another shape than the result's: a call would resize it)."""
    return torch.full(shape, 7, dtype=dtype)


# (id, function, make() -> (args, kwargs), exception, message)
REFUSALS = [
    # x: None (with an out, so that torch.ops has a tensor to dispatch on), a dtype not taken
    *[(f"{name}-x-none", name, lambda extra=extra: ((None, *extra), {"out": out(4)}), TypeError,
       f"torchops.{name}: x must be a tensor, got None")
      for name, extra in [("packbits", ()), ("unpackbits", ()), ("pack", (2,)), ("unpack", (2,))]],
    *[(f"{name}-{dtype_id(dtype)}", name, lambda name=name, dtype=dtype, extra=extra: ((torch.ones(2, 3, dtype=dtype),
                                                                                        *extra), {}),
       TypeError, pack_dtype_message(name, dtype_id(dtype)))
      for name, extra in [("packbits", ()), ("pack", (4,))]
      for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.complex64)],
    *[(f"{name}-{dtype_id(dtype)}", name, lambda name=name, dtype=dtype, extra=extra: ((torch.ones(2, 3, dtype=dtype),
                                                                                        *extra), {}),
       TypeError, f"torchops.{name}: x must be a uint8 tensor of packed bytes, got {dtype_id(dtype)}")
      for name, extra in [("unpackbits", ()), ("unpack", (4,))]
      for dtype in (torch.int8, torch.uint16, torch.int64, torch.bool, torch.float32)],
    # bits
    *[(f"{name}-bits-{bits}", name, lambda name=name, bits=bits, x=x: ((x(2, 3), bits), {}), ValueError,
       f"torchops.{name}: bits must be 1, 2 or 4, got {bits}")
      for name, x in [("pack", i32), ("unpack", u8)] for bits in (3, 0, 8, -1, 16)],
    # bitorder
    *[(f"{name}-bitorder-{bitorder!r}", name, lambda name=name, bitorder=bitorder, x=x, extra=extra:
       ((x(2, 3), *extra), {"bitorder": bitorder}), ValueError,
       f"torchops.{name}: bitorder must be 'big' or 'little', got '{bitorder}'")
      for name, x, extra in [("packbits", i32, ()), ("unpackbits", u8, ()), ("pack", i32, (2,)), ("unpack", u8, (4,))]
      for bitorder in ("b", "l", "Big", "", "little ", "bigg")],
    # dim
    *[(f"{name}-dim-{dim}-of-{len(shape)}-d", name, lambda name=name, dim=dim, shape=shape, x=x, extra=extra:
       ((x(*shape), *extra), {"dim": dim}), IndexError,
       f"torchops.{name}: dim {dim} is out of range for a {len(shape)}-d x (expected a dim in "
       f"[{-max(len(shape), 1)}, {max(len(shape), 1) - 1}], or None)")
      for name, x, extra in [("packbits", i32, ()), ("unpackbits", u8, ()), ("pack", i32, (2,)), ("unpack", u8, (4,))]
      for shape, dim in [((2, 3), 2), ((2, 3), -3), ((), 1), ((), -2), ((5,), 1), ((0, 4), 7)]],
    # count: more dropped than there are; the dim as written, made non-negative
    ("unpackbits-count-along-dim-0", "unpackbits", lambda: ((u8(2, 2), 0, -17), {}), ValueError,
     "torchops.unpackbits: count -17 drops more than the 16 bits along dim 0"),
    ("unpackbits-count-along-dim-minus-2", "unpackbits", lambda: ((u8(2, 2), -2, -17), {}), ValueError,
     "torchops.unpackbits: count -17 drops more than the 16 bits along dim 0"),
    ("unpackbits-count-flattened", "unpackbits", lambda: ((u8(2, 3), None, -49), {}), ValueError,
     "torchops.unpackbits: count -49 drops more than the 48 bits of the flattened x"),
    ("unpackbits-count-empty-dim", "unpackbits", lambda: ((u8(3, 0),), {"count": -1}), ValueError,
     "torchops.unpackbits: count -1 drops more than the 0 bits along dim 1"),
    ("unpack-count-along-dim-0", "unpack", lambda: ((u8(2, 3), 4, 0, -5), {}), ValueError,
     "torchops.unpack: count -5 drops more than the 4 fields along dim 0"),
    ("unpack-count-zero-dim", "unpack", lambda: ((u8(), 2), {"count": -5, "signed": True}), ValueError,
     "torchops.unpack: count -5 drops more than the 4 fields along dim 0"),
    ("unpack-count-flattened", "unpack", lambda: ((u8(3, 1), 1, None, -25), {}), ValueError,
     "torchops.unpack: count -25 drops more than the 24 fields of the flattened x"),
    # out: its dtype exactly the result's (uint8; int8 for a signed unpack), no conversion
    ("packbits-out-int8", "packbits", lambda: ((i32(2, 3),), {"out": out(2, 1, dtype=torch.int8)}), RuntimeError,
     out_dtype_message("packbits", "int8", "uint8")),
    ("unpackbits-out-bool-empty", "unpackbits", lambda: ((u8(2),), {"out": out(0, dtype=torch.bool)}), RuntimeError,
     out_dtype_message("unpackbits", "bool", "uint8")),
    ("pack-out-int64-other-shape", "pack", lambda: ((i32(2, 3), 2), {"out": out(5, 5, dtype=torch.int64)}),
     RuntimeError, out_dtype_message("pack", "int64", "uint8")),
    ("unpack-out-uint8-signed", "unpack", lambda: ((u8(2), 4), {"signed": True, "out": out(4)}), RuntimeError,
     out_dtype_message("unpack", "uint8", "int8")),
    ("unpack-out-int8-unsigned", "unpack", lambda: ((u8(2), 4), {"out": out(4, dtype=torch.int8)}), RuntimeError,
     out_dtype_message("unpack", "int8", "uint8")),
    # the order of the checks: x's dtype, bits, bitorder, dim, count, out; an out of another
    # shape is not resized by a refused call
    ("pack-dtype-before-bits", "pack", lambda: ((torch.ones(3), 3), {"bitorder": "b", "out": out(9)}), TypeError,
     pack_dtype_message("pack", "float32")),
    ("unpack-dtype-before-bits", "unpack", lambda: ((i32(3), 3), {"dim": 4}), TypeError,
     "torchops.unpack: x must be a uint8 tensor of packed bytes, got int32"),
    ("pack-bits-before-bitorder", "pack", lambda: ((i32(3), 3), {"bitorder": "b", "dim": 4}), ValueError,
     "torchops.pack: bits must be 1, 2 or 4, got 3"),
    ("unpack-bitorder-before-dim", "unpack", lambda: ((u8(3), 2), {"bitorder": "b", "dim": 4, "count": -100}),
     ValueError, "torchops.unpack: bitorder must be 'big' or 'little', got 'b'"),
    ("unpackbits-dim-before-count", "unpackbits", lambda: ((u8(3),), {"dim": 1, "count": -100, "out": out(9)}),
     IndexError, "torchops.unpackbits: dim 1 is out of range for a 1-d x (expected a dim in [-1, 0], or None)"),
    ("unpack-count-before-out", "unpack", lambda: ((u8(3), 4), {"count": -7, "out": out(2, 9, dtype=torch.float32)}),
     ValueError, "torchops.unpack: count -7 drops more than the 6 fields along dim 0"),
    ("packbits-dim-before-out", "packbits", lambda: ((i32(3),), {"dim": 1, "out": out(2, dtype=torch.int8)}),
     IndexError, "torchops.packbits: dim 1 is out of range for a 1-d x (expected a dim in [-1, 0], or None)"),
]


@pytest.mark.parametrize("name, make, exception, message", [case[1:] for case in REFUSALS],
                         ids=[case[0] for case in REFUSALS])
def test_refusals_say_the_contracts_words_and_write_nothing(api, name, make, exception, message):
    args, kwargs = make()
    before = snapshot(*args, *kwargs.values())
    with pytest.raises(exception) as info:
        getattr(api, name)(*args, **kwargs)
    assert str(info.value) == message
    assert_unchanged(before)


def test_refusal_ids_are_unique():
    ids = [case[0] for case in REFUSALS]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]


def overlapping_calls():
    """(function, args, kwargs, tensors to snapshot): an out that shares memory with x."""
    base = u8(32)
    signed_base = u8(8)
    return [
        ("unpackbits", (base[:2],), {"out": base[:16]}, [base]),  # out starts at x
        ("unpackbits", (base[8:10],), {"out": base[:16]}, [base]),  # x inside out
        ("unpackbits", (base[:4],), {"count": 4, "out": base[:4]}, [base]),  # out is x
        ("pack", (base[:8], 4), {"out": base[2:6]}, [base]),
        ("packbits", (base[:16].view(torch.int8),), {"out": base[8:10]}, [base]),  # out is x's bytes as uint8
        ("unpack", (signed_base[:2], 4), {"signed": True, "out": signed_base.view(torch.int8)[1:5]}, [signed_base]),
    ]


def test_an_out_that_overlaps_x_is_refused(api):
    for name, args, kwargs, tensors in overlapping_calls():
        before = snapshot(*tensors)
        with pytest.raises(RuntimeError, match=rf"^torchops\.{name}: (?i:.*(overlap|single memory location))"):
            getattr(api, name)(*args, **kwargs)
        assert_unchanged(before)


def test_an_inference_tensor_out_is_refused_before_anything_is_written(api):
    with torch.inference_mode():
        written = torch.full((2, 1), 7, dtype=torch.uint8)
        wrong_dtype = torch.full((2, 1), 7, dtype=torch.int8)
    x = i32(2, 3)
    for out_, message in [
        (written, "torchops.packbits: out is an inference tensor, which cannot be written outside "
                  "torch.inference_mode() (PyTorch's rule: 'Inplace update to inference tensor outside InferenceMode "
                  "is not allowed'); write into a clone"),
        (wrong_dtype, out_dtype_message("packbits", "int8", "uint8")),  # the dtype is checked first
    ]:
        with pytest.raises(RuntimeError) as info:
            api.packbits(x, out=out_)
        assert str(info.value) == message
        assert out_.tolist() == [[7], [7]]
    with torch.inference_mode():  # inside, it is written
        assert api.packbits(x, out=written) is written
    assert written.tolist() == np.packbits(x.numpy(), axis=-1).tolist()


def test_bitorder_of_another_type_is_refused(api):
    # NumPy raises TypeError for bitorder=10. torch.ops matches the arguments against the schema
    # first (PyTorch's RuntimeError); the typed functions refuse it with a TypeError, as they
    # refuse a direction that is not a str.
    x = u8(3)
    with pytest.raises(TypeError if api.name == "python" else RuntimeError, match="bitorder"):
        api.unpackbits(x, bitorder=10)
    assert x.tolist() == [0, 1, 2]


# --------------------------------------------------------------------------
# NumPy's own tests (numpy/lib/tests/test_packbits.py, NumPy 2.4), translated: np.packbits(a,
# axis=k) is torchops.packbits(a, dim=k). Where NumPy's defaults or rules differ from ours on
# purpose, the test shows ours:
#   * NumPy's axis defaults to None (x flattened), our dim to -1, the last (for a 1-d x
#     they agree): NumPy's calls without an axis pass dim=None here;
#   * NumPy (2.4) reads bitorder by its first letters ('bigg' is 'big'); we take exactly
#     'big' or 'little';
#   * np.unpackbits leaves the bits it appends past an empty x unwritten (whatever the
#     memory held); ours are zeros, as past the end of a non-empty x.
# NumPy loops over the dtype codes '?bBhHiIlLqQ': bool and the integer dtypes; these tests
# over SWEPT_DTYPES.


def as_tensor(array, dtype):
    return torch.from_numpy(np.ascontiguousarray(np.asarray(array).astype(np.bool_ if dtype == torch.bool else
                                                                          NUMPY_DTYPES[dtype])))


def test_numpy_packbits(api, cpu_capability):
    # Copied from the docstring.
    a = [[[1, 0, 1], [0, 1, 0]],
         [[1, 1, 0], [0, 0, 1]]]
    for dtype in SWEPT_DTYPES:
        b = api.packbits(as_tensor(a, dtype), dim=-1)
        assert_equal(b, np.array([[[160], [64]], [[192], [32]]], dtype=np.uint8))
    with pytest.raises(TypeError):
        api.packbits(torch.tensor(a, dtype=torch.float64))


EMPTY_SHAPES = [(0,), (10, 20, 0), (10, 0, 20), (0, 10, 20), (20, 0, 0), (0, 20, 0), (0, 0, 20), (0, 0, 0)]


def test_numpy_packbits_empty(api, cpu_capability):
    for dtype in SWEPT_DTYPES:
        for shape in EMPTY_SHAPES:
            a = torch.empty(shape, dtype=dtype)
            b = api.packbits(a, dim=None)
            assert b.dtype == torch.uint8 and b.shape == (0,)
            # ours, by default along the last dim
            assert api.packbits(a).shape == (*shape[:-1], (shape[-1] + 7) // 8)


def test_numpy_packbits_empty_with_axis(api, cpu_capability):
    # Original shapes and lists of packed shapes for different axes.
    shapes = [
        ((0,), [(0,)]),
        ((10, 20, 0), [(2, 20, 0), (10, 3, 0), (10, 20, 0)]),
        ((10, 0, 20), [(2, 0, 20), (10, 0, 20), (10, 0, 3)]),
        ((0, 10, 20), [(0, 10, 20), (0, 2, 20), (0, 10, 3)]),
        ((20, 0, 0), [(3, 0, 0), (20, 0, 0), (20, 0, 0)]),
        ((0, 20, 0), [(0, 20, 0), (0, 3, 0), (0, 20, 0)]),
        ((0, 0, 20), [(0, 0, 20), (0, 0, 20), (0, 0, 3)]),
        ((0, 0, 0), [(0, 0, 0), (0, 0, 0), (0, 0, 0)]),
    ]
    for dtype in SWEPT_DTYPES:
        for in_shape, out_shapes in shapes:
            for ax, out_shape in enumerate(out_shapes):
                b = api.packbits(torch.empty(in_shape, dtype=dtype), dim=ax)
                assert b.dtype == torch.uint8 and b.shape == out_shape


# test data large enough for 16 byte vectorization
LARGE = np.array([1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0,
                  0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1,
                  1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0,
                  1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1,
                  1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1,
                  1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1,
                  1, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1,
                  0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1,
                  1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0,
                  1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1,
                  1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0,
                  0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1,
                  1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0,
                  1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0,
                  1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0]).repeat(3)
LARGE_PACKED = [252, 127, 192, 3, 254, 7, 252, 0, 7, 31, 240, 0, 28, 1, 255, 252,
                113, 248, 3, 255, 192, 28, 15, 192, 28, 126, 0, 224, 127, 255,
                227, 142, 7, 31, 142, 63, 28, 126, 56, 227, 240, 0, 227, 128, 63,
                224, 14, 56, 252, 112, 56, 255, 241, 248, 3, 240, 56, 224, 112,
                63, 255, 255, 199, 224, 14, 0, 31, 143, 192, 3, 255, 199, 0, 1,
                255, 224, 1, 255, 252, 126, 63, 0, 1, 192, 252, 14, 63, 0, 15,
                199, 252, 113, 255, 3, 128, 56, 252, 14, 7, 0, 113, 255, 255, 142, 56, 227,
                129, 248, 227, 129, 199, 31, 128]
LARGE_AXIS_0 = [[190, 186, 178, 178, 150, 215, 87, 83, 83, 195, 199, 206, 204, 204, 140, 140, 136, 136, 8, 40, 105,
                 107, 75, 74, 88],
                [72, 216, 248, 241, 227, 195, 202, 90, 90, 83, 83, 119, 127, 109, 73, 64, 208, 244, 189, 45, 41, 104,
                 122, 90, 18],
                [113, 120, 248, 216, 152, 24, 60, 52, 182, 150, 150, 150, 146, 210, 210, 246, 255, 255, 223, 151, 21,
                 17, 17, 131, 163],
                [214, 210, 210, 64, 68, 5, 5, 1, 72, 88, 92, 92, 78, 110, 39, 181, 149, 220, 222, 218, 218, 202, 234,
                 170, 168],
                [0, 128, 128, 192, 80, 112, 48, 160, 160, 224, 240, 208, 144, 128, 160, 224, 240, 208, 144, 144, 176,
                 240, 224, 192, 128]]
LARGE_AXIS_1 = [[252, 127, 192, 0], [7, 252, 15, 128], [240, 0, 28, 0], [255, 128, 0, 128], [192, 31, 255, 128],
                [142, 63, 0, 0], [255, 240, 7, 0], [7, 224, 14, 0], [126, 0, 224, 0], [255, 255, 199, 0],
                [56, 28, 126, 0], [113, 248, 227, 128], [227, 142, 63, 0], [0, 28, 112, 0], [15, 248, 3, 128],
                [28, 126, 56, 0], [56, 255, 241, 128], [240, 7, 224, 0], [227, 129, 192, 128], [255, 255, 254, 0],
                [126, 0, 224, 0], [3, 241, 248, 0], [0, 255, 241, 128], [128, 0, 255, 128], [224, 1, 255, 128],
                [248, 252, 126, 0], [0, 7, 3, 128], [224, 113, 248, 0], [0, 252, 127, 128], [142, 63, 224, 0],
                [224, 14, 63, 0], [7, 3, 128, 0], [113, 255, 255, 128], [28, 113, 199, 0], [7, 227, 142, 0],
                [14, 56, 252, 0]]


@pytest.mark.parametrize("bitorder", BITORDERS)
def test_numpy_packbits_large(api, bitorder, cpu_capability):
    for dtype in SWEPT_DTYPES:
        arr = as_tensor(LARGE, dtype)
        b = api.packbits(arr, dim=None, bitorder=bitorder)
        assert b.dtype == torch.uint8
        if bitorder == "big":
            assert b.tolist() == LARGE_PACKED
        # equal for size being multiple of 8
        assert api.unpackbits(b, bitorder=bitorder)[:-4].tolist() == LARGE.tolist()

        # check last byte of different remainders (16 byte vectorization)
        b = [api.packbits(arr[:-i], dim=None)[-1].item() for i in range(1, 16)]
        assert b == [128, 128, 128, 31, 30, 28, 24, 16, 0, 0, 0, 199, 198, 196, 192]

        arr = arr.reshape(36, 25)
        assert api.packbits(arr, dim=0).tolist() == LARGE_AXIS_0
        assert api.packbits(arr, dim=1).tolist() == LARGE_AXIS_1
        # NumPy lists the tables of arr.T.copy() again: they are these, transposed. Ours also
        # without the copy (a transposed x).
        for transposed in (arr.t().contiguous(), arr.t()):
            assert api.packbits(transposed, dim=0).tolist() == np.array(LARGE_AXIS_1).T.tolist()
            assert api.packbits(transposed, dim=1).tolist() == np.array(LARGE_AXIS_0).T.tolist()

    # result is the same if input is multiplied with a nonzero value
    rng = np.random.default_rng(8637)
    for dtype in INT_DTYPES:
        rnd = np.array(random_values(dtype, LARGE.size, rng), dtype=object)
        rnd[rnd == 0] = 1
        arr = torch.from_numpy((LARGE * rnd).astype(NUMPY_DTYPES[dtype]))
        b = api.packbits(arr, dim=-1)
        assert api.unpackbits(b)[:-4].tolist() == LARGE.tolist()

    with pytest.raises(TypeError):
        api.packbits(torch.from_numpy(LARGE.astype(float)))


def test_numpy_packbits_very_large(api, cpu_capability):
    # test some with a larger arrays gh-8637 (NumPy: every s in range(950, 1050); a sample here)
    for s in range(950, 1050, 7):
        x = torch.ones((200, s), dtype=torch.bool)
        assert_equal(api.packbits(x, dim=1), np.packbits(x.numpy(), axis=1))


def test_numpy_unpackbits(api, cpu_capability):
    # Copied from the docstring.
    a = torch.tensor([[2], [7], [23]], dtype=torch.uint8)
    b = api.unpackbits(a, dim=1)
    assert b.dtype == torch.uint8
    assert b.tolist() == [[0, 0, 0, 0, 0, 0, 1, 0],
                          [0, 0, 0, 0, 0, 1, 1, 1],
                          [0, 0, 0, 1, 0, 1, 1, 1]]


def test_numpy_pack_unpack_order(api, cpu_capability):
    a = torch.tensor([[2], [7], [23]], dtype=torch.uint8)
    b = api.unpackbits(a, dim=1)
    assert b.dtype == torch.uint8
    b_little = api.unpackbits(a, dim=1, bitorder="little")
    b_big = api.unpackbits(a, dim=1, bitorder="big")
    assert torch.equal(b, b_big)
    assert torch.equal(a, api.packbits(b_little, dim=1, bitorder="little"))
    assert torch.equal(b.flip(1), b_little)
    assert torch.equal(a, api.packbits(b_big, dim=1, bitorder="big"))
    with pytest.raises(ValueError):
        api.unpackbits(a, bitorder="r")
    # bitorder=10: test_bitorder_of_another_type_is_refused


def test_numpy_unpackbits_empty(api, cpu_capability):
    b = api.unpackbits(torch.empty((0,), dtype=torch.uint8))
    assert b.dtype == torch.uint8 and b.shape == (0,)


def test_numpy_unpackbits_empty_with_axis(api, cpu_capability):
    # Lists of packed shapes for different axes and unpacked shapes.
    shapes = [
        ([(0,)], (0,)),
        ([(2, 24, 0), (16, 3, 0), (16, 24, 0)], (16, 24, 0)),
        ([(2, 0, 24), (16, 0, 24), (16, 0, 3)], (16, 0, 24)),
        ([(0, 16, 24), (0, 2, 24), (0, 16, 3)], (0, 16, 24)),
        ([(3, 0, 0), (24, 0, 0), (24, 0, 0)], (24, 0, 0)),
        ([(0, 24, 0), (0, 3, 0), (0, 24, 0)], (0, 24, 0)),
        ([(0, 0, 24), (0, 0, 24), (0, 0, 3)], (0, 0, 24)),
        ([(0, 0, 0), (0, 0, 0), (0, 0, 0)], (0, 0, 0)),
    ]
    for in_shapes, out_shape in shapes:
        for ax, in_shape in enumerate(in_shapes):
            b = api.unpackbits(torch.empty(in_shape, dtype=torch.uint8), dim=ax)
            assert b.dtype == torch.uint8 and b.shape == out_shape


def test_numpy_unpackbits_large(api, cpu_capability):
    # test all possible numbers via comparison to already tested packbits
    d = torch.arange(277).to(torch.uint8)  # NumPy's np.arange(277, dtype=np.uint8) wraps the same way
    assert torch.equal(api.packbits(api.unpackbits(d)), d)
    assert torch.equal(api.packbits(api.unpackbits(d[::2])), d[::2])
    d = d.repeat(3, 1)  # np.tile(d, (3, 1))
    assert torch.equal(api.packbits(api.unpackbits(d, dim=1), dim=1), d)
    d = d.t().contiguous()
    assert torch.equal(api.packbits(api.unpackbits(d, dim=0), dim=0), d)


class TestNumpyCount:
    x = np.array([
        [1, 0, 1, 0, 0, 1, 0],
        [0, 1, 1, 1, 0, 0, 0],
        [0, 0, 1, 0, 0, 1, 1],
        [1, 1, 0, 0, 0, 1, 1],
        [1, 0, 1, 0, 1, 0, 1],
        [0, 0, 1, 1, 1, 0, 0],
        [0, 1, 0, 1, 0, 1, 0],
    ], dtype=np.uint8)
    padded1 = np.zeros(57, dtype=np.uint8)
    padded1[:49] = x.ravel()
    padded1b = np.zeros(57, dtype=np.uint8)
    padded1b[:49] = x[::-1].copy().ravel()
    padded2 = np.zeros((9, 9), dtype=np.uint8)
    padded2[:7, :7] = x

    @pytest.mark.parametrize("bitorder", BITORDERS)
    def test_roundtrip(self, api, bitorder, cpu_capability):
        # NumPy parametrizes over the counts (and packs again for each); one loop here
        packed = api.packbits(torch.from_numpy(self.x), dim=None, bitorder=bitorder)
        for count in chain(range(58), range(-1, -57, -1)):
            # one extra zero of padding for a negative count
            cutoff = count - 1 if count < 0 else count
            # test complete invertibility of packbits and unpackbits with count
            unpacked = api.unpackbits(packed, count=count, bitorder=bitorder)
            assert_equal(unpacked, self.padded1[:cutoff], f"count {count}")

    @pytest.mark.parametrize("kwargs", [{}, {"count": None}])
    def test_count(self, api, kwargs):
        packed = api.packbits(torch.from_numpy(self.x), dim=None)
        assert_equal(api.unpackbits(packed, **kwargs), self.padded1[:-1])

    @pytest.mark.parametrize("bitorder", BITORDERS)
    def test_roundtrip_axis(self, api, bitorder, cpu_capability):
        x = torch.from_numpy(self.x)
        for count in chain(range(8), range(-1, -9, -1)):
            # delta==-1 when count<0 because one extra zero of padding
            cutoff = count - 1 if count < 0 else count
            packed0 = api.packbits(x, dim=0, bitorder=bitorder)
            unpacked0 = api.unpackbits(packed0, dim=0, count=count, bitorder=bitorder)
            assert_equal(unpacked0, self.padded2[:cutoff, :self.x.shape[1]], f"count {count}")

            packed1 = api.packbits(x, dim=1, bitorder=bitorder)
            unpacked1 = api.unpackbits(packed1, dim=1, count=count, bitorder=bitorder)
            assert_equal(unpacked1, self.padded2[:self.x.shape[0], :cutoff], f"count {count}")

    @pytest.mark.parametrize("kwargs", [{}, {"count": None}, {"bitorder": "little"},
                                        {"bitorder": "little", "count": None}, {"bitorder": "big"},
                                        {"bitorder": "big", "count": None}])
    def test_axis_count(self, api, kwargs):
        x = torch.from_numpy(self.x)
        packed0 = api.packbits(x, dim=0)
        unpacked0 = api.unpackbits(packed0, dim=0, **kwargs)
        if kwargs.get("bitorder", "big") == "big":
            assert_equal(unpacked0, self.padded2[:-1, :self.x.shape[1]])
        else:
            assert_equal(unpacked0.flip(0), self.padded2[:-1, :self.x.shape[1]])

        packed1 = api.packbits(x, dim=1)
        unpacked1 = api.unpackbits(packed1, dim=1, **kwargs)
        if kwargs.get("bitorder", "big") == "big":
            assert_equal(unpacked1, self.padded2[:self.x.shape[0], :-1])
        else:
            assert_equal(unpacked1.flip(1), self.padded2[:self.x.shape[0], :-1])

    def test_bad_count(self, api):
        x = torch.from_numpy(self.x)
        packed0 = api.packbits(x, dim=0)
        with pytest.raises(ValueError):
            api.unpackbits(packed0, dim=0, count=-9)
        packed1 = api.packbits(x, dim=1)
        with pytest.raises(ValueError):
            api.unpackbits(packed1, dim=1, count=-9)
        packed = api.packbits(x, dim=None)
        with pytest.raises(ValueError):
            api.unpackbits(packed, count=-57)


# Where we differ from NumPy on purpose


def test_dim_defaults_to_the_last_where_numpys_axis_defaults_to_none(api):
    x = torch.tensor([[1, 0, 1], [0, 1, 1]], dtype=torch.uint8)
    assert_equal(api.packbits(x), np.packbits(x.numpy(), axis=-1))
    assert_equal(api.packbits(x, dim=None), np.packbits(x.numpy()))
    packed = torch.tensor([[0xA0], [0x0F]], dtype=torch.uint8)
    assert_equal(api.unpackbits(packed), np.unpackbits(packed.numpy(), axis=-1))
    assert_equal(api.unpackbits(packed, dim=None), np.unpackbits(packed.numpy()))


def test_bitorder_is_exactly_big_or_little(api):
    x = u8(2, 3)
    for bitorder in ("bigg", "b", "l", "BIG", "Little"):
        with pytest.raises(ValueError, match="bitorder must be 'big' or 'little'"):
            api.packbits(x, bitorder=bitorder)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_bits_appended_past_an_empty_x_are_zeros(api, cpu_capability):
    x = torch.empty((2, 0), dtype=torch.uint8)
    assert api.unpackbits(x, dim=1, count=5).tolist() == [[0] * 5] * 2
    assert api.unpack(x, 4, dim=1, count=3, signed=True).tolist() == [[0] * 3] * 2
    assert api.unpackbits(torch.empty(0, dtype=torch.uint8), dim=None, count=9).tolist() == [0] * 9
