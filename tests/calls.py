"""The catalogue of calls of every overload, which a new op joins by rows here:

* ``OPCHECK_SAMPLES``: calls that torch.library.opcheck checks, and that the fake kernels must
  describe exactly (tests/test_torch_integration.py);
* ``BAD_CALLS``: calls that each kernel of the overload must refuse with the same exception and
  the same words, whatever runs it (the CPU kernels, the device-generic ones, the fake kernels
  under torch.compile and export; tests/test_torch_integration.py);
* ``TYPED_CALLS``: every form of every function of the typed API, and the overload it
  reaches (tests/test_binding.py; test_torchscript.py scripts them, test_torch_integration.py
  exports them, test_inductor.py compiles them).

Each list must reach every overload (and ``TYPED_CALLS`` every typed function): the tests
that use them check it, naming this file."""

import re
from dataclasses import dataclass

import numpy as np
import torch

import model
import torchops
from conftest import make_tensor, random_values

ops = torch.ops.torchops


# --------------------------------------------------------------------------
# Samples of every overload
def ints_of(shape, dtype, seed=0):
    """A tensor of `shape` and `dtype` with values spread over the whole range."""
    values = random_values(dtype, int(torch.Size(shape).numel()), np.random.default_rng(seed))
    return make_tensor(values, dtype).reshape(shape)


def counts_of(shape, dtype, seed=1):
    """Counts in and just outside [0, n) (negative only for signed dtypes)."""
    generator = torch.Generator().manual_seed(seed)
    low = -2 if model.is_signed(dtype) else 0
    return torch.randint(low, model.width(dtype) + 3, shape, generator=generator).to(dtype)


def floats_of(shape, dtype=torch.float32, seed=2):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=generator).to(dtype)
    x.view(-1)[:1] = -0.0
    return x


