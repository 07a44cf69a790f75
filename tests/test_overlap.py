"""Memory overlap (docs/semantics.md section 5).

  * In place with the count aliasing x (y is x, or another view of the same
    memory with the same layout): works, each element shifted by its own old
    value.
  * out= that is exactly x (or y, or another view with x's layout): full
    overlap, works like in place.
  * out= that partially overlaps an input, an in-place count that partially
    overlaps x, and an in-place x or an out= whose elements share memory
    (expanded): RuntimeError from PyTorch's overlap checks, and nothing written.

Every test runs at every kernel level (the cpu_capability fixture), with sizes
around the vector widths and past the 256-element block of strided rows.
"""

import pytest
import torch

import torchops

import model
from conftest import (
    INT_DTYPES, OPERATION_IDS, OPERATIONS, called_name, dtype_id, interesting_values, make_tensor, shift, shift_,
)

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = [pytest.mark.usefixtures("call_path"), pytest.mark.kernels]

SIZES = [1, 7, 65, 300]
APIS = ["bitshift", "paddle", "ops"]
# out= through the Python function and through the op (the Paddle functions
# call the same op as torchops.bitshift).
OUT_APIS = ["bitshift", "ops"]
IN_PLACE_APIS = ["paddle", "ops"]
# The messages of TensorIterator's overlap checks ("... refer to a single memory
# location", "... partially overlaps ..."), or any message that says "overlap", with the
# name of the function called in front (TensorIterator's own message starts "unsupported
# operation: ..."): `called` is that name as a regex, by default any of torchops's.
OVERLAP = r"(?i:.*(overlap|single memory location))"
ANY_FUNCTION = r"^torchops\.\w+: "


