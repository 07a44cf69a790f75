"""torchops.signbit: the IEEE sign bit for floats (NaN, -0.0 and subnormals
included), x < 0 for signed ints, False for unsigned ints and bool; layouts,
out=, threads and autograd."""

import warnings

import numpy as np
import pytest
import torch

import torchops

import model
from conftest import (
    FLOAT_DTYPES, FLOAT_FORMATS, INT_DTYPES, OUT_KINDS, SIGNED_DTYPES, UNSIGNED_DTYPES, dtype_id, floats_from_bits,
    interesting_values, make_out, make_tensor, random_values, special_float_patterns,
)

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = [pytest.mark.usefixtures("call_path"), pytest.mark.kernels]

float_dtypes = pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)


@pytest.mark.parametrize("api", ["python", "ops"])
@float_dtypes
def test_special_float_values(api, dtype, cpu_capability):
    cases = special_float_patterns(dtype)
    x = floats_from_bits([pattern for _, pattern, _ in cases], dtype)
    result = torchops.signbit(x) if api == "python" else torch.ops.torchops.signbit(x)
    assert result.dtype == torch.bool
    assert dict(zip([name for name, _, _ in cases], result.tolist())) == {name: sign for name, _, sign in cases}


@float_dtypes
def test_special_float_values_really_are_what_they_claim(dtype):
    # Guards the bit-pattern construction above.
    special = special_float_patterns(dtype)
    cases = {name: value for (name, _, _), value in zip(special, floats_from_bits([p for _, p, _ in special], dtype).tolist())}
    assert cases["+zero"] == 0.0 and cases["-zero"] == 0.0
    assert cases["+inf"] == float("inf") and cases["-inf"] == float("-inf")
    assert cases["+one"] == 1.0 and cases["-one"] == -1.0
    assert 0 < cases["+min_subnormal"] < cases["+max_subnormal"] < cases["+min_normal"]
    assert all(np.isnan(v) for k, v in cases.items() if "nan" in k)


@float_dtypes
def test_python_float_literals(dtype):
    x = torch.tensor([-0.0, 0.0, float("inf"), float("-inf"), -1e-30, 1e-30, -2.5, 2.5], dtype=dtype)
    # -1e-30 underflows to -0.0 in float16: still the sign bit.
    assert torchops.signbit(x).tolist() == [True, False, False, True, True, False, True, False]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=dtype_id)
def test_every_16bit_float_pattern(dtype, cpu_capability):
    patterns = list(range(1 << 16))
    x = floats_from_bits(patterns, dtype)
    result = torchops.signbit(x)
    assert result.tolist() == [bool(p >> 15) for p in patterns]
    assert torch.equal(result, torch.signbit(x))


@float_dtypes
def test_random_bit_patterns_against_model_torch_and_numpy(dtype, rng, cpu_capability):
    width = 1 + FLOAT_FORMATS[dtype][0] + FLOAT_FORMATS[dtype][1]
    patterns = rng.integers(0, 1 << width, size=50_000, dtype=np.uint64).tolist()
    x = floats_from_bits(patterns, dtype)
    result = torchops.signbit(x)
    np.testing.assert_array_equal(result.numpy(), model.signbit_model(x))
    assert torch.equal(result, torch.signbit(x))
    if dtype != torch.bfloat16:  # NumPy has no bfloat16
        np.testing.assert_array_equal(result.numpy(), np.signbit(x.numpy()))


@float_dtypes
def test_ordinary_values_against_torch(dtype):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(10_000, generator=generator).to(dtype)
    assert torch.equal(torchops.signbit(x), torch.signbit(x))
    assert torch.equal(torchops.signbit(x), x < 0)


@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=dtype_id)
def test_signed_integers_are_negative(dtype, rng, cpu_capability):
    values = interesting_values(dtype) + random_values(dtype, 1000, rng)
    result = torchops.signbit(make_tensor(values, dtype))
    assert result.dtype == torch.bool
    assert result.tolist() == [v < 0 for v in values]


@pytest.mark.parametrize("dtype", UNSIGNED_DTYPES + [torch.bool], ids=dtype_id)
def test_unsigned_integers_and_bool_are_never_negative(dtype, rng):
    if dtype == torch.bool:
        x = torch.tensor([True, False, True])
    else:
        # Values with the top bit set included: no sign bit to read there.
        x = make_tensor(interesting_values(dtype) + random_values(dtype, 1000, rng), dtype)
    for api_result in (torchops.signbit(x), torch.ops.torchops.signbit(x)):
        assert api_result.dtype == torch.bool
        assert api_result.shape == x.shape
        assert not api_result.any()