# --------------------------------------------------------------------------
# opcheck on every overload
def _opcheck_samples():
    """(id, overload, args builder, kwargs builder)."""
    return [
        ("bitshift-int8", ops.bitshift.default,
         lambda: (ints_of((3, 4), torch.int8), counts_of((3, 4), torch.int8), "LEFT", True)),
        ("bitshift-uint16-transposed-broadcast", ops.bitshift.default,
         lambda: (ints_of((4, 3), torch.uint16).t(), counts_of((4,), torch.uint16), "RIGHT", False)),
        ("bitshift-int64-broadcast-both", ops.bitshift.default,
         lambda: (ints_of((2, 1, 3), torch.int64), counts_of((5, 1), torch.int64), "RIGHT", True)),
        ("bitshift-int32-channels-last", ops.bitshift.default,
         lambda: (ints_of((2, 3, 4, 5), torch.int32).contiguous(memory_format=torch.channels_last),
                  counts_of((1, 3, 1, 1), torch.int32), "left", True)),
        ("bitshift-promotion-int8-int32", ops.bitshift.default,
         lambda: (ints_of((6,), torch.int8), counts_of((6,), torch.int32), "right", False)),
        ("bitshift-zero-dim-count-257", ops.bitshift.default,
         lambda: (ints_of((5,), torch.int8), torch.tensor(257), "LEFT", True)),
        ("bitshift-zero-dim-both", ops.bitshift.default,
         lambda: (torch.tensor(-5, dtype=torch.int16), torch.tensor(1, dtype=torch.int16), "RIGHT", True)),
        ("bitshift-empty", ops.bitshift.default,
         lambda: (torch.empty(0, 3, dtype=torch.uint8), torch.ones(3, dtype=torch.uint8), "LEFT", True)),
        ("bitshift-six-dims", ops.bitshift.default,
         lambda: (ints_of((2, 1, 3, 1, 2, 2), torch.uint32), counts_of((1, 2, 1, 3, 1, 2), torch.uint32), "RIGHT", True)),
        ("bitshift.Scalar-uint64-strided-257", ops.bitshift.Scalar,
         lambda: (ints_of((4, 6), torch.uint64)[:, ::2], 257, "RIGHT", False)),
        ("bitshift.Scalar-int16-negative", ops.bitshift.Scalar,
         lambda: (ints_of((5,), torch.int16), -3, "LEFT", True)),
        ("bitshift.Scalar-int8-in-range", ops.bitshift.Scalar,
         lambda: (ints_of((2, 3), torch.int8).t(), 3, "RIGHT", True)),
        ("bitshift.out-int8", ops.bitshift.out,
         lambda: (ints_of((3, 4), torch.int8), counts_of((3, 4), torch.int8), "LEFT", True),
         lambda: {"out": torch.empty(3, 4, dtype=torch.int8)}),
        ("bitshift.out-resize-empty", ops.bitshift.out,
         lambda: (ints_of((3, 1), torch.int32), counts_of((1, 4), torch.int32), "RIGHT", False),
         lambda: {"out": torch.empty(0, dtype=torch.int32)}),
        ("bitshift.Scalar_out-uint32", ops.bitshift.Scalar_out,
         lambda: (ints_of((7,), torch.uint32), 31, "RIGHT", True),
         lambda: {"out": torch.empty(7, dtype=torch.uint32)}),
        ("bitshift_-int16-transposed", ops.bitshift_.default,
         lambda: (ints_of((4, 3), torch.int16).t(), counts_of((4,), torch.int16), "LEFT", True)),
        ("bitshift_-int32-zero-dim-int64-count", ops.bitshift_.default,
         lambda: (ints_of((5,), torch.int32), torch.tensor(2**32 + 3), "RIGHT", False)),
        ("bitshift_.Scalar-int64-strided", ops.bitshift_.Scalar,
         lambda: (ints_of((4, 6), torch.int64)[::2, 1::2], 5, "right", True)),
        ("bitshift_.Scalar-uint8-large", ops.bitshift_.Scalar,
         lambda: (ints_of((9,), torch.uint8), 2**40, "LEFT", False)),
        ("signbit-float32-strided", ops.signbit.default, lambda: (floats_of((4, 6))[:, ::2],)),
        ("signbit-bfloat16-channels-last", ops.signbit.default,
         lambda: (floats_of((2, 3, 4, 5), torch.bfloat16).contiguous(memory_format=torch.channels_last),)),
        ("signbit-float16-zero-dim", ops.signbit.default, lambda: (torch.tensor(-0.0, dtype=torch.float16),)),
        ("signbit-int8", ops.signbit.default, lambda: (ints_of((5,), torch.int8),)),
        ("signbit-uint16", ops.signbit.default, lambda: (ints_of((5,), torch.uint16),)),
        ("signbit-bool", ops.signbit.default, lambda: (torch.tensor([True, False]),)),
        ("signbit-requires-grad", ops.signbit.default, lambda: (floats_of((3, 4)).requires_grad_(),)),
        ("signbit.out-float64", ops.signbit.out, lambda: (floats_of((3, 4), torch.float64),),
         lambda: {"out": torch.empty(3, 4, dtype=torch.bool)}),
        ("signbit.out-resize-empty", ops.signbit.out, lambda: (floats_of((2, 5), torch.float16).t(),),
         lambda: {"out": torch.empty(0, dtype=torch.bool)}),
        ("signbit.out-requires-grad", ops.signbit.out, lambda: (floats_of((6,)).requires_grad_(),),
         lambda: {"out": torch.empty(6, dtype=torch.bool)}),
        ("bitwise_count-int8", ops.bitwise_count.default, lambda: (ints_of((3, 4), torch.int8),)),
        ("bitwise_count-uint64-transposed", ops.bitwise_count.default, lambda: (ints_of((4, 3), torch.uint64).t(),)),
        ("bitwise_count-int32-channels-last", ops.bitwise_count.default,
         lambda: (ints_of((2, 3, 4, 5), torch.int32).contiguous(memory_format=torch.channels_last),)),
        ("bitwise_count-bool-zero-dim", ops.bitwise_count.default, lambda: (torch.tensor(True),)),
        ("bitwise_count.out-int16", ops.bitwise_count.out, lambda: (ints_of((3, 4), torch.int16),),
         lambda: {"out": torch.empty(3, 4, dtype=torch.uint8)}),
        ("bitwise_count.out-resize-empty", ops.bitwise_count.out, lambda: (ints_of((2, 5), torch.int64).t(),),
         lambda: {"out": torch.empty(0, dtype=torch.uint8)}),
    ]


OPCHECK_SAMPLES = _opcheck_samples()


# --------------------------------------------------------------------------
# Bad calls of every overload. Each row: an id, the overload, the tensors of the call (the
# writing overloads' `x` or `out` among them), the rest of its positional arguments, whether
# the last tensor is `out=`, the exception; the start of the message is the op's name.


@dataclass(frozen=True)
class BadCall:
    id: str
    overload: object
    tensors: tuple
    args: tuple
    out: bool
    exception: type

    @property
    def pattern(self) -> str:
        """The message's start: "torchops.<op>: " (an in-place op's name with its underscore)."""
        return "^" + re.escape(self.overload._schema.name.replace("::", ".")) + ": "

    def call(self, *tensors):
        """Calls the overload on `tensors` (this row's, or stand-ins for them)."""
        if self.out:
            return self.overload(*tensors[:-1], *self.args, out=tensors[-1])
        return self.overload(*tensors, *self.args)