def values_and_counts(dtype, size):
    """`size` values of `dtype` that are also counts worth shifting by: small
    in-range counts, the edges of [0, n), negative ones and boundary values."""
    n = model.width(dtype)
    counts = [model.wrap(c, dtype) for c in (0, 1, 3, n // 2, n - 1, n, n + 1, -1, 2 * n)]
    pool = interesting_values(dtype)
    # interleaved, so that every lane of a vector sees both kinds
    mixed = [counts[i % len(counts)] if i % 2 == 0 else pool[(i * 7) % len(pool)] for i in range(size)]
    return mixed


def expected(values, counts, dtype, direction, arithmetic):
    return model.shift_model(values, counts, dtype, direction, arithmetic)


# --------------------------------------------------------------------------
# layouts of x for the aliasing tests: (name, builder(values, dtype) -> view)
def _contiguous(values, dtype):
    return make_tensor(values, dtype)


def _every_other(values, dtype):
    base = make_tensor([values[i // 2] if i % 2 == 0 else 0x11 for i in range(2 * len(values))], dtype)
    return base[::2]


def _transposed(values, dtype):
    # a (k, m) view of a (m, k) buffer; size must factor
    k = 1
    for d in range(2, int(len(values) ** 0.5) + 1):
        if len(values) % d == 0:
            k = d
    m = len(values) // k
    rows = [[values[r * m + c] for c in range(m)] for r in range(k)]
    return make_tensor(rows, dtype).t().contiguous().t()  # logical rows, column-major memory


def _offset(values, dtype):
    base = make_tensor([0x22, 0x33, 0x44] + list(values) + [0x55], dtype)
    return base[3:3 + len(values)]


X_LAYOUTS = {"contiguous": _contiguous, "every_other": _every_other, "transposed": _transposed, "offset": _offset}


def same_layout_view(x):
    """Another tensor object over exactly x's memory, with x's layout."""
    return torch.as_strided(x, x.shape, x.stride(), x.storage_offset())


def storage_values(t):
    """Every element of t's storage (gaps and offset included), as Python ints."""
    count = t.untyped_storage().nbytes() // t.itemsize
    return torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), 0, (count,)).tolist()


def outside_view(t, values):
    """The storage values that are not elements of the view t."""
    count = t.untyped_storage().nbytes() // t.itemsize
    index = set(torch.as_strided(torch.arange(count), t.shape, t.stride(), t.storage_offset()).reshape(-1).tolist())
    return [v for i, v in enumerate(values) if i not in index]


# --------------------------------------------------------------------------
# in place, count aliasing x
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("direction, arithmetic", OPERATIONS, ids=OPERATION_IDS)
@pytest.mark.parametrize("layout", list(X_LAYOUTS))
@pytest.mark.parametrize("alias", ["y_is_x", "y_same_layout_view"])
@pytest.mark.parametrize("api", IN_PLACE_APIS)
@pytest.mark.parametrize("size", SIZES)
def test_in_place_count_aliasing_x(cpu_capability, dtype, direction, arithmetic, layout, alias, api, size):
    values = values_and_counts(dtype, size)
    x = X_LAYOUTS[layout](values, dtype)
    y = x if alias == "y_is_x" else same_layout_view(x)
    want = expected(x.tolist(), x.tolist(), dtype, direction, arithmetic)
    meta = (x.shape, x.stride(), x.storage_offset(), x.data_ptr())
    untouched = outside_view(x, storage_values(x))

    result = shift_(api, x, y, direction, arithmetic)

    assert result is x
    assert (x.shape, x.stride(), x.storage_offset(), x.data_ptr()) == meta
    assert x.tolist() == want
    assert outside_view(x, storage_values(x)) == untouched


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("direction, arithmetic", OPERATIONS, ids=OPERATION_IDS)
def test_in_place_zero_dim_count_is_x(cpu_capability, dtype, direction, arithmetic):
    for value in values_and_counts(dtype, 24):
        x = make_tensor(value, dtype)
        torchops.bitwise_left_shift_(x, x) if direction == "LEFT" else torchops.bitwise_right_shift_(x, x, arithmetic)
        assert x.shape == () and x.item() == model.shift_scalar(value, value, dtype, direction, arithmetic), value


def test_method_style_aliasing_is_the_same_as_separate_counts(cpu_capability):
    """The issue's example, x.bitwise_left_shift_(x), spelled with torchops:
    the answer is the one a separate copy of the counts gives."""
    x = make_tensor([1, 2, 3, -1, 7, -8, 100, -128], torch.int8)
    counts = x.clone()
    separate = torchops.bitwise_left_shift(x.clone(), counts)
    assert torchops.bitwise_left_shift_(x, x) is x
    assert x.tolist() == separate.tolist() == [2, 8, 24, 0, -128, 0, 0, 0]  # 7 << 7 = 0x380 keeps 0x80


# --------------------------------------------------------------------------
# out= that is exactly an input: like in place
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("direction, arithmetic", OPERATIONS, ids=OPERATION_IDS)
@pytest.mark.parametrize("layout", list(X_LAYOUTS))
@pytest.mark.parametrize("which", ["out_is_x", "out_is_x_view", "out_is_y", "out_is_x_is_y", "scalar_count_out_is_x"])
@pytest.mark.parametrize("api", OUT_APIS)
@pytest.mark.parametrize("size", [7, 300])
def test_out_fully_overlapping_an_input(cpu_capability, dtype, direction, arithmetic, layout, which, api, size):
    values = values_and_counts(dtype, size)
    x = X_LAYOUTS[layout](values, dtype)
    if which == "scalar_count_out_is_x":
        y = model.width(dtype) // 2 - 1
        want = model.shift_model(x.tolist(), y, dtype, direction, arithmetic)
    elif which == "out_is_x_is_y":
        y = x
        want = expected(x.tolist(), x.tolist(), dtype, direction, arithmetic)
    else:
        y = X_LAYOUTS[layout](list(reversed(values)), dtype)
        want = expected(x.tolist(), y.tolist(), dtype, direction, arithmetic)
    out = {"out_is_x": x, "out_is_x_view": same_layout_view(x), "out_is_y": y, "out_is_x_is_y": x,
           "scalar_count_out_is_x": x}[which]
    # the input that is not out must be left alone
    others = [t for t in (x, y) if isinstance(t, torch.Tensor) and t.data_ptr() != out.data_ptr()]
    others_before = [t.clone() for t in others]
    meta = (out.shape, out.stride(), out.storage_offset(), out.data_ptr())

    result = shift(api, x, y, direction, arithmetic, out=out)

    assert result is out
    assert (out.shape, out.stride(), out.storage_offset(), out.data_ptr()) == meta
    assert out.tolist() == want
    if which == "out_is_x_view":
        assert x.tolist() == want  # the same memory
    for t, before in zip(others, others_before):
        assert torch.equal(t, before)


# (x dtype, y dtype): x is converted to the wider result dtype, which is y's
PROMOTING_PAIRS = [(torch.int8, torch.int32), (torch.uint8, torch.int16), (torch.int16, torch.int64),
                   (torch.uint8, torch.int32)]


@pytest.mark.parametrize("x_dtype, y_dtype", PROMOTING_PAIRS, ids=lambda d: dtype_id(d))
@pytest.mark.parametrize("direction, arithmetic", OPERATIONS, ids=OPERATION_IDS)
@pytest.mark.parametrize("api", OUT_APIS)
@pytest.mark.parametrize("size", [7, 300])
def test_out_is_the_count_when_x_is_promoted(cpu_capability, x_dtype, y_dtype, direction, arithmetic, api, size):
    """out is y (the result dtype) while x goes through a conversion first."""
    x = make_tensor(values_and_counts(x_dtype, size), x_dtype)
    y = make_tensor(values_and_counts(y_dtype, size)[::-1], y_dtype)
    assert torch.result_type(x, y) == y_dtype
    want = expected([model.wrap(v, y_dtype) for v in x.tolist()], y.tolist(), y_dtype, direction, arithmetic)
    x_before = x.clone()
    assert shift(api, x, y, direction, arithmetic, out=y) is y
    assert y.dtype == y_dtype and y.tolist() == want
    assert torch.equal(x, x_before)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint16, torch.int32], ids=dtype_id)
@pytest.mark.parametrize("direction, arithmetic", OPERATIONS, ids=OPERATION_IDS)
@pytest.mark.parametrize("api", OUT_APIS)
def test_out_is_x_with_a_wider_zero_dim_count(cpu_capability, dtype, direction, arithmetic, api):
    """Section 4.1: the 0-d int64 count is converted to x's dtype (257 -> 1 for
    8 bits) and out = x is written in place."""
    values = values_and_counts(dtype, 65)
    for count in (1, 257, 65536 + 3, -1, 2**40 + 5):
        x = make_tensor(values, dtype)
        y = torch.tensor(count, dtype=torch.int64)
        want = model.shift_model(values, model.wrap(count, dtype), dtype, direction, arithmetic)
        assert shift(api, x, y, direction, arithmetic, out=x) is x
        assert x.dtype == dtype and x.tolist() == want, count
        assert y.item() == count


@pytest.mark.parametrize("size", SIZES)
def test_signbit_out_is_a_bool_view_of_x(cpu_capability, size):
    """Full overlap across dtypes: out is x's own bytes read as bool."""
    values = values_and_counts(torch.int8, size)
    x = make_tensor(values, torch.int8)
    out = x.view(torch.bool)
    assert torchops.signbit(x, out=out) is out
    assert out.tolist() == [v < 0 for v in values]
    assert x.tolist() == [1 if v < 0 else 0 for v in values]


@pytest.mark.parametrize("size", SIZES)
def test_signbit_out_is_x_bool(cpu_capability, size):
    x = torch.tensor([i % 3 == 0 for i in range(size)])
    assert torchops.signbit(x, out=x) is x
    assert x.tolist() == [False] * size


# --------------------------------------------------------------------------
# refused: partial overlap and internal overlap
def _buffer(dtype, size):
    return make_tensor(values_and_counts(dtype, size), dtype)


def _gap(n):
    """How far the overlapping views are apart: less than n, so they overlap."""
    return 1 if n < 4 else 3


def _case_out_shifted_over_x(dtype, n):
    base = _buffer(dtype, n + _gap(n))
    return [base], lambda api: shift(api, base[:n], _buffer(dtype, n), "LEFT", out=base[_gap(n):])


def _case_out_shifted_under_x(dtype, n):
    base = _buffer(dtype, n + _gap(n))
    return [base], lambda api: shift(api, base[_gap(n):], _buffer(dtype, n), "RIGHT", out=base[:n])


def _case_out_shifted_over_y(dtype, n):
    base = _buffer(dtype, n + 1)
    x = _buffer(dtype, n)
    return [base, x], lambda api: shift(api, x, base[1:], "RIGHT", False, out=base[:n])


def _case_out_shifted_over_x_scalar_count(dtype, n):
    base = _buffer(dtype, n + _gap(n))
    return [base], lambda api: shift(api, base[:n], 2, "LEFT", out=base[_gap(n):])


def _case_out_is_x_transposed(dtype, n):
    x = _buffer(dtype, 16).reshape(4, 4)
    y = _buffer(dtype, 16).reshape(4, 4)
    return [x, y], lambda api: shift(api, x, y, "LEFT", out=x.t())


def _case_zero_dim_x_is_an_element_of_out(dtype, n):
    base = _buffer(dtype, n + 1)
    y = _buffer(dtype, n + 1)
    return [base, y], lambda api: shift(api, base[0], y, "LEFT", out=base)


def _case_zero_dim_y_is_an_element_of_out(dtype, n):
    base = _buffer(dtype, n + 1)
    x = _buffer(dtype, n + 1)
    return [base, x], lambda api: shift(api, x, base[-1], "RIGHT", out=base)


def _case_out_expanded(dtype, n):
    buffer = _buffer(dtype, 3)
    x, y = _buffer(dtype, 3 * n).reshape(n, 3), _buffer(dtype, 3 * n).reshape(n, 3)
    return [buffer, x, y], lambda api: shift(api, x, y, "LEFT", out=buffer.expand(n, 3))


def _case_out_expanded_scalar_count(dtype, n):
    buffer = _buffer(dtype, 4)
    x = _buffer(dtype, 4 * n).reshape(n, 4)
    return [buffer, x], lambda api: shift(api, x, 1, "LEFT", out=buffer.expand(n, 4))


OUT_OVERLAP_CASES = {
    "out_shifted_over_x": _case_out_shifted_over_x,
    "out_shifted_under_x": _case_out_shifted_under_x,
    "out_shifted_over_y": _case_out_shifted_over_y,
    "out_shifted_over_x_scalar_count": _case_out_shifted_over_x_scalar_count,
    "out_is_x_transposed": _case_out_is_x_transposed,
    "zero_dim_x_is_an_element_of_out": _case_zero_dim_x_is_an_element_of_out,
    "zero_dim_y_is_an_element_of_out": _case_zero_dim_y_is_an_element_of_out,
    "out_expanded": _case_out_expanded,
    "out_expanded_scalar_count": _case_out_expanded_scalar_count,
}


def assert_refused_and_untouched(call, tensors, called=ANY_FUNCTION):
    before = [(t, t.clone(), t.shape, t.stride(), t.storage_offset()) for t in tensors]
    with pytest.raises(RuntimeError, match=called + OVERLAP):
        call()
    for t, clone, shape, stride, offset in before:
        assert (t.shape, t.stride(), t.storage_offset()) == (shape, stride, offset)
        assert torch.equal(t, clone), "written before the overlap was refused"


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.uint16, torch.uint64], ids=dtype_id)
@pytest.mark.parametrize("case", list(OUT_OVERLAP_CASES))
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("size", [2, 65, 300])
def test_out_overlapping_an_input_is_refused(cpu_capability, dtype, case, api, size):
    tensors, call = OUT_OVERLAP_CASES[case](dtype, size)
    assert_refused_and_untouched(lambda: call(api), tensors)


