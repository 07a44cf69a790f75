"""Hostile input: a catalogue of invalid calls (docs/semantics.md sections
1, 3, 4.2, 4.3, 5, 8).

Each row of CATALOGUE is (id, call, expected exception type, message regex).
`call` receives a registry `t` and builds its tensors through it; `t`
snapshots every tensor as it is made (arguments are evaluated before the call
runs), and the test checks afterwards that each one is unchanged: values,
shape, strides, storage offset and dtype.  The regex must match the message
(`named(...)` requires several words in any order), so the error names the
problem and not just its category.

Rows whose current behaviour breaks the contract carry a fifth element, the
reason, and are strict xfails: they turn into failures once fixed, so the
marker gets removed.

After the catalogue, two tests of counts too large for int64, which are valid
through the Python API (taken by value) and an exception, never a crash or a
wrong answer, through torch.ops.
"""

import re
import warnings

import numpy as np
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import torchops

import model
from conftest import INT_DTYPES, as_bits, dtype_id, make_tensor

# Every test runs on both call paths of the typed API (conftest.call_path).
pytestmark = [pytest.mark.usefixtures("call_path"), pytest.mark.kernels]

ops = torch.ops.torchops


# --------------------------------------------------------------------------
# the registry of tensors a call builds
class Tensors:
    def __init__(self):
        self.made = []

    def keep(self, tensor):
        """Register a tensor built elsewhere (a view, a quantized tensor)."""
        if tensor.device.type == "meta":
            values = None  # no data
        elif tensor.is_quantized:
            values = tensor.int_repr()  # a copy of the stored integers
        elif tensor.is_sparse:
            values = tensor.to_dense()
        else:
            values = tensor.clone()
        self.made.append((tensor, values, tensor.shape, tensor.dtype, tensor.device,
                          None if tensor.is_sparse else (tensor.stride(), tensor.storage_offset())))
        return tensor

    def __call__(self, dtype, shape=(3,), device="cpu"):
        """A tensor of `dtype` and `shape` with varied, valid values."""
        numel = int(np.prod(shape))
        if dtype in model.INTEGER_DTYPES:
            cycle = [1, -2, 3, 0, 5] if model.is_signed(dtype) else [1, 2, 3, 0, 5]
            tensor = make_tensor([cycle[i % 5] for i in range(numel)], dtype).reshape(shape)
        elif dtype == torch.bool:
            tensor = torch.tensor([i % 2 == 0 for i in range(numel)]).reshape(shape)
        elif dtype.is_complex:
            tensor = (torch.arange(numel, dtype=torch.float64) - 1.5).to(dtype).reshape(shape)
        else:
            tensor = (torch.arange(numel, dtype=torch.float32) - 1.5).to(dtype).reshape(shape)
        return self.keep(tensor.to(device))

    def assert_unchanged(self):
        for tensor, values, shape, dtype, device, layout in self.made:
            assert (tensor.shape, tensor.dtype, tensor.device) == (shape, dtype, device)
            if layout is not None:
                assert (tensor.stride(), tensor.storage_offset()) == layout
            if values is None:
                continue
            now = tensor.int_repr() if tensor.is_quantized else tensor.to_dense() if tensor.is_sparse else tensor
            assert torch.equal(as_bits(now), as_bits(values)), f"a {dtype} tensor was modified"


def named(*words):
    """A regex matching a message that contains every one of `words` (regexes)."""
    return "(?s)" + "".join(f"(?=.*(?:{w}))" for w in words)


