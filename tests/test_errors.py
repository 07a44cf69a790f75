"""Every error in the contract: the exception type, a message that names the
op and the problem, and no tensor (x, y, out) touched afterwards -- values,
shape, strides and dtype."""

import re

import pytest
import torch

import torchops
from torchops._contract import BITSHIFT, DIRECTION_NAMES, DIRECTIONS, is_left

from conftest import (
    APIS, COMPLEX_DTYPES, NON_INTEGER_DTYPES, SIGNBIT_REFUSED_DTYPES, assert_unchanged, called_name, dtype_id,
    dtype_pattern, make_tensor, shift, shift_, snapshot,
)

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = [pytest.mark.usefixtures("call_path"), pytest.mark.kernels]


def check_error(call, tensors, exception, *patterns):
    """`call()` raises `exception` whose message matches every regex in
    `patterns`, and leaves every tensor in `tensors` as it was."""
    before = snapshot(*tensors)
    with pytest.raises(exception) as info:
        call()
    message = str(info.value)
    for pattern in patterns:
        assert re.search(pattern, message), f"{pattern!r} not in error message {message!r}"
    assert_unchanged(before)
    return info


ARG_X, ARG_Y, ARG_OUT = r"\bx\b", r"\by\b", r"\bout\b"
SIGNBIT = r"^torchops\.signbit: "
IN_PLACE_APIS = ["paddle", "ops"]


def _out_kinds(dtype, shape):
    """A right-shaped out, an empty one and a wrong-shaped one (which a
    successful call would resize): an error must not resize any of them."""
    return {
        "right_shape": torch.full(shape, 9, dtype=dtype),
        "empty": torch.empty(0, dtype=dtype),
        "wrong_shape": torch.full((7,), 9, dtype=dtype),
        "none": None,
    }


# --------------------------------------------------------------------------
# TypeError: refused dtypes
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("dtype", NON_INTEGER_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("count_kind", ["tensor", "python_int"])
@pytest.mark.parametrize("out_kind", ["none", "right_shape", "wrong_shape"])
def test_x_dtype_refused(api, dtype, count_kind, out_kind):
    x = torch.ones(3, dtype=dtype)
    y = make_tensor([1, 2, 3], torch.int32) if count_kind == "tensor" else 2
    out = _out_kinds(torch.int32, (3,))[out_kind]
    check_error(lambda: shift(api, x, y, "LEFT", out=out), [x, y, out], TypeError,
                called_name(api, "LEFT"), ARG_X, dtype_pattern(dtype))


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("dtype", NON_INTEGER_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("out_kind", ["none", "right_shape", "empty"])
def test_y_dtype_refused(api, dtype, out_kind):
    x = make_tensor([1, 2, 3], torch.int32)
    y = torch.ones(3, dtype=dtype)
    out = _out_kinds(torch.int32, (3,))[out_kind]
    check_error(lambda: shift(api, x, y, "RIGHT", out=out), [x, y, out], TypeError,
                called_name(api, "RIGHT"), ARG_Y, dtype_pattern(dtype))


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bool], ids=dtype_id)
def test_zero_dim_y_dtype_refused(api, dtype):
    x = make_tensor([1, 2, 3], torch.int64)
    y = torch.tensor(1, dtype=dtype)
    check_error(lambda: shift(api, x, y, "LEFT"), [x, y], TypeError,
                called_name(api, "LEFT"), ARG_Y, dtype_pattern(dtype))


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("count, kind", [(True, r"(?i)bool"), (False, r"(?i)bool"), (1.0, r"(?i)float|double"),
                                         (2.5, r"(?i)float|double"), (-0.0, r"(?i)float|double")], ids=repr)
@pytest.mark.parametrize("out_kind", ["none", "wrong_shape"])
def test_bool_or_float_python_count_refused(api, count, kind, out_kind):
    x = make_tensor([1, 2, 3], torch.int16)
    out = _out_kinds(torch.int16, (3,))[out_kind]
    check_error(lambda: shift(api, x, count, "LEFT", out=out), [x, out], TypeError, called_name(api, "LEFT"), kind)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("x_dtype, y_dtype", [
    (torch.uint16, torch.int8), (torch.int8, torch.uint16), (torch.uint32, torch.uint8),
    (torch.uint64, torch.int64), (torch.int64, torch.uint64), (torch.uint16, torch.uint32),
], ids=lambda d: dtype_id(d))
@pytest.mark.parametrize("out_kind", ["none", "empty"])
def test_unpromotable_pair_refused(api, x_dtype, y_dtype, out_kind):
    x = make_tensor([1, 2, 3], x_dtype)
    y = make_tensor([1, 1, 1], y_dtype)
    unsigned = x_dtype if x_dtype in (torch.uint16, torch.uint32, torch.uint64) else y_dtype
    out = _out_kinds(unsigned, (3,))[out_kind]
    check_error(lambda: shift(api, x, y, "LEFT", out=out), [x, y, out], TypeError,
                called_name(api, "LEFT"), dtype_pattern(unsigned),
                re.escape(f"shift by y.to(torch.{dtype_id(x_dtype)}), or by a Python int"))


