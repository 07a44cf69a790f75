"""torchops.bitwise_count: NumPy 2's np.bitwise_count (the 1 bits of |x|, as uint8) for
every integer dtype and bool, against NumPy and the model (every value of the 8- and 16-bit
dtypes, samples of the wider ones) at every kernel level; layouts, sizes around the vector
widths, out=, threads, refusals and autograd."""

import warnings

import numpy as np
import pytest
import torch

import model
import torchops
from conftest import (
    INT_DTYPES, OUT_KINDS, SIGNED_DTYPES, assert_unchanged, dtype_id, interesting_values, make_out, make_tensor,
    random_values, snapshot,
)

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = [pytest.mark.usefixtures("call_path"), pytest.mark.kernels]

DTYPES = INT_DTYPES + [torch.bool]
SMALL_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.uint16, torch.bool]
WIDE_DTYPES = [torch.int32, torch.int64, torch.uint32, torch.uint64]
# Sizes around every vector width (16 to 64 bytes of 1- to 8-byte elements), and one that
# TensorIterator splits across threads, with an odd tail.
SIZES = sorted({0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 3 * 32768 + 5})


def every_value(dtype):
    if dtype == torch.bool:
        return torch.tensor([False, True])
    info = torch.iinfo(dtype)
    return torch.arange(info.min, info.max + 1, dtype=torch.int64).to(dtype)


def numpy_count(x: torch.Tensor) -> np.ndarray:
    """np.bitwise_count of the same values (NumPy has no bfloat16, but every dtype here)."""
    return np.bitwise_count(x.contiguous().numpy())


def check(result: torch.Tensor, x: torch.Tensor) -> None:
    assert result.dtype == torch.uint8
    assert result.shape == x.shape
    expected = numpy_count(x)
    np.testing.assert_array_equal(result.numpy(), expected)
    np.testing.assert_array_equal(expected, model.bitwise_count_model(x))  # NumPy and the model agree


@pytest.mark.parametrize("api", ["python", "ops"])
@pytest.mark.parametrize("dtype", SMALL_DTYPES, ids=dtype_id)
def test_every_value_of_the_small_dtypes(api, dtype, cpu_capability):
    x = every_value(dtype)
    check(torchops.bitwise_count(x) if api == "python" else torch.ops.torchops.bitwise_count(x), x)


@pytest.mark.parametrize("dtype", WIDE_DTYPES, ids=dtype_id)
def test_wide_dtypes_edges_and_samples(dtype, rng, cpu_capability):
    values = interesting_values(dtype) + random_values(dtype, 4000, rng)
    values += [1 << k for k in range(torch.iinfo(dtype).bits - (1 if dtype.is_signed else 0))]
    x = make_tensor(values, dtype)
    check(torchops.bitwise_count(x), x)


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=dtype_id)
def test_the_most_negative_value_has_one_bit(dtype, cpu_capability):
    # |INT_MIN| = 2**(n-1), which the signed dtype cannot hold: its count is 1, as NumPy's.
    x = torch.tensor([torch.iinfo(dtype).min, -1, torch.iinfo(dtype).max], dtype=dtype)
    assert torchops.bitwise_count(x).tolist() == [1, 1, torch.iinfo(dtype).bits - 1]


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=dtype_id)
def test_twos_complement_count_through_the_unsigned_view(dtype, rng):
    # docs/semantics.md: JAX's lax.population_count counts a negative value's two's-complement
    # bits; viewing x as the unsigned dtype of its width gives that count.
    x = make_tensor(random_values(dtype, 500, rng), dtype)
    unsigned = {1: torch.uint8, 2: torch.uint16, 4: torch.uint32, 8: torch.uint64}[x.element_size()]
    result = torchops.bitwise_count(x.view(unsigned))
    np.testing.assert_array_equal(result.numpy(), np.bitwise_count(x.numpy().view(f"u{x.element_size()}")))
    bits = x.element_size() * 8
    assert result.tolist() == [(value % (1 << bits)).bit_count() for value in x.tolist()]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_sizes_around_the_vector_widths(dtype, size, rng, cpu_capability):
    x = make_tensor(random_values(dtype, size, rng), dtype) if dtype != torch.bool else \
        torch.from_numpy(rng.integers(0, 2, size).astype(bool))
    check(torchops.bitwise_count(x), x)
    # An unaligned start: the same values one element in.
    if size > 1:
        check(torchops.bitwise_count(x[1:]), x[1:])