def _in_place_case_y_shifted_over_x(dtype, n):
    base = _buffer(dtype, n + 1)
    return [base], base[:n], base[1:]


def _in_place_case_y_is_an_element_of_x(dtype, n):
    base = _buffer(dtype, n)
    return [base], base, base[1]


def _in_place_case_y_is_x_transposed(dtype, n):
    x = _buffer(dtype, 25).reshape(5, 5)
    return [x], x, x.t()


def _in_place_case_x_expanded(dtype, n):
    buffer = _buffer(dtype, 5)
    y = _buffer(dtype, 5 * n).reshape(n, 5)
    return [buffer, y], buffer.expand(n, 5), y


def _in_place_case_x_expanded_scalar_count(dtype, n):
    buffer = _buffer(dtype, 5)
    return [buffer], buffer.expand(n, 5), 3


IN_PLACE_OVERLAP_CASES = {
    "y_shifted_over_x": _in_place_case_y_shifted_over_x,
    "y_is_an_element_of_x": _in_place_case_y_is_an_element_of_x,
    "y_is_x_transposed": _in_place_case_y_is_x_transposed,
    "x_expanded": _in_place_case_x_expanded,
    "x_expanded_scalar_count": _in_place_case_x_expanded_scalar_count,
}


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.uint16, torch.uint64], ids=dtype_id)
@pytest.mark.parametrize("case", list(IN_PLACE_OVERLAP_CASES))
@pytest.mark.parametrize("api", IN_PLACE_APIS)
@pytest.mark.parametrize("direction, arithmetic", OPERATIONS, ids=OPERATION_IDS)
@pytest.mark.parametrize("size", [2, 65, 300])
def test_in_place_overlap_is_refused(cpu_capability, dtype, case, api, direction, arithmetic, size):
    tensors, x, y = IN_PLACE_OVERLAP_CASES[case](dtype, size)
    assert_refused_and_untouched(lambda: shift_(api, x, y, direction, arithmetic), tensors,
                                 called_name(api, direction, in_place=True))


@pytest.mark.parametrize("size", [2, 65, 300])
@pytest.mark.parametrize("case", ["shifted", "expanded"])
def test_signbit_out_overlapping_x_is_refused(cpu_capability, size, case):
    if case == "shifted":
        base = make_tensor([(i * 37) % 256 for i in range(size + 1)], torch.uint8)
        x, out = base[:size].view(torch.int8), base[1:].view(torch.bool)
        tensors = [base]
    else:
        base = make_tensor([0, 1, 0, 1], torch.uint8)
        x, out = torch.full((size, 4), -1.0), base.view(torch.bool).expand(size, 4)
        tensors = [base, x]
    assert_refused_and_untouched(lambda: torchops.signbit(x, out=out), tensors, r"^torchops\.signbit: ")