@pytest.mark.parametrize("dtype", INT_DTYPES + [torch.bool], ids=dtype_id)
def test_integers_against_model_and_torch(dtype, rng):
    x = torch.tensor([True, False]) if dtype == torch.bool else make_tensor(random_values(dtype, 500, rng), dtype)
    result = torchops.signbit(x)
    np.testing.assert_array_equal(result.numpy(), model.signbit_model(x))
    assert torch.equal(result, torch.signbit(x))


# --------------------------------------------------------------------------
# Layouts: values right and the strides of torch.signbit's output.
def _layouts(dtype):
    generator = torch.Generator().manual_seed(2)
    base = (torch.randn(2, 3, 4, 5, generator=generator) * 1000).to(dtype)
    base[0, 0] = -0.0
    six = (torch.randn(2, 1, 3, 2, 2, 3, generator=generator) * 1000).to(dtype)
    return {
        "contiguous": base,
        "transposed": base.transpose(1, 3),
        "strided_offset": base[:, 1:, ::2, 1::2],
        "channels_last": base.contiguous(memory_format=torch.channels_last),
        "expanded": base[:, :1].expand(2, 3, 4, 5),
        "zero_dim": torch.tensor(-0.0, dtype=dtype),
        "empty": torch.empty(0, 3, dtype=dtype),
        "empty_transposed": torch.empty(3, 0, dtype=dtype).t(),
        "six_dims": six,
        "six_dims_permuted": six.permute(5, 3, 1, 0, 2, 4),
    }


LAYOUT_NAMES = list(_layouts(torch.float32))


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int16], ids=dtype_id)
def test_layouts(layout, dtype):
    x = _layouts(dtype)[layout]
    result = torchops.signbit(x)
    reference = torch.signbit(x)
    assert result.shape == x.shape
    assert result.stride() == reference.stride()
    np.testing.assert_array_equal(result.numpy(), model.signbit_model(x))


# --------------------------------------------------------------------------
# out=
@pytest.mark.parametrize("api", ["python", "ops"])
@pytest.mark.parametrize("layout", LAYOUT_NAMES)
@pytest.mark.parametrize("out_kind", OUT_KINDS)
def test_out(api, layout, out_kind):
    x = _layouts(torch.float64)[layout]
    out, builtin_out = (make_out(out_kind, x.shape, torch.bool, True) for _ in range(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns when it resizes a non-empty out
        torch.signbit(x, out=builtin_out)
        if api == "python":
            returned = torchops.signbit(x, out=out)
            assert returned is out
        else:
            assert torch.ops.torchops.signbit.out(x, out=out) is out
    assert out.dtype == torch.bool
    assert out.shape == x.shape == builtin_out.shape
    assert out.stride() == builtin_out.stride()
    np.testing.assert_array_equal(out.numpy(), model.signbit_model(x))


# --------------------------------------------------------------------------
# Autograd: not differentiable, and no warning about it.
@float_dtypes
def test_requires_grad_input_gives_plain_bool_without_warning(dtype):
    x = torch.tensor([-1.0, 0.0, -0.0, 2.0], dtype=dtype, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = torchops.signbit(x)
        op_result = torch.ops.torchops.signbit(x)
        out = torch.empty(4, dtype=torch.bool)
        torchops.signbit(x, out=out)
    for r in (result, op_result, out):
        assert r.dtype == torch.bool
        assert not r.requires_grad
        assert r.grad_fn is None
        assert r.tolist() == [True, False, True, False]


def test_requires_grad_non_leaf_input():
    leaf = torch.tensor([1.0, -2.0], requires_grad=True)
    x = leaf * 2  # has a grad_fn
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = torchops.signbit(x)
    assert not result.requires_grad
    assert result.tolist() == [False, True]


# --------------------------------------------------------------------------
# Threads
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=dtype_id)
def test_thread_count_does_not_change_results(dtype, restore_num_threads):
    generator = torch.Generator().manual_seed(1)
    x = (torch.randn(400, 500, generator=generator) * 1000).to(dtype)
    results = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        results.append((torchops.signbit(x), torchops.signbit(x.t())))
    assert torch.equal(results[0][0], results[1][0])
    assert torch.equal(results[0][1], results[1][1])
    np.testing.assert_array_equal(results[0][0].numpy(), model.signbit_model(x))