def _layouts(dtype):
    generator = torch.Generator().manual_seed(3)
    base = torch.randint(-(2**62), 2**62, (6, 5, 4, 7), generator=generator).to(dtype)
    six = torch.randint(-(2**62), 2**62, (2, 1, 3, 2, 2, 3), generator=generator).to(dtype)
    return {
        "contiguous": base,
        "transposed": base.transpose(1, 3),
        "every_other": base[..., ::2],
        "strided_offset": base[:, 1:, ::2, 1::2],
        "channels_last": base.contiguous(memory_format=torch.channels_last),
        "expanded": base[:, :1].expand(6, 5, 4, 7),
        "zero_dim": base[0, 0, 0, 0].clone(),
        "empty": torch.empty(0, 3, dtype=dtype),
        "six_dims_permuted": six.permute(5, 3, 1, 0, 2, 4),
    }


LAYOUT_NAMES = list(_layouts(torch.int8))


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint16, torch.int32, torch.int64, torch.bool], ids=dtype_id)
def test_layouts(layout, dtype, cpu_capability):
    x = _layouts(dtype)[layout]
    result = torchops.bitwise_count(x)
    check(result, x)
    # The output's layout is the one TensorIterator gives a pointwise op (torch.signbit's).
    assert result.stride() == torch.signbit(x).stride()


@pytest.mark.parametrize("api", ["python", "ops"])
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("out_kind", OUT_KINDS)
def test_out(api, layout, out_kind):
    x = _layouts(torch.int16)[layout]
    out, builtin_out = (make_out(out_kind, x.shape, torch.uint8, 99) for _ in range(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns when it resizes a non-empty out
        torch.bitwise_not(x.to(torch.uint8), out=builtin_out)  # a builtin's resize, for the layout
        if api == "python":
            assert torchops.bitwise_count(x, out=out) is out
        else:
            assert torch.ops.torchops.bitwise_count.out(x, out=out) is out
    assert out.shape == x.shape
    assert out.stride() == builtin_out.stride()
    check(out, x)


def test_out_may_be_x_itself():
    x = every_value(torch.uint8)
    expected = numpy_count(x)
    assert torchops.bitwise_count(x, out=x) is x
    np.testing.assert_array_equal(x.numpy(), expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.complex64],
                         ids=dtype_id)
def test_refuses_non_integer_dtypes_naming_them(dtype):
    x = torch.ones(3, dtype=dtype)
    before = snapshot(x)
    with pytest.raises(TypeError, match=rf"torchops.bitwise_count: x must be an integer or bool tensor "
                                         rf"\(int8, .*, uint64, bool\), got {dtype_id(dtype)}"):
        torchops.bitwise_count(x)
    assert_unchanged(before)


@pytest.mark.parametrize("out_dtype", [torch.int8, torch.int64, torch.bool], ids=dtype_id)
def test_refuses_an_out_of_another_dtype_and_leaves_it_unchanged(out_dtype):
    x = torch.arange(10, dtype=torch.int32)
    out = torch.zeros(10, dtype=out_dtype)
    before = snapshot(x, out)
    with pytest.raises(RuntimeError, match=f"out has dtype {dtype_id(out_dtype)} but the result has dtype uint8; "
                                           "out= does not convert, pass an out of dtype uint8"):
        torchops.bitwise_count(x, out=out)
    assert_unchanged(before)


def test_result_never_requires_grad():
    x = torch.arange(-4, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = torchops.bitwise_count(x)
    assert not result.requires_grad and result.grad_fn is None


@pytest.mark.parametrize("dtype", [torch.int8, torch.int64], ids=dtype_id)
def test_thread_count_does_not_change_results(dtype, rng, restore_num_threads, cpu_capability):
    x = make_tensor(random_values(dtype, 5 * 32768 + 5, rng), dtype)  # beyond the grain: split across threads
    results = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        results.append(torchops.bitwise_count(x))
        results.append(torchops.bitwise_count(x.view(-1, 5)[:, 1:]))  # strided rows, split across threads
    assert torch.equal(results[0], results[2]) and torch.equal(results[1], results[3])
    check(results[0], x)
    check(results[1], x.view(-1, 5)[:, 1:])