def quantized(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized tensors are deprecated in PyTorch
        return torch.quantize_per_tensor(torch.tensor([1.0, 2.0, 3.0]), 0.5, 0, dtype)


I8, I16, I32, I64 = torch.int8, torch.int16, torch.int32, torch.int64
U8, U16, U32, U64 = torch.uint8, torch.uint16, torch.uint32, torch.uint64
F16, BF16, F32, F64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
C64, C128, BOOL = torch.complex64, torch.complex128, torch.bool

OP = r"torchops\.bitshift"
IN_PLACE_OP = r"torchops\.bitshift_"
LEFT, RIGHT = r"torchops\.bitwise_left_shift\b", r"torchops\.bitwise_right_shift\b"
LEFT_INPLACE, RIGHT_INPLACE = r"torchops\.bitwise_left_shift_", r"torchops\.bitwise_right_shift_"
SIGNBIT = r"torchops\.signbit"
PACKBITS, UNPACKBITS = r"torchops\.packbits", r"torchops\.unpackbits"
PACK, UNPACK = r"torchops\.pack\b", r"torchops\.unpack\b"
X, Y, OUT = r"\bx\b", r"\by\b", r"\bout\b"
FOUR_DIRECTIONS = (r"'?LEFT'?", r"'?RIGHT'?", r"'?left'?", r"'?right'?")
OVERFLOW = r"(?i:int|overflow|convert|range)"
DEVICES = (r"\bmeta\b", r"\bcpu\b")

# A row whose current behaviour breaks the contract gets a fifth element,
# (reason, the exception the call raises today -- pytest.fail.Exception when it
# raises nothing), and becomes a strict xfail: any other failure is a real one,
# and a fix turns it into an XPASS failure, so the marker gets removed.
# None today.  Rows found by this catalogue and fixed while it was written:
# the quantized rows (NotImplementedError from the dispatcher), the non-str
# directions (RuntimeError, and b"LEFT" taken as "LEFT"), None for a tensor of
# torch.ops ("Unimplemented scalar type"), and the meta rows (no error at all:
# unwritten CPU memory returned, an out left unwritten, an in-place x left
# unshifted).
DID_NOT_RAISE = pytest.fail.Exception

# (id, call, exception, message regex[, (xfail reason, what it raises today)])
CATALOGUE = [
    # --- TypeError: a dtype no shift takes (section 3), named with the argument
    ("x_float32", lambda t: torchops.bitshift(t(F32), t(I32), "LEFT"), TypeError, named(OP, X, "float32")),
    ("x_float16_ops_python_count", lambda t: ops.bitshift(t(F16), 2, "RIGHT"), TypeError, named(OP, X, "float16")),
    ("x_bfloat16_out", lambda t: torchops.bitshift(t(BF16), t(I16), "LEFT", out=t(I16)), TypeError,
     named(OP, X, "bfloat16")),
    ("x_bool_paddle", lambda t: torchops.bitwise_left_shift(t(BOOL), 1), TypeError, named(LEFT, X, "bool")),
    ("x_complex64_out", lambda t: torchops.bitshift(t(C64), t(I8), "RIGHT", out=t(I8)), TypeError,
     named(OP, X, "complex64")),
    ("x_float64_in_place", lambda t: torchops.bitwise_right_shift_(t(F64), 1), TypeError,
     named(RIGHT_INPLACE, X, "float64")),
    ("x_bool_in_place_ops", lambda t: ops.bitshift_(t(BOOL), t(I64), "LEFT"), TypeError,
     named(IN_PLACE_OP, X, "bool")),
    ("y_float32", lambda t: torchops.bitshift(t(I32), t(F32), "LEFT"), TypeError, named(OP, Y, "float32")),
    ("y_bool", lambda t: torchops.bitwise_right_shift(t(I8), t(BOOL)), TypeError, named(RIGHT, Y, "bool")),
    ("y_complex128_zero_dim", lambda t: torchops.bitshift(t(I64), t(C128, ()), "LEFT"), TypeError,
     named(OP, Y, "complex128")),
    ("y_float16_ops_out", lambda t: ops.bitshift.out(t(I16), t(F16), "LEFT", out=t(I16)), TypeError,
     named(OP, Y, "float16")),
    ("y_float64_in_place", lambda t: torchops.bitwise_left_shift_(t(I32), t(F64)), TypeError,
     named(LEFT_INPLACE, Y, "float64")),
    ("python_float_count", lambda t: torchops.bitshift(t(I8), 1.0, "LEFT"), TypeError, named(OP, "float")),
    ("python_bool_count", lambda t: torchops.bitshift(t(I8), True, "LEFT"), TypeError, named(OP, "bool")),
    ("python_float_count_ops", lambda t: ops.bitshift(t(I8), 2.5, "RIGHT"), TypeError, named(OP, Y, "float")),
    ("python_bool_count_ops_out", lambda t: ops.bitshift(t(I8), False, "RIGHT", out=t(I8)), TypeError,
     named(OP, Y, "bool")),
    ("python_bool_count_in_place", lambda t: torchops.bitwise_left_shift_(t(I8), False), TypeError,
     named(LEFT_INPLACE, "bool")),
    ("python_float_count_in_place_ops", lambda t: ops.bitshift_(t(I8), 1.5, "LEFT"), TypeError,
     named(IN_PLACE_OP, "float")),
    ("unpromotable_uint16_int32", lambda t: torchops.bitshift(t(U16), t(I32), "LEFT"), TypeError,
     named(OP, "uint16", "int32")),
    ("unpromotable_int8_uint64_out", lambda t: torchops.bitshift(t(I8), t(U64), "RIGHT", out=t(U64)), TypeError,
     named(OP, "int8", "uint64")),
    ("unpromotable_uint32_uint16_ops", lambda t: ops.bitshift(t(U32), t(U16), "LEFT"), TypeError,
     named(OP, "uint32", "uint16")),
    ("unpromotable_in_place", lambda t: torchops.bitwise_left_shift_(t(U32), t(I8)), TypeError,
     named(LEFT_INPLACE, "uint32", "int8")),
    ("signbit_complex64", lambda t: torchops.signbit(t(C64)), TypeError, named(SIGNBIT, X, "complex64")),
    ("signbit_complex128_ops_out", lambda t: ops.signbit.out(t(C128), out=t(BOOL)), TypeError,
     named(SIGNBIT, X, "complex128")),
    ("signbit_float8_e4m3fn", lambda t: torchops.signbit(t.keep(torch.zeros(3).to(torch.float8_e4m3fn))), TypeError,
     named(SIGNBIT, X, "float8_e4m3fn")),
    ("signbit_float8_e5m2_out", lambda t: torchops.signbit(t.keep(torch.zeros(3).to(torch.float8_e5m2)), out=t(BOOL)),
     TypeError, named(SIGNBIT, X, "float8_e5m2")),
    ("x_quantized", lambda t: torchops.bitshift(t.keep(quantized(torch.quint8)), 1, "LEFT"), TypeError,
     named(OP, X, "quint8")),
    ("y_quantized", lambda t: torchops.bitshift(t(I8), t.keep(quantized(torch.qint8)), "LEFT"), TypeError,
     named(OP, Y, "qint8")),
    ("signbit_quantized", lambda t: torchops.signbit(t.keep(quantized(torch.quint8))), TypeError,
     named(SIGNBIT, X, "quint8")),

    # --- ValueError: a direction that is not one of the four (section 1), listing them
    ("direction_Left", lambda t: torchops.bitshift(t(I8), t(I8), "Left"), ValueError,
     named(OP, "direction", "Left", *FOUR_DIRECTIONS)),
    ("direction_L_python_count", lambda t: torchops.bitshift(t(I8), 1, "L"), ValueError,
     named(OP, "direction", *FOUR_DIRECTIONS)),
    ("direction_empty_out", lambda t: torchops.bitshift(t(U8), t(U8), "", out=t(U8)), ValueError,
     named(OP, "direction", *FOUR_DIRECTIONS)),
    ("direction_trailing_space_ops", lambda t: ops.bitshift(t(I32), t(I32), "LEFT "), ValueError,
     named(OP, "direction", *FOUR_DIRECTIONS)),
    ("direction_up_in_place_ops", lambda t: ops.bitshift_(t(I64), t(I64), "up"), ValueError,
     named(IN_PLACE_OP, "direction", *FOUR_DIRECTIONS)),
    ("direction_RIGHTS_in_place_python_count", lambda t: ops.bitshift_(t(U64), 3, "RIGHTS"), ValueError,
     named(IN_PLACE_OP, "direction", *FOUR_DIRECTIONS)),
    # --- TypeError: a direction that is not a str (section 8), through the Python API
    ("direction_int", lambda t: torchops.bitshift(t(I8), t(I8), 5), TypeError,
     named(OP, "direction", r"\bint\b", *FOUR_DIRECTIONS)),
    ("direction_none_python_count", lambda t: torchops.bitshift(t(I8), 1, None), TypeError,
     named(OP, "direction", "NoneType", *FOUR_DIRECTIONS)),
    ("direction_bytes", lambda t: torchops.bitshift(t(I8), 1, b"LEFT"), TypeError,
     named(OP, "direction", "bytes")),
    ("direction_bytes_out", lambda t: torchops.bitshift(t(I8), t(I8), b"RIGHT", out=t(I8)), TypeError,
     named(OP, "direction", "bytes")),
    # torch.ops itself matches arguments against the schema: PyTorch's RuntimeError
    ("direction_int_ops", lambda t: ops.bitshift(t(I8), t(I8), 5), RuntimeError, named("direction", "str")),
    # --- TypeError: a flag that is not a bool (section 11); torch.ops would take None as False
    ("arithmetic_str", lambda t: torchops.bitshift(t(I8), t(I8), "RIGHT", "yes"), TypeError,
     named(OP, "arithmetic", "bool", r"\bstr\b")),
    ("arithmetic_none", lambda t: torchops.bitshift(t(I8), t(I8), "RIGHT", None), TypeError,
     named(OP, "arithmetic", "bool", "NoneType")),
    ("arithmetic_int_python_count", lambda t: torchops.bitshift(t(I8), 1, "RIGHT", 1), TypeError,
     named(OP, "arithmetic", "bool", r"\bint\b")),
    ("arithmetic_zero_out", lambda t: torchops.bitshift(t(I16), t(I16), "RIGHT", 0, out=t(I16)), TypeError,
     named(OP, "arithmetic", "bool", r"\bint\b")),
    ("is_arithmetic_none_paddle", lambda t: torchops.bitwise_right_shift(t(I8), t(I8), None), TypeError,
     named(RIGHT, "is_arithmetic", "bool", "NoneType")),
    ("is_arithmetic_float_paddle_out", lambda t: torchops.bitwise_left_shift(t(U8), 2, 1.0, out=t(U8)), TypeError,
     named(LEFT, "is_arithmetic", "bool", "float")),
    ("is_arithmetic_none_in_place", lambda t: torchops.bitwise_right_shift_(t(I32), t(I32), None), TypeError,
     named(RIGHT_INPLACE, "is_arithmetic", "bool", "NoneType")),
    ("is_arithmetic_tensor_in_place_python_count", lambda t: torchops.bitwise_right_shift_(t(I64), 3, t(BOOL, ())),
     TypeError, named(RIGHT_INPLACE, "is_arithmetic", "bool", "Tensor")),

    # --- RuntimeError: shapes (section 3, 5)
    ("shapes_3_4", lambda t: torchops.bitshift(t(I32, (3,)), t(I32, (4,)), "LEFT"), RuntimeError,
     named(OP, "broadcast", r"\b3\b", r"\b4\b")),
    ("shapes_2x3_3x2_ops_out", lambda t: ops.bitshift.out(t(I8, (2, 3)), t(I8, (3, 2)), "RIGHT", out=t(I8, (2, 3))),
     RuntimeError, named(OP, "broadcast")),
    ("shapes_0_2_paddle", lambda t: torchops.bitwise_right_shift(t(U16, (0,)), t(U16, (2,))), RuntimeError,
     named(RIGHT, "broadcast", r"\b0\b", r"\b2\b")),
    ("in_place_grows_3_to_2x3", lambda t: torchops.bitwise_left_shift_(t(I16, (3,)), t(I16, (2, 1))), RuntimeError,
     named(LEFT_INPLACE, "shape", r"\b2, 3\b")),
    ("in_place_grows_0d_ops", lambda t: ops.bitshift_(t(I16, ()), t(I16, (2,)), "LEFT"), RuntimeError,
     named(IN_PLACE_OP, "shape")),
    ("in_place_grows_1_to_5", lambda t: torchops.bitwise_right_shift_(t(U32, (1,)), t(U32, (5,)), False),
     RuntimeError, named(RIGHT_INPLACE, "shape", r"\b5\b")),
    ("in_place_int8_by_int64", lambda t: torchops.bitwise_left_shift_(t(I8), t(I64)), RuntimeError,
     named(LEFT_INPLACE, "dtype", "int8", "int64")),
    ("in_place_uint8_by_int8_is_int16", lambda t: ops.bitshift_(t(U8), t(I8), "RIGHT"), RuntimeError,
     named(IN_PLACE_OP, "dtype", "uint8", "int16")),
    ("in_place_zero_dim_int8_by_zero_dim_int16", lambda t: torchops.bitwise_right_shift_(t(I8, ()), t(I16, ())),
     RuntimeError, named(RIGHT_INPLACE, "dtype", "int8", "int16")),

    # --- RuntimeError: out dtype (section 5; out= never converts)
    ("out_int32_for_int8", lambda t: torchops.bitshift(t(I8), t(I8), "LEFT", out=t(I32)), RuntimeError,
     named(OP, OUT, "int32", "int8")),
    ("out_int8_for_int16_result", lambda t: torchops.bitwise_right_shift(t(U8), t(I8), out=t(I8)), RuntimeError,
     named(RIGHT, OUT, "int8", "int16")),
    ("out_int16_python_count_ops", lambda t: ops.bitshift.Scalar_out(t(I8), 1, "LEFT", out=t(I16)), RuntimeError,
     named(OP, OUT, "int16", "int8")),
    ("out_float32_for_int32", lambda t: torchops.bitshift(t(I32), 4, "RIGHT", out=t(F32)), RuntimeError,
     named(OP, OUT, "float32", "int32")),
    ("out_uint64_for_int64_empty", lambda t: torchops.bitshift(t(I64), t(I64), "LEFT", out=t(U64, (0,))),
     RuntimeError, named(OP, OUT, "uint64", "int64")),
    ("signbit_out_uint8", lambda t: torchops.signbit(t(F32), out=t(U8)), RuntimeError,
     named(SIGNBIT, OUT, "uint8", "bool")),
    ("signbit_out_float32_ops", lambda t: ops.signbit.out(t(I8), out=t(F32)), RuntimeError,
     named(SIGNBIT, OUT, "float32", "bool")),
    ("out_a_list", lambda t: torchops.bitshift(t(I8), t(I8), "LEFT", out=[0, 0, 0]), TypeError,
     named(OP, OUT, "tensor", "list")),
    ("out_a_list_paddle", lambda t: torchops.bitwise_right_shift(t(I8), 1, out=[0, 0, 0]), TypeError,
     named(RIGHT, OUT, "tensor", "list")),
    ("signbit_out_a_tuple", lambda t: torchops.signbit(t(F32), out=(0,)), TypeError,
     named(SIGNBIT, OUT, "tensor", "tuple")),

    # --- RuntimeError: a meta tensor beside CPU ones (section 8), naming both devices
    ("meta_y", lambda t: torchops.bitshift(t(I8), t(I8, device="meta"), "LEFT"), RuntimeError,
     named(OP, Y, *DEVICES)),
    ("meta_zero_dim_y", lambda t: torchops.bitshift(t(I8), t(I8, (), device="meta"), "RIGHT"), RuntimeError,
     named(OP, Y, *DEVICES)),
    ("meta_x", lambda t: torchops.bitshift(t(I8, device="meta"), t(I8), "LEFT"), RuntimeError,
     named(OP, *DEVICES)),
    ("meta_x_zero_dim_cpu_y", lambda t: ops.bitshift(t(I8, device="meta"), t(I8, ()), "LEFT"), RuntimeError,
     named(OP, *DEVICES)),
    ("meta_out", lambda t: torchops.bitshift(t(I8), t(I8), "LEFT", out=t(I8, device="meta")), RuntimeError,
     named(OP, OUT, *DEVICES)),
    ("meta_x_cpu_out", lambda t: torchops.bitshift(t(I8, device="meta"), 1, "LEFT", out=t(I8)), RuntimeError,
     named(OP, OUT, *DEVICES)),
    ("meta_y_in_place", lambda t: torchops.bitwise_left_shift_(t(I8), t(I8, device="meta")), RuntimeError,
     named(LEFT_INPLACE, Y, *DEVICES)),
    ("meta_y_in_place_ops_out_of_range", lambda t: ops.bitshift_(t(I64), t(I64, device="meta"), "RIGHT", False),
     RuntimeError, named(IN_PLACE_OP, Y, *DEVICES)),
    ("signbit_meta_out", lambda t: torchops.signbit(t(F32), out=t(BOOL, device="meta")), RuntimeError,
     named(SIGNBIT, OUT, *DEVICES)),
    ("signbit_meta_x_cpu_out", lambda t: torchops.signbit(t(F32, device="meta"), out=t(BOOL)), RuntimeError,
     named(SIGNBIT, OUT, *DEVICES)),

    # --- Python objects that are neither a tensor nor an int (section 4.3, 7)
    ("y_none", lambda t: torchops.bitshift(t(I8), None, "LEFT"), TypeError, named(OP, Y, "NoneType")),
    ("y_list", lambda t: torchops.bitwise_left_shift(t(I8), [1, 2, 3]), TypeError, named(LEFT, Y, "list")),
    ("y_str", lambda t: torchops.bitshift(t(I8), "1", "RIGHT"), TypeError, named(OP, Y, "str")),
    ("y_numpy_array", lambda t: torchops.bitshift(t(I8), np.array([1, 2, 3], dtype=np.int8), "LEFT"), TypeError,
     named(OP, Y, "ndarray")),
    # NumPy integers are ints (tests/test_bitshift.py); NumPy floats, bools and float arrays are not
    ("y_numpy_float", lambda t: torchops.bitwise_right_shift(t(I64), np.float64(2)), TypeError,
     named(RIGHT, Y, "float64")),
    ("y_numpy_bool", lambda t: torchops.bitwise_left_shift(t(I8), np.bool_(True)), TypeError, named(LEFT, Y, "bool")),
    ("y_numpy_0d_float_array", lambda t: torchops.bitshift(t(I8), np.array(2.0), "LEFT"), TypeError,
     named(OP, Y, "ndarray")),
    ("x_numpy_float", lambda t: torchops.bitshift(np.float32(1), t(I8), "LEFT"), TypeError, named(OP, X, "float32")),
    ("y_none_in_place", lambda t: torchops.bitwise_left_shift_(t(I8), None), TypeError, named(LEFT_INPLACE, Y)),
    # None for a Tensor argument of torch.ops (PyTorch passes an undefined tensor): TypeError
    # naming the argument (section 8)
    ("y_none_ops", lambda t: ops.bitshift(t(I8), None, "LEFT"), TypeError, named(OP, Y, "None")),
    ("x_none_ops", lambda t: ops.bitshift.default(None, t(I8), "RIGHT"), TypeError, named(OP, X, "None")),
    ("x_none_ops_in_place", lambda t: ops.bitshift_.default(None, t(I8), "LEFT"), TypeError,
     named(IN_PLACE_OP, X, "None")),
    ("out_none_ops", lambda t: ops.bitshift.out(t(I8), t(I8), "LEFT", out=None), TypeError, named(OP, OUT, "None")),
    ("out_none_ops_python_count", lambda t: ops.bitshift.Scalar_out(t(I8), 1, "LEFT", out=None), TypeError,
     named(OP, OUT, "None")),
    ("signbit_out_none_ops", lambda t: ops.signbit.out(t(F32), out=None), TypeError, named(SIGNBIT, OUT, "None")),
    ("signbit_x_none_ops_out", lambda t: ops.signbit.out(None, out=t(BOOL)), TypeError, named(SIGNBIT, X, "None")),
    # no tensor at all: the dispatcher cannot pick a kernel (PyTorch's NotImplementedError)
    ("signbit_none_ops", lambda t: ops.signbit(None), (TypeError, NotImplementedError), named("signbit")),
    ("y_none_ops_python_count_overload", lambda t: ops.bitshift.Scalar(t(I8), None, "LEFT"), (TypeError, RuntimeError),
     named(r"\by\b")),
    ("x_none", lambda t: torchops.bitshift(None, t(I8), "LEFT"), TypeError, named(OP, X, "NoneType")),
    ("x_float", lambda t: torchops.bitwise_left_shift(1.5, t(I8)), TypeError, named(LEFT, X, "float")),
    ("x_list", lambda t: torchops.bitshift([1, 2, 3], t(I8), "LEFT"), TypeError, named(OP, X, "list")),
    ("x_numpy_array", lambda t: torchops.bitshift(np.array([1, 2, 3], dtype=np.int8), t(I8), "LEFT"), TypeError,
     named(OP, X, "ndarray")),
    ("x_bool_python", lambda t: torchops.bitwise_right_shift(True, t(I8)), TypeError, named(RIGHT, X, "bool")),
    ("x_and_y_python_ints", lambda t: torchops.bitshift(1, 2, "LEFT"), TypeError, named(OP, "int")),
    ("x_python_int_y_float", lambda t: torchops.bitshift(1, t(F32), "LEFT"), TypeError, named(OP, Y, "float32")),
    ("x_300_int8", lambda t: torchops.bitshift(300, t(I8), "LEFT"), ValueError, named(OP, r"\b300\b", "int8")),
    ("x_minus_1_uint8", lambda t: torchops.bitwise_left_shift(-1, t(U8)), ValueError, named(LEFT, r"-1\b", "uint8")),
    ("x_2_64_uint64", lambda t: torchops.bitshift(2**64, t(U64), "RIGHT"), ValueError,
     named(OP, str(2**64), "uint64")),
    ("x_2_63_int64_out", lambda t: torchops.bitshift(2**63, t(I64), "LEFT", out=t(I64)), ValueError,
     named(OP, str(2**63), "int64")),
    ("x_int_in_place", lambda t: torchops.bitwise_left_shift_(5, t(I8)), TypeError, named(LEFT_INPLACE, X, "int")),
    ("x_none_in_place", lambda t: torchops.bitwise_right_shift_(None, 1), TypeError, named(RIGHT_INPLACE, X)),
    ("signbit_none", lambda t: torchops.signbit(None), TypeError, named(SIGNBIT, X, "NoneType")),
    ("signbit_float", lambda t: torchops.signbit(-1.0), TypeError, named(SIGNBIT, X, "float")),
    ("signbit_list", lambda t: torchops.signbit([-1.0]), TypeError, named(SIGNBIT, X, "list")),
    ("signbit_numpy_array", lambda t: torchops.signbit(np.array([-1.0])), TypeError, named(SIGNBIT, X, "ndarray")),
    ("signbit_numpy_array_ops", lambda t: ops.signbit(np.array([-1.0])), (TypeError, RuntimeError),
     named(r"\bx\b", "Tensor")),
    # other layouts than strided: the device-generic kernel, which every backend key without a
    # kernel of its own reaches (sparse ones too), refuses them, naming the argument
    ("x_sparse", lambda t: torchops.bitshift(t.keep(t(I8).to_sparse()), 1, "LEFT"), TypeError,
     named(OP, X, "strided", "sparse_coo")),
    ("y_sparse_in_place", lambda t: torchops.bitwise_left_shift_(t(I8), t.keep(t(I8).to_sparse())), TypeError,
     named(LEFT_INPLACE, Y, "strided", "sparse_coo")),
    ("out_sparse_paddle", lambda t: torchops.bitwise_right_shift(t(I8), 1, out=t.keep(t(I8).to_sparse())),
     TypeError, named(RIGHT, OUT, "strided", "sparse_coo")),
    ("signbit_sparse", lambda t: torchops.signbit(t.keep(t(F32).to_sparse())), TypeError,
     named(SIGNBIT, X, "strided", "sparse_coo")),
    ("x_sparse_ops", lambda t: ops.bitshift(t.keep(t(I8).to_sparse()), 1, "LEFT"), TypeError,
     named(OP, X, "strided", "sparse_coo")),
    ("out_sparse_ops", lambda t: ops.signbit.out(t(F32), out=t.keep(torch.zeros(3, dtype=torch.bool).to_sparse())),
     TypeError, named(SIGNBIT, OUT, "strided", "sparse_coo")),

    # --- counts beyond what c10::Scalar holds, [-2^63, 2^64), through torch.ops (section 4.2)
    ("ops_count_2_64", lambda t: ops.bitshift(t(U64), 2**64, "LEFT"), OverflowError, named(OVERFLOW)),
    ("ops_count_minus_2_63_minus_1", lambda t: ops.bitshift(t(I64), -2**63 - 1, "RIGHT"), OverflowError,
     named(OVERFLOW)),
    ("ops_count_2_100_out", lambda t: ops.bitshift.Scalar_out(t(I8), 2**100, "RIGHT", out=t(I8)), OverflowError,
     named(OVERFLOW)),
    ("ops_count_2_64_in_place", lambda t: ops.bitshift_(t(I32), 2**64, "LEFT"), OverflowError, named(OVERFLOW)),
    ("ops_count_minus_2_70_in_place", lambda t: ops.bitshift_.Scalar(t(I16), -2**70, "RIGHT", False), OverflowError,
     named(OVERFLOW)),

    # --- the packing ops (packbits, unpackbits, pack, unpack): x's dtype, bits, bitorder, dim,
    # count, out (docs/semantics.md's list of their errors), and what every function refuses
    ("packbits_float32", lambda t: torchops.packbits(t(F32)), TypeError, named(PACKBITS, X, "float32", "x != 0")),
    ("pack_bfloat16_ops_out", lambda t: ops.pack.out(t(BF16), 4, out=t(U8)), TypeError, named(PACK, X, "bfloat16")),
    ("pack_complex64", lambda t: torchops.pack(t(C64), 2), TypeError, named(PACK, X, "complex64")),
    ("unpackbits_int8", lambda t: torchops.unpackbits(t(I8)), TypeError, named(UNPACKBITS, X, "uint8", "int8")),
    ("unpack_bool_ops", lambda t: ops.unpack(t(BOOL), 4), TypeError, named(UNPACK, X, "uint8", "bool")),
    ("pack_bits_3", lambda t: torchops.pack(t(I32), 3), ValueError, named(PACK, "bits", r"\b3\b")),
    ("unpack_bits_8_ops_out", lambda t: ops.unpack.out(t(U8), 8, out=t(U8)), ValueError,
     named(UNPACK, "bits", r"\b8\b")),
    ("packbits_bitorder_b", lambda t: torchops.packbits(t(I8), -1, "b"), ValueError,
     named(PACKBITS, "bitorder", "'big'", "'little'")),
    ("unpack_bitorder_empty_ops", lambda t: ops.unpack(t(U8), 2, -1, None, ""), ValueError,
     named(UNPACK, "bitorder", "'big'", "'little'")),
    ("packbits_dim_2_of_2_d", lambda t: torchops.packbits(t(I16, (2, 3)), 2), IndexError,
     named(PACKBITS, "dim", r"\b2\b", "2-d")),
    ("unpack_dim_1_of_0_d_ops", lambda t: ops.unpack(t(U8, ()), 4, 1), IndexError, named(UNPACK, "dim", "0-d")),
    ("unpackbits_count_too_negative", lambda t: torchops.unpackbits(t(U8, (2,)), count=-17), ValueError,
     named(UNPACKBITS, "count", "-17", r"\b16 bits\b")),
    ("unpack_count_too_negative_flattened_out", lambda t: torchops.unpack(t(U8, (2, 2)), 4, None, -9, out=t(U8)),
     ValueError, named(UNPACK, "count", "-9", r"\b8 fields\b", "flattened")),
    ("packbits_out_int8", lambda t: torchops.packbits(t(I8), out=t(I8)), RuntimeError,
     named(PACKBITS, OUT, "int8", "uint8")),
    ("unpack_signed_out_uint8_ops", lambda t: ops.unpack.out(t(U8), 4, signed=True, out=t(U8, (6,))), RuntimeError,
     named(UNPACK, OUT, "uint8", "int8")),
    ("unpackbits_out_a_list", lambda t: torchops.unpackbits(t(U8), out=[0] * 24), TypeError,
     named(UNPACKBITS, OUT, "tensor", "list")),
    ("packbits_meta_out", lambda t: torchops.packbits(t(I8), out=t(U8, (1,), device="meta")), RuntimeError,
     named(PACKBITS, OUT, *DEVICES)),
    ("unpack_meta_x_cpu_out_ops", lambda t: ops.unpack.out(t(U8, device="meta"), 2, out=t(U8, (12,))), RuntimeError,
     named(UNPACK, OUT, *DEVICES)),
    ("pack_sparse", lambda t: torchops.pack(t.keep(t(I8).to_sparse()), 2), TypeError,
     named(PACK, X, "strided", "sparse_coo")),
    ("unpackbits_sparse_ops", lambda t: ops.unpackbits(t.keep(t(U8).to_sparse())), TypeError,
     named(UNPACKBITS, X, "strided", "sparse_coo")),
    ("packbits_quantized", lambda t: torchops.packbits(t.keep(quantized(torch.quint8))), TypeError,
     named(PACKBITS, X, "quint8")),
    ("packbits_none", lambda t: torchops.packbits(None), TypeError, named(PACKBITS, X, "None")),
    ("unpack_none_ops_out", lambda t: ops.unpack.out(None, 4, out=t(U8)), TypeError, named(UNPACK, X, "None")),
    ("pack_list", lambda t: torchops.pack([1, 2, 3], 2), TypeError, named(PACK, X, "list")),
    ("unpackbits_numpy_array", lambda t: torchops.unpackbits(np.array([1, 2], dtype=np.uint8)), TypeError,
     named(UNPACKBITS, X, "ndarray")),
    # arguments of another type than the schema's: the typed functions' TypeError naming the
    # argument, as for a shift's direction; torch.ops's own schema RuntimeError
    ("pack_bits_float", lambda t: torchops.pack(t(I8), 2.0), TypeError, named(PACK, "bits", "float")),
    ("pack_bits_float_ops", lambda t: ops.pack(t(I8), 2.0), RuntimeError, named("bits", r"\bint\b")),
    ("unpackbits_bitorder_int", lambda t: torchops.unpackbits(t(U8), -1, None, 10), TypeError,
     named(UNPACKBITS, "bitorder", r"\bint\b")),
    ("packbits_dim_str", lambda t: torchops.packbits(t(I8), "0"), TypeError, named(PACKBITS, "dim", r"\bstr\b")),
    ("unpack_count_float", lambda t: torchops.unpack(t(U8), 4, -1, 1.5), TypeError, named(UNPACK, "count", "float")),
    ("unpack_signed_none", lambda t: torchops.unpack(t(U8), 4, signed=None), TypeError,
     named(UNPACK, "signed", "bool", "NoneType")),
    # --- ValueError: a result no tensor can hold (section 8), refused before any allocation,
    # naming what set its size; an out= keeps its shape. Expanded operands are views of a
    # registered element (their base is what is checked afterwards).
    ("unpackbits_count_beyond_int64_out", lambda t: torchops.unpackbits(t(U8, (17, 3)), count=2**62, out=t(U8, (5,))),
     ValueError, named(UNPACKBITS, r"count 4611686018427387904\b", r"\[17, 4611686018427387904\]", r"2\*\*63")),
    ("unpack_count_beyond_int64_ops", lambda t: ops.unpack(t(U8, (3, 3)), 2, 0, 2**62), ValueError,
     named(UNPACK, r"count 4611686018427387904\b", r"\[4611686018427387904, 3\]")),
    ("unpack_expanded_bytes", lambda t: torchops.unpack(t(U8, (1,)).expand(2**62), 4), ValueError,
     named(UNPACK, r"4611686018427387904 bytes along dim 0", "fields")),
    ("unpackbits_expanded_rows_out", lambda t: torchops.unpackbits(t(U8, (1, 1)).expand(2**60, 5), out=t(U8, (2,))),
     ValueError, named(UNPACKBITS, r"x of shape \[1152921504606846976, 5\]", r"\[1152921504606846976, 40\]")),
    ("shift_broadcast_beyond_int64_out",
     lambda t: torchops.bitwise_left_shift(t(I8, (1, 1)).expand(2**32, 1), t(I8, (1, 1)).expand(1, 2**32), out=t(I8)),
     ValueError, named(LEFT, r"x of shape \[4294967296, 1\] and y of shape \[1, 4294967296\]",
                       r"\[4294967296, 4294967296\] \(int8\)", r"2\*\*63")),
    ("shift_broadcast_beyond_int64_ops",
     lambda t: ops.bitshift(t(I64, (1, 1)).expand(2**31, 1), t(I64, (1, 1)).expand(1, 2**31), "RIGHT"),
     ValueError, named(OP, r"\[2147483648, 2147483648\] \(int64\)")),
    ("hamming_distance_beyond_int64_bytes_out",
     lambda t: torchops.hamming_distance(t(U8, (1, 4)).expand(2**31, 4), t(U8, (1, 4)).expand(2**31, 4), out=t(I32)),
     ValueError, named(r"torchops\.hamming_distance", r"x1 of shape \[2147483648, 4\] and x2 of shape",
                       r"\[2147483648, 2147483648\] \(int32\)")),
    ("hamming_topk_k_beyond_int64_out",
     lambda t: torchops.hamming_topk(t(U8, (1, 4)).expand(2**32, 4), t(U8, (1, 4)).expand(2**32, 4), 2**32,
                                     out=(t(I32), t(I64))),
     ValueError, named(r"torchops\.hamming_topk", r"k 4294967296\b", r"\[4294967296, 4294967296\] \(int64\)")),
    # --- OutOfMemoryError: a result that int64 holds and memory does not (2**58 bytes and
    # more: beyond every 64-bit address space), through each op with out= and each kind of
    # resize (TensorIterator's, the packing and search ops' own), then a new result: every
    # out keeps its sizes, strides and data, and the error names the argument and the bytes.
    ("shift_tensor_count_out_beyond_memory",
     lambda t: torchops.bitshift(t(I8, (1, 1)).expand(2**31, 1), t(I8, (1, 1)).expand(1, 2**30), "LEFT", out=t(I8)),
     torch.OutOfMemoryError, named(OP, OUT, r"\[2147483648, 1073741824\]", "2305843009213693952 bytes")),
    ("shift_python_count_out_beyond_memory",
     lambda t: torchops.bitwise_right_shift(t(I64, (1,)).expand(2**58), 3, out=t(I64)),
     torch.OutOfMemoryError, named(RIGHT, OUT, r"\[288230376151711744\]", "2305843009213693952 bytes")),
    ("signbit_out_beyond_memory", lambda t: torchops.signbit(t(F32, (1,)).expand(2**61), out=t(BOOL)),
     torch.OutOfMemoryError, named(SIGNBIT, OUT, r"\[2305843009213693952\]", "2305843009213693952 bytes")),
    ("bitwise_count_out_beyond_memory", lambda t: torchops.bitwise_count(t(I16, (1,)).expand(2**61), out=t(U8)),
     torch.OutOfMemoryError, named(r"torchops\.bitwise_count", OUT, "2305843009213693952 bytes")),
    ("packbits_out_beyond_memory", lambda t: torchops.packbits(t(U8, (1,)).expand(2**62), out=t(U8)),
     torch.OutOfMemoryError, named(PACKBITS, OUT, r"\[576460752303423488\]", "576460752303423488 bytes")),
    ("unpackbits_count_out_beyond_memory",
     lambda t: torchops.unpackbits(t(U8, (17, 3)), dim=0, count=2**61, out=t(U8, (4,))),
     torch.OutOfMemoryError, named(UNPACKBITS, OUT, r"\[2305843009213693952, 3\]", "6917529027641081856 bytes")),
    ("pack_out_beyond_memory", lambda t: torchops.pack(t(U8, (1,)).expand(2**62), 2, out=t(U8, (2, 2))),
     torch.OutOfMemoryError, named(PACK, OUT, r"\[1152921504606846976\]", "1152921504606846976 bytes")),
    ("unpack_count_transposed_out_beyond_memory",
     lambda t: torchops.unpack(t(U8, (3, 5)), 4, 0, 2**60, out=t.keep(t(U8, (5, 3)).t())),
     torch.OutOfMemoryError, named(UNPACK, OUT, r"\[1152921504606846976, 5\]", "5764607523034234880 bytes")),
    ("hamming_distance_out_beyond_memory",
     lambda t: torchops.hamming_distance(t(U8, (1, 4)).expand(2**31, 4), t(U8, (1, 4)).expand(2**29, 4), out=t(I32)),
     torch.OutOfMemoryError, named(r"torchops\.hamming_distance", OUT, r"\[2147483648, 536870912\]",
                                   "4611686018427387904 bytes")),
    ("hamming_topk_out_beyond_memory",
     lambda t: torchops.hamming_topk(t(U8, (1, 4)).expand(2**28, 4), t(U8, (1, 4)).expand(2**30, 4), 2**30,
                                     out=(t(I32, (2, 2)), t(I64, (2, 2)))),
     torch.OutOfMemoryError, named(r"torchops\.hamming_topk", r"\bvalues\b", r"\[268435456, 1073741824\]",
                                   "1152921504606846976 bytes")),
    ("unpackbits_result_beyond_memory", lambda t: torchops.unpackbits(t(U8, (17, 3)), dim=0, count=2**61),
     torch.OutOfMemoryError, named(UNPACKBITS, "result", r"\[2305843009213693952, 3\]", "6917529027641081856 bytes")),
    ("hamming_distance_result_beyond_memory",
     lambda t: torchops.hamming_distance(t(U8, (1, 4)).expand(2**31, 4), t(U8, (1, 4)).expand(2**29, 4)),
     torch.OutOfMemoryError, named(r"torchops\.hamming_distance", "result", "4611686018427387904 bytes")),
]


def _params():
    ids = [row[0] for row in CATALOGUE]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for row in CATALOGUE:
        marks = []
        if len(row) == 5:
            reason, raises = row[4]
            marks = [pytest.mark.xfail(strict=True, reason=reason, raises=raises)]
        yield pytest.param(*row[1:4], id=row[0], marks=marks)


# The packing ops' typed functions, written apart from their ops: their rows wait for them.
PACKING_FUNCTIONS = ("packbits", "unpackbits", "pack", "unpack")


@pytest.mark.parametrize("call, exception, message", list(_params()))
def test_invalid_call(call, exception, message):
    absent = [name for name in call.__code__.co_names if name in PACKING_FUNCTIONS and not hasattr(torchops, name)]
    if "torchops" in call.__code__.co_names and absent:
        pytest.skip(f"torchops.{absent[0]} is not in torchops/ops.py yet")
    t = Tensors()
    with pytest.raises(exception) as info:
        call(t)
    assert re.search(message, str(info.value)), f"{message!r} does not match {str(info.value)!r}"
    # A call of the typed API names the function called, first (the op's messages are said
    # again with it): the function is the name of the typed API in the row's code.
    called = [name for name in call.__code__.co_names if name in torchops.__all__]
    if "torchops" in call.__code__.co_names and called:
        assert str(info.value).startswith(f"torchops.{called[0]}: "), str(info.value)
    t.assert_unchanged()


def test_catalogue_exception_types_are_the_contracts():
    """A guard on the table itself: only the exception types the contract
    (or PyTorch's own argument parsing) gives."""
    allowed = {TypeError, ValueError, RuntimeError, OverflowError, NotImplementedError,
               IndexError,  # a packing op's dim out of range: PyTorch's own exception for it
               torch.OutOfMemoryError}  # a result memory cannot hold
    for row in CATALOGUE:
        types = row[2] if isinstance(row[2], tuple) else (row[2],)
        assert set(types) <= allowed, row[0]


# --------------------------------------------------------------------------
# counts too large for int64
HUGE_COUNTS = [2**63, 2**64 - 1, 2**64, 2**64 + 1, 2**100, 10**40, -2**63 - 1, -2**64, -2**100]


# The catalogue's results that no tensor can hold, from expanded operands, once more with fake
# tensors (torch.compile's and torch.export's): the fake kernels refuse them in the same words
# (tests/calls.py's BAD_CALLS has the count rows, which every path and the fake kernels take).
BEYOND_INT64 = [row for row in CATALOGUE if "beyond_int64" in row[0] or "expanded" in row[0]]


@pytest.mark.parametrize("call", [row[1] for row in BEYOND_INT64], ids=[row[0] for row in BEYOND_INT64])
def test_a_result_no_tensor_can_hold_is_refused_by_the_fake_kernels_too(call):
    with pytest.raises(ValueError) as eager:
        call(Tensors())
    mode = FakeTensorMode()
    fakes = Tensors()
    fakes.keep = mode.from_tensor  # each registered tensor, made fake
    with mode, pytest.raises(ValueError) as fake:
        call(fakes)
    assert str(fake.value) == str(eager.value)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("count", HUGE_COUNTS, ids=hex)
@pytest.mark.parametrize("direction, arithmetic", [("LEFT", True), ("RIGHT", True), ("RIGHT", False)],
                         ids=["left", "right_arith", "right_logical"])
@pytest.mark.parametrize("form", ["functional", "out", "in_place"])
def test_huge_python_count_through_the_python_api_is_taken_by_value(dtype, count, direction, arithmetic, form):
    """Section 4.2: a count of any size is out of range like 64: 0, or the
    sign fill for an arithmetic right shift of a negative value."""
    low, high = model.value_range(dtype)
    values = [low, low + 1, -1 if low else 1, 0, 1, high]
    x = make_tensor(values, dtype)
    want = model.shift_model(values, count, dtype, direction, arithmetic)
    fill = [-1 if (direction == "RIGHT" and arithmetic and v < 0) else 0 for v in values]
    assert want == fill  # the model agrees with the rule stated in the contract
    left = direction == "LEFT"
    if form == "functional":
        fn = torchops.bitwise_left_shift if left else torchops.bitwise_right_shift
        result = fn(x, count, is_arithmetic=arithmetic)
        assert x.tolist() == values
    elif form == "out":
        out = torch.full((6,), 5, dtype=dtype)
        result = torchops.bitshift(x, count, direction, arithmetic, out=out)
        assert result is out
        assert x.tolist() == values
    else:
        fn = torchops.bitwise_left_shift_ if left else torchops.bitwise_right_shift_
        result = fn(x, count, is_arithmetic=arithmetic)
        assert result is x
    assert result.dtype == dtype and result.tolist() == want


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("count", [2**64 - 1, 2**63 + 5, 2**63, 2**63 - 1, -2**63, -2**63 + 1, 2**64, -2**63 - 1,
                                   2**65, -2**100], ids=hex)
@pytest.mark.parametrize("direction, arithmetic", [("LEFT", True), ("RIGHT", True), ("RIGHT", False)],
                         ids=["left", "right_arith", "right_logical"])
def test_huge_count_through_torch_ops_is_an_exception_or_the_right_answer(dtype, count, direction, arithmetic):
    """Through torch.ops a count is what c10::Scalar holds: outside that, an
    exception (and nothing written); inside it, the answer by value -- never
    a crash or a wrapped count."""
    low, high = model.value_range(dtype)
    values = [low, -1 if low else 2, 0, 1, high]
    x = make_tensor(values, dtype)
    out = torch.full((5,), 5, dtype=dtype)
    want = model.shift_model(values, count, dtype, direction, arithmetic)
    for call, target in [(lambda: ops.bitshift(x, count, direction, arithmetic), None),
                         (lambda: ops.bitshift.Scalar_out(x, count, direction, arithmetic, out=out), out),
                         (lambda: ops.bitshift_(x, count, direction, arithmetic), x)]:
        before_x, before_out = x.clone(), out.clone()
        try:
            result = call()
        except (OverflowError, RuntimeError, TypeError, ValueError):
            assert not -2**63 <= count < 2**64, "a count c10::Scalar holds must work (section 4.2)"
            assert torch.equal(x, before_x) and torch.equal(out, before_out)
            continue
        result = target if target is not None else result
        assert result.tolist() == want, hex(count)
        x.copy_(make_tensor(values, dtype))
