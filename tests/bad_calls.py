"""The catalogue of bad calls: for every overload, calls that each entry of it must refuse with
the same exception and the same words, whatever runs it (the CPU kernels, the device-generic
ones, the fake kernels under torch.compile and export). A new op joins it by a row per
overload; tests/test_torch_integration.py checks that every registered overload has one.

Each row: an id, the overload, the tensors of the call (the writing overloads' `x` or `out`
among them), the rest of its positional arguments, whether the last tensor is `out=`, the
exception, and the start of the message (the op's name)."""

import re
from dataclasses import dataclass

import torch

from conftest import make_tensor

ops = torch.ops.torchops


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
    ]


BAD_CALLS = _bad_calls()