@pytest.mark.parametrize("python_int_counts", [True, False])
def test_unpromotable_pair_advice_names_only_the_forms_the_op_has(python_int_counts):
    # The shared promotion check (csrc/ops/checks.h's shift_result_type and its Python twin)
    # serves ops with and without a Python-int count; bitshift, which has one, passes True.
    from torchops._contract import _shift_result_type

    x, y = make_tensor([1], torch.uint16), make_tensor([1], torch.int8)
    with pytest.raises(TypeError) as raised:
        _shift_result_type("torchops.op", x, y, python_int_counts=python_int_counts)
    assert str(raised.value).endswith("shift by y.to(torch.uint16)" + (", or by a Python int" if python_int_counts else ""))


@pytest.mark.parametrize("api", IN_PLACE_APIS)
@pytest.mark.parametrize("dtype", NON_INTEGER_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("count_kind", ["tensor", "python_int"])
def test_in_place_x_dtype_refused(api, dtype, count_kind):
    x = torch.ones(3, dtype=dtype)
    y = make_tensor([1, 2, 3], torch.int64) if count_kind == "tensor" else 1
    check_error(lambda: shift_(api, x, y, "LEFT"), [x, y], TypeError,
                called_name(api, "LEFT", in_place=True), ARG_X, dtype_pattern(dtype))


@pytest.mark.parametrize("api", IN_PLACE_APIS)
@pytest.mark.parametrize("count", [True, 1.5], ids=repr)
def test_in_place_bool_or_float_python_count_refused(api, count):
    x = make_tensor([1, 2, 3], torch.int32)
    check_error(lambda: shift_(api, x, count, "RIGHT"), [x], TypeError, called_name(api, "RIGHT", in_place=True))


@pytest.mark.parametrize("api", IN_PLACE_APIS)
def test_in_place_y_dtype_refused(api):
    x = make_tensor([1, 2, 3], torch.int32)
    y = torch.ones(3, dtype=torch.float64)
    check_error(lambda: shift_(api, x, y, "RIGHT"), [x, y], TypeError,
                called_name(api, "RIGHT", in_place=True), ARG_Y, dtype_pattern(torch.float64))


# --------------------------------------------------------------------------
# ValueError: direction
BAD_DIRECTIONS = ["Left", "Right", "up", "", "LEFT ", " RIGHT", "l", "R", "RIGHTS", "lEFT", "LEFT\x00"]


@pytest.mark.parametrize("api", ["bitshift", "ops"])
@pytest.mark.parametrize("direction", BAD_DIRECTIONS, ids=repr)
@pytest.mark.parametrize("count_kind", ["tensor", "python_int"])
@pytest.mark.parametrize("with_out", [False, True], ids=["functional", "out"])
def test_bad_direction(api, direction, count_kind, with_out):
    x = make_tensor([1, 2, 3], torch.int8)
    y = make_tensor([1, 1, 1], torch.int8) if count_kind == "tensor" else 1
    out = torch.full((5,), 9, dtype=torch.int8) if with_out else None
    check_error(lambda: shift(api, x, y, direction, out=out), [x, y, out], ValueError,
                called_name(api, direction), r"direction", r"LEFT", r"RIGHT")


@pytest.mark.parametrize("direction", BAD_DIRECTIONS, ids=repr)
@pytest.mark.parametrize("count_kind", ["tensor", "python_int"])
def test_bad_direction_in_place(direction, count_kind):
    # Only the op layer takes a direction in place (the Paddle functions name it).
    x = make_tensor([1, 2, 3], torch.int8)
    y = make_tensor([1, 1, 1], torch.int8) if count_kind == "tensor" else 1
    check_error(lambda: shift_("ops", x, y, direction), [x, y], ValueError,
                called_name("ops", direction, in_place=True), r"direction", r"LEFT", r"RIGHT")


# The directions have one list, torchops/_contract.py's DIRECTIONS, from which the Python
# side takes them (the fake kernels' and Inductor's and ONNX's is_left, the twins, the typed
# API's TorchScript bodies); the C++ entries spell their own (csrc/ops/checks.cpp's
# parse_shift_op, which the CPU and device-generic entries share), which must be that list.
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("count_kind", ["tensor", "python_int"])
def test_the_op_takes_each_direction_of_the_list_as_is_left_reads_it(direction, count_kind):
    x = make_tensor([-8, 3, 64, -128], torch.int8)
    y = make_tensor([1, 1, 1, 1], torch.int8) if count_kind == "tensor" else 1
    shifted = torch.ops.torchops.bitshift(x, y, direction, True)
    left = is_left(BITSHIFT, direction)
    assert torch.equal(shifted, torch.bitwise_left_shift(x, 1) if left else torch.bitwise_right_shift(x, 1))


def _near(direction: str) -> list:
    """Spellings a character or a case away from `direction`."""
    return [direction.capitalize(), direction.swapcase(), direction[:-1], direction + " ", " " + direction,
            direction + "\x00", direction[0]]


@pytest.mark.parametrize("direction", sorted({near for d in DIRECTIONS for near in _near(d)} - set(DIRECTIONS)
                                             | {"", "UP"}), ids=repr)
def test_the_op_refuses_every_other_direction_listing_the_list(direction):
    # The C++ message lists the spellings the entries accept: DIRECTION_NAMES, the list's (what
    # follows "got" is cut at a NUL on its way to Python).
    x = make_tensor([1, 2, 3], torch.int8)
    with pytest.raises(ValueError) as raised:
        torch.ops.torchops.bitshift(x, 1, direction, True)
    assert str(raised.value).startswith(f"{BITSHIFT}: direction must be one of {DIRECTION_NAMES}, got '"), raised.value


# --------------------------------------------------------------------------
# RuntimeError: shapes, in-place fit, out dtype
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("x_shape, y_shape", [((3,), (4,)), ((2, 3), (3, 2)), ((2, 3, 4), (2, 1, 5)), ((0,), (2,))],
                         ids=str)
@pytest.mark.parametrize("out_kind", ["none", "empty", "wrong_shape"])
def test_non_broadcastable_shapes(api, x_shape, y_shape, out_kind):
    x = torch.ones(x_shape, dtype=torch.int32)
    y = torch.ones(y_shape, dtype=torch.int32)
    out = _out_kinds(torch.int32, x_shape)[out_kind]
    check_error(lambda: shift(api, x, y, "LEFT", out=out), [x, y, out], RuntimeError, called_name(api, "LEFT"),
                r"(?i)broadcast|shape|size")


@pytest.mark.parametrize("api", IN_PLACE_APIS)
@pytest.mark.parametrize("x_shape, y_shape", [((3, 1), (1, 4)), ((3,), (2, 3)), ((), (2,)), ((1,), (5,)),
                                              ((2, 1, 3), (2, 4, 3)), ((3,), (4,))], ids=str)
def test_in_place_broadcast_shape_must_equal_x_shape(api, x_shape, y_shape):
    x = torch.full(x_shape, 3, dtype=torch.int16)
    y = torch.ones(y_shape, dtype=torch.int16)
    check_error(lambda: shift_(api, x, y, "LEFT"), [x, y], RuntimeError,
                called_name(api, "LEFT", in_place=True), r"(?i)shape|size|broadcast")


@pytest.mark.parametrize("api", IN_PLACE_APIS)
@pytest.mark.parametrize("x_dtype, y_dtype", [
    (torch.int8, torch.int32), (torch.uint8, torch.int8), (torch.int16, torch.int64), (torch.int32, torch.int64),
    (torch.uint8, torch.int16),
], ids=lambda d: dtype_id(d))
def test_in_place_result_dtype_must_equal_x_dtype(api, x_dtype, y_dtype):
    x = make_tensor([1, 2, 3], x_dtype)
    y = make_tensor([1, 1, 1], y_dtype)
    result_dtype = torch.result_type(x, y)
    assert result_dtype != x_dtype
    check_error(lambda: shift_(api, x, y, "LEFT"), [x, y], RuntimeError, called_name(api, "LEFT", in_place=True),
                rf"(?i)dtype|{dtype_pattern(result_dtype)}")


# (x dtype, count: a tensor dtype or the Python int 1, out dtype); out never
# has the result dtype.
OUT_DTYPE_MISMATCHES = [
    (torch.int8, torch.int8, torch.int32),
    (torch.int32, torch.int32, torch.int8),
    (torch.int8, torch.int8, torch.uint8),
    (torch.int8, torch.int32, torch.int8),   # result is int32
    (torch.uint8, torch.int8, torch.uint8),  # result is int16
    (torch.uint16, torch.uint16, torch.int16),
    (torch.uint64, torch.uint64, torch.int64),
    (torch.int8, 1, torch.int16),
    (torch.uint8, 1, torch.int8),
    (torch.uint32, 1, torch.int32),
    (torch.int64, 1, torch.uint64),
]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("x_dtype, count, out_dtype", OUT_DTYPE_MISMATCHES,
                         ids=lambda v: dtype_id(v) if isinstance(v, torch.dtype) else "python_int")
@pytest.mark.parametrize("out_shape", [(3,), (0,), (2, 2)], ids=str)
def test_out_dtype_must_equal_result_dtype(api, x_dtype, count, out_dtype, out_shape):
    x = make_tensor([1, 2, 3], x_dtype)
    y = make_tensor([1, 1, 1], count) if isinstance(count, torch.dtype) else count
    assert torch.result_type(x, y) != out_dtype
    out = torch.full(out_shape, 9, dtype=out_dtype)
    check_error(lambda: shift(api, x, y, "LEFT", out=out), [x, y, out], RuntimeError, called_name(api, "LEFT"), ARG_OUT)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("out_dtype", NON_INTEGER_DTYPES, ids=dtype_id)
def test_out_of_a_non_integer_dtype_refused(api, out_dtype):
    # The contract asks RuntimeError for an out dtype different from the
    # result dtype and TypeError for a refused dtype naming "out": accept either.
    x = make_tensor([1, 2, 3], torch.int32)
    y = make_tensor([1, 1, 1], torch.int32)
    out = torch.zeros(3, dtype=out_dtype)
    check_error(lambda: shift(api, x, y, "RIGHT", out=out), [x, y, out], (TypeError, RuntimeError),
                called_name(api, "RIGHT"), ARG_OUT)


@pytest.mark.parametrize("api", ["bitshift", "paddle"])
@pytest.mark.parametrize("x, dtype", [(300, torch.int8), (-129, torch.int8), (-1, torch.uint8), (256, torch.uint8),
                                      (70000, torch.uint16), (-1, torch.uint64), (2**64, torch.uint64),
                                      (2**63, torch.int64), (2**31, torch.int32)],
                         ids=lambda v: dtype_id(v) if isinstance(v, torch.dtype) else str(v))
def test_python_int_x_that_does_not_fit_y_dtype(api, x, dtype):
    y = make_tensor([1, 2], dtype)
    out = torch.full((2,), 9, dtype=dtype)
    # The contract calls it an error without naming the type.
    refused = (RuntimeError, ValueError, OverflowError, TypeError)
    check_error(lambda: shift(api, x, y, "LEFT"), [y], refused, called_name(api, "LEFT"))
    check_error(lambda: shift(api, x, y, "LEFT", out=out), [y, out], refused, called_name(api, "LEFT"))


@pytest.mark.parametrize("api", ["bitshift", "paddle"])
def test_python_int_x_at_the_edges_of_y_dtype_is_fine(api):
    assert shift(api, -128, make_tensor([0], torch.int8), "LEFT").tolist() == [-128]
    assert shift(api, 127, make_tensor([0], torch.int8), "LEFT").tolist() == [127]
    assert shift(api, 2**64 - 1, make_tensor([0], torch.uint64), "LEFT").tolist() == [2**64 - 1]
    assert shift(api, -2**63, make_tensor([0], torch.int64), "LEFT").tolist() == [-2**63]


# --------------------------------------------------------------------------
# signbit
def _signbit(api, x, out=None):
    if api == "python":
        return torchops.signbit(x, out=out)
    if out is None:
        return torch.ops.torchops.signbit(x)
    return torch.ops.torchops.signbit.out(x, out=out)


@pytest.mark.parametrize("api", ["python", "ops"])
@pytest.mark.parametrize("dtype", SIGNBIT_REFUSED_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("out_kind", ["none", "right_shape", "wrong_shape"])
def test_signbit_dtype_refused(api, dtype, out_kind):
    x = torch.zeros(3, dtype=torch.float32).to(dtype) if dtype not in COMPLEX_DTYPES else torch.tensor([-1j, 1, 0], dtype=dtype)
    out = _out_kinds(torch.bool, (3,))[out_kind]
    check_error(lambda: _signbit(api, x, out), [x, out], TypeError, SIGNBIT, ARG_X, dtype_pattern(dtype))


@pytest.mark.parametrize("api", ["python", "ops"])
@pytest.mark.parametrize("out_dtype", [torch.int8, torch.uint8, torch.float32, torch.int64], ids=dtype_id)
@pytest.mark.parametrize("out_shape", [(3,), (0,), (4, 2)], ids=str)
@pytest.mark.parametrize("x_dtype", [torch.float32, torch.int8, torch.bool], ids=dtype_id)
def test_signbit_out_must_be_bool(api, out_dtype, out_shape, x_dtype):
    x = torch.tensor([-1, 0, 1]).to(x_dtype)
    out = torch.full(out_shape, 5, dtype=out_dtype)
    check_error(lambda: _signbit(api, x, out), [x, out], RuntimeError, SIGNBIT, ARG_OUT)
