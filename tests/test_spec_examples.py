"""Every worked example in the documents the contract comes from (ONNX BitShift
version 28, Paddle's shift RFC, pypto's signbit; docs/semantics.md section 9) and the
contract, with the expected values written out as the documents give them.

Each example is checked against torchops through every API (conftest.APIS) and also
against tests/model.py, so a wrong model cannot hide behind these cases.
"""

import pytest
import torch

import model
from conftest import APIS, dtype_id, make_tensor, shift

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = [pytest.mark.usefixtures("call_path"), pytest.mark.kernels]

# ONNX BitShift v28 examples: (name, dtype, direction, x, y, z)
ONNX_EXAMPLES = [
    ("left_int16", torch.int16, "LEFT", [16, 4, 1], [1, 2, 3], [32, 16, 8]),
    ("left_int32", torch.int32, "LEFT", [16, 4, 1], [1, 2, 3], [32, 16, 8]),
    ("left_int32_negative_shift", torch.int32, "LEFT", [-8, 4, -1], [-1, -32, -64], [0, 0, 0]),
    ("left_int32_overflow", torch.int32, "LEFT",
     [1073741824, 1, -1073741824], [1, 31, 1], [-2147483648, -2147483648, -2147483648]),
    ("left_int32_shift_ge_width", torch.int32, "LEFT", [-8, 4, -1], [32, 33, 100], [0, 0, 0]),
    ("left_int64", torch.int64, "LEFT", [16, 4, 1], [1, 2, 3], [32, 16, 8]),
    ("left_int8", torch.int8, "LEFT", [16, 4, 1], [1, 2, 3], [32, 16, 8]),
    ("left_int8_negative_shift", torch.int8, "LEFT", [-8, 4, -1], [-1, -8, -16], [0, 0, 0]),
    ("left_int8_overflow", torch.int8, "LEFT", [64, 1, -64], [1, 7, 1], [-128, -128, -128]),
    ("left_int8_shift_ge_width", torch.int8, "LEFT", [-8, 4, -1], [8, 9, 127], [0, 0, 0]),
    ("right_int16", torch.int16, "RIGHT", [16, 4, 1], [1, 2, 3], [8, 1, 0]),
    ("right_int32", torch.int32, "RIGHT", [16, 4, 1], [1, 2, 3], [8, 1, 0]),
    ("right_int32_negative_input", torch.int32, "RIGHT",
     [-8, -1, -2147483648], [1, 1, 1], [-4, -1, -1073741824]),
    ("right_int32_negative_shift", torch.int32, "RIGHT", [-8, 4, -1], [-1, -32, -64], [-1, 0, -1]),
    ("right_int32_shift_ge_width", torch.int32, "RIGHT", [-8, 4, -1], [32, 33, 100], [-1, 0, -1]),
    ("right_int64", torch.int64, "RIGHT", [16, 4, 1], [1, 2, 3], [8, 1, 0]),
    ("right_int8", torch.int8, "RIGHT", [16, 4, 1], [1, 2, 3], [8, 1, 0]),
    ("right_int8_negative_input", torch.int8, "RIGHT", [-8, -1, -128], [1, 1, 1], [-4, -1, -64]),
    ("right_int8_negative_shift", torch.int8, "RIGHT", [-8, 4, -1], [-1, -8, -16], [-1, 0, -1]),
    ("right_int8_shift_ge_width", torch.int8, "RIGHT", [-8, 4, -1], [8, 9, 127], [-1, 0, -1]),
    # The operator description's own examples.
    ("description_right", torch.uint8, "RIGHT", [1, 4], [1, 1], [0, 2]),
    ("description_left", torch.uint8, "LEFT", [1, 2], [1, 2], [2, 8]),
]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("name, dtype, direction, x, y, z", ONNX_EXAMPLES, ids=[e[0] for e in ONNX_EXAMPLES])
def test_onnx_example(api, name, dtype, direction, x, y, z):
    result = shift(api, make_tensor(x, dtype), make_tensor(y, dtype), direction)
    assert result.dtype == dtype
    assert result.tolist() == z


@pytest.mark.parametrize("name, dtype, direction, x, y, z", ONNX_EXAMPLES, ids=[e[0] for e in ONNX_EXAMPLES])
def test_onnx_example_lower_case_direction(name, dtype, direction, x, y, z):
    result = shift("bitshift", make_tensor(x, dtype), make_tensor(y, dtype), direction.lower())
    assert result.tolist() == z


@pytest.mark.parametrize("name, dtype, direction, x, y, z", ONNX_EXAMPLES, ids=[e[0] for e in ONNX_EXAMPLES])
def test_model_agrees_with_onnx_example(name, dtype, direction, x, y, z):
    assert model.shift_model(x, y, dtype, direction) == z