def _bad_calls() -> list[BadCall]:
    def i32(*values):
        return make_tensor(list(values), torch.int32)

    left = ("LEFT", True)
    return [
        BadCall("x-float", ops.bitshift.default, (torch.ones(3), i32(1, 2, 3)), left, False, TypeError),
        BadCall("y-float", ops.bitshift.default, (i32(1, 2, 3), torch.ones(3)), left, False, TypeError),
        BadCall("unpromotable", ops.bitshift.default, (make_tensor([1], torch.uint16), make_tensor([1], torch.int8)),
                left, False, TypeError),
        BadCall("direction", ops.bitshift.default, (i32(1, 2, 3), i32(1, 2, 3)), ("UP", True), False, ValueError),
        BadCall("not-broadcastable", ops.bitshift.default, (i32(1, 2, 3), i32(1, 2)), left, False, RuntimeError),
        BadCall("x-bool-scalar-count", ops.bitshift.Scalar, (torch.ones(3, dtype=torch.bool),), (1, *left), False,
                TypeError),
        BadCall("scalar-count-bool", ops.bitshift.Scalar, (i32(1, 2, 3),), (True, *left), False, TypeError),
        BadCall("scalar-count-float", ops.bitshift.Scalar, (i32(1, 2, 3),), (1.5, *left), False, TypeError),
        BadCall("direction-scalar", ops.bitshift.Scalar, (i32(1, 2, 3),), (1, "Left", True), False, ValueError),
        BadCall("out-dtype", ops.bitshift.out, (i32(1, 2), i32(1, 2), torch.empty(2, dtype=torch.int64)), left, True,
                RuntimeError),
        BadCall("scalar-out-dtype", ops.bitshift.Scalar_out, (i32(1, 2), torch.empty(2, dtype=torch.int8)),
                (1, *left), True, RuntimeError),
        BadCall("in-place-shape", ops.bitshift_.default, (i32(1, 2, 3), torch.ones(2, 3, dtype=torch.int32)), left,
                False, RuntimeError),
        BadCall("in-place-dtype", ops.bitshift_.default, (make_tensor([1, 2], torch.int8), i32(1, 2)), left, False,
                RuntimeError),
        BadCall("in-place-float", ops.bitshift_.Scalar, (torch.ones(2),), (1, *left), False, TypeError),
        BadCall("signbit-complex", ops.signbit.default, (torch.ones(2, dtype=torch.complex64),), (), False, TypeError),
        BadCall("signbit-out-dtype", ops.signbit.out, (torch.ones(2), torch.empty(2, dtype=torch.int8)), (), True,
                RuntimeError),
        BadCall("bitwise_count-float", ops.bitwise_count.default, (torch.ones(2),), (), False, TypeError),
        BadCall("bitwise_count-out-dtype", ops.bitwise_count.out, (i32(1, 2), torch.empty(2, dtype=torch.int32)), (),
                True, RuntimeError),
    ]


BAD_CALLS = _bad_calls()


# --------------------------------------------------------------------------
# Every form of every typed function: (name, call(x, counts, floats) -> result, the overload
# it must reach). Each call is written as its source text, an expression of x, c (the
# counts) and f (the floats), kept as the call's ``source``: TorchScript compiles no lambda,
# so tests/test_torchscript.py writes the texts into a module of its own and scripts that.
def _typed_call(source: str):
    """The function ``lambda x, c, f: <source>``, in this module (whose globals the call reads)."""
    call = eval(f"lambda x, c, f: {source}", globals())
    call.source = source
    return call


TYPED_CALLS = [(name, _typed_call(source), overload) for name, source, overload in [
    ("bitshift tensor", 'torchops.bitshift(x, c, "LEFT")', ops.bitshift.default),
    ("bitshift int", 'torchops.bitshift(x, 3, "RIGHT", False)', ops.bitshift.Scalar),
    ("bitshift out", 'torchops.bitshift(x, c, "RIGHT", out=torch.empty_like(x))', ops.bitshift.out),
    ("bitshift int out", 'torchops.bitshift(x, 70, "LEFT", out=torch.empty_like(x))', ops.bitshift.Scalar_out),
    ("left", "torchops.bitwise_left_shift(x, c)", ops.bitshift.default),
    ("right int", "torchops.bitwise_right_shift(x, 2, is_arithmetic=False)", ops.bitshift.Scalar),
    ("right out", "torchops.bitwise_right_shift(x, c, False, out=torch.empty_like(x))", ops.bitshift.out),
    ("left in place", "torchops.bitwise_left_shift_(x.clone(), c)", ops.bitshift_.default),
    ("right in place int", "torchops.bitwise_right_shift_(x.clone(), 1)", ops.bitshift_.Scalar),
    ("signbit", "torchops.signbit(f)", ops.signbit.default),
    ("signbit out", "torchops.signbit(f, out=torch.empty_like(f, dtype=torch.bool))", ops.signbit.out),
    ("bitwise_count", "torchops.bitwise_count(x)", ops.bitwise_count.default),
    ("bitwise_count out", "torchops.bitwise_count(c, out=torch.empty_like(c, dtype=torch.uint8))",
     ops.bitwise_count.out),
]]