# Paddle RFC and the contract: (name, dtype, direction, arithmetic, x, count, expected)
PADDLE_EXAMPLES = [
    # RFC example 1: a = 1001,1010, b = 3.  Logical: 0001,0011; arithmetic: 1111,0011.
    ("rfc1_logical_int8", torch.int8, "RIGHT", False, -102, 3, 0b00010011),
    ("rfc1_arithmetic_int8", torch.int8, "RIGHT", True, -102, 3, 0b11110011 - 256),
    ("rfc1_logical_uint8", torch.uint8, "RIGHT", False, 0b10011010, 3, 0b00010011),
    ("rfc1_arithmetic_uint8", torch.uint8, "RIGHT", True, 0b10011010, 3, 0b00010011),
    # RFC example 2: a = 0001,1010, b = 3 -> 0000,0011 either way.
    ("rfc2_logical_int8", torch.int8, "RIGHT", False, 0b00011010, 3, 0b00000011),
    ("rfc2_arithmetic_int8", torch.int8, "RIGHT", True, 0b00011010, 3, 0b00000011),
    # Review comment: int8 -45 << 2 = 76 and << 3 = -104, arithmetic or not.
    ("minus45_left2_arithmetic", torch.int8, "LEFT", True, -45, 2, 76),
    ("minus45_left2_logical", torch.int8, "LEFT", False, -45, 2, 76),
    ("minus45_left3_arithmetic", torch.int8, "LEFT", True, -45, 3, -104),
    ("minus45_left3_logical", torch.int8, "LEFT", False, -45, 3, -104),
    # Contract: 64 << 1 = -128 in int8.
    ("64_left1", torch.int8, "LEFT", True, 64, 1, -128),
    # RFC: out-of-range counts, signed arithmetic right gives the sign fill,
    # everything else 0.
    ("negative_count_arith_right", torch.int8, "RIGHT", True, -102, -1, -1),
    ("negative_count_logical_right", torch.int8, "RIGHT", False, -102, -1, 0),
    ("ge_width_arith_right", torch.int16, "RIGHT", True, -2, 16, -1),
    ("ge_width_logical_right", torch.int16, "RIGHT", False, -2, 16, 0),
    ("ge_width_unsigned_arith_right", torch.uint16, "RIGHT", True, 0xFFFF, 16, 0),
    ("ge_width_left", torch.uint32, "LEFT", False, 1, 32, 0),
]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("count_kind", ["tensor", "python_int"])
@pytest.mark.parametrize("name, dtype, direction, arithmetic, x, count, expected", PADDLE_EXAMPLES,
                         ids=[e[0] for e in PADDLE_EXAMPLES])
def test_paddle_example(api, count_kind, name, dtype, direction, arithmetic, x, count, expected):
    y = make_tensor([count], dtype) if count_kind == "tensor" else count
    result = shift(api, make_tensor([x], dtype), y, direction, arithmetic)
    assert result.dtype == dtype
    assert result.tolist() == [expected]


@pytest.mark.parametrize("name, dtype, direction, arithmetic, x, count, expected", PADDLE_EXAMPLES,
                         ids=[e[0] for e in PADDLE_EXAMPLES])
def test_model_agrees_with_paddle_example(name, dtype, direction, arithmetic, x, count, expected):
    assert model.shift_scalar(x, count, dtype, direction, arithmetic) == expected


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("direction, arithmetic, x, expected", [
    ("LEFT", True, 1, 0),
    ("RIGHT", True, -5, -1),
    ("RIGHT", False, -5, 0),
    ("RIGHT", True, 100, 0),
])
def test_contract_python_int_count_257_is_taken_by_value(api, direction, arithmetic, x, expected):
    # Contract: "int8 1 << 257 is 0 (torch builtin gives 2)".
    result = shift(api, make_tensor([x], torch.int8), 257, direction, arithmetic)
    assert result.dtype == torch.int8
    assert result.tolist() == [expected]


@pytest.mark.parametrize("api", APIS)
def test_contract_zero_dim_int64_count_257_becomes_int8_1(api):
    # Contract: a 0-d int64 count tensor 257 with an int8 x is converted to int8 = 1.
    x = make_tensor([1, -3, 64, -128], torch.int8)
    result = shift(api, x, torch.tensor(257, dtype=torch.int64), "LEFT")
    assert result.dtype == torch.int8
    assert result.tolist() == [2, -6, -128, 0]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=dtype_id)
def test_pypto_signbit_example(dtype):
    import torchops

    x = torch.tensor([-5.0, 0.0, 5.0, 10.0, -2.0], dtype=dtype)
    result = torchops.signbit(x)
    assert result.dtype == torch.bool
    assert result.tolist() == [True, False, False, False, True]


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32], ids=dtype_id)
def test_pypto_signbit_example_integer_input(dtype):
    # pypto lists DT_INT8/16/32 as inputs too; for ints the sign bit is x < 0.
    import torchops

    result = torchops.signbit(torch.tensor([-5, 0, 5, 10, -2], dtype=dtype))
    assert result.tolist() == [True, False, False, False, True]


def test_model_agrees_with_pypto_example():
    x = torch.tensor([-5.0, 0.0, 5.0, 10.0, -2.0])
    assert model.signbit_model(x).tolist() == [True, False, False, False, True]
