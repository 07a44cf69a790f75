"""The catalogue of calls of every overload, which a new op joins by rows here:

* ``OPCHECK_SAMPLES``: calls that torch.library.opcheck checks, and that the fake kernels must
  describe exactly (tests/test_torch_integration.py);
* ``BAD_CALLS``: calls that each kernel of the overload must refuse with the same exception and
  the same words, whatever runs it (the CPU kernels, the device-generic ones, the fake kernels
  under torch.compile and export; tests/test_torch_integration.py);
* ``TYPED_CALLS``: every form of every function of the typed API, and the overload it
  reaches (tests/test_binding.py runs each compiled function's checks on each, with the
  arguments ``typed_arguments`` reads from the row; test_torchscript.py scripts them,
  test_torch_integration.py exports them, test_inductor.py compiles them).

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


def bytes_of(shape, seed=3):
    """Packed bytes: uint8 values over the whole range."""
    return ints_of(shape, torch.uint8, seed)


def bools_of(shape, seed=4):
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=generator) < 0.5


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
        ("packbits-int8", ops.packbits.default, lambda: (ints_of((3, 13), torch.int8),)),
        ("packbits-bool-dim0-little", ops.packbits.default, lambda: (bools_of((10, 3)), 0, "little")),
        ("packbits-uint64-transposed-dim1", ops.packbits.default,
         lambda: (ints_of((4, 9), torch.uint64).t(), 1, "big")),
        ("packbits-int32-dim-None", ops.packbits.default, lambda: (ints_of((2, 3, 5), torch.int32), None, "little")),
        ("packbits-int16-zero-dim", ops.packbits.default, lambda: (torch.tensor(-3, dtype=torch.int16), 0, "big")),
        ("packbits-uint16-empty", ops.packbits.default, lambda: (torch.empty(0, 3, dtype=torch.uint16), 0, "big")),
        ("packbits-int64-strided", ops.packbits.default,
         lambda: (ints_of((5, 20), torch.int64)[:, 1::2], -1, "little")),
        ("packbits.out-int8", ops.packbits.out, lambda: (ints_of((3, 13), torch.int8),),
         lambda: {"out": torch.empty(3, 2, dtype=torch.uint8)}),
        ("packbits.out-strided", ops.packbits.out, lambda: (ints_of((4, 16), torch.uint8), -1, "big"),
         lambda: {"out": torch.empty(2, 4, dtype=torch.uint8).t()}),
        ("packbits.out-dim-None", ops.packbits.out, lambda: (bools_of((3, 5)), None, "little"),
         lambda: {"out": torch.empty(2, dtype=torch.uint8)}),
        ("packbits.out-resize-empty", ops.packbits.out, lambda: (ints_of((2, 9), torch.int32), 0, "little"),
         lambda: {"out": torch.empty(0, dtype=torch.uint8)}),
        ("unpackbits-uint8", ops.unpackbits.default, lambda: (bytes_of((3, 4)),)),
        ("unpackbits-dim0-count-5-little", ops.unpackbits.default, lambda: (bytes_of((2, 3)), 0, 5, "little")),
        ("unpackbits-count-past-the-end", ops.unpackbits.default, lambda: (bytes_of((3, 2)), -1, 20, "big")),
        ("unpackbits-count-negative", ops.unpackbits.default, lambda: (bytes_of((3, 2)), -1, -3, "little")),
        ("unpackbits-transposed-dim1", ops.unpackbits.default, lambda: (bytes_of((4, 3)).t(), 1, None, "little")),
        ("unpackbits-dim-None-count", ops.unpackbits.default, lambda: (bytes_of((2, 3)), None, 19, "big")),
        ("unpackbits-zero-dim", ops.unpackbits.default,
         lambda: (torch.tensor(0xA5, dtype=torch.uint8), -1, None, "big")),
        ("unpackbits-empty-count", ops.unpackbits.default, lambda: (torch.empty(2, 0, dtype=torch.uint8), 1, 5, "big")),
        ("unpackbits.out-uint8", ops.unpackbits.out, lambda: (bytes_of((3, 2)),),
         lambda: {"out": torch.empty(3, 16, dtype=torch.uint8)}),
        ("unpackbits.out-strided", ops.unpackbits.out, lambda: (bytes_of((4, 1)), -1, None, "little"),
         lambda: {"out": torch.empty(8, 4, dtype=torch.uint8).t()}),
        ("unpackbits.out-resize-empty", ops.unpackbits.out, lambda: (bytes_of((2, 3)), 0, 5, "big"),
         lambda: {"out": torch.empty(0, dtype=torch.uint8)}),
        ("pack-int8-bits-4", ops.pack.default, lambda: (ints_of((3, 7), torch.int8), 4)),
        ("pack-uint32-bits-2-dim0-little", ops.pack.default, lambda: (ints_of((9, 2), torch.uint32), 2, 0, "little")),
        ("pack-bool-bits-1", ops.pack.default, lambda: (bools_of((2, 11)), 1, -1, "big")),
        ("pack-int64-transposed-dim1", ops.pack.default, lambda: (ints_of((6, 3), torch.int64).t(), 4, 1, "little")),
        ("pack-uint16-dim-None", ops.pack.default, lambda: (ints_of((2, 5), torch.uint16), 2, None, "big")),
        ("pack-int32-zero-dim", ops.pack.default, lambda: (torch.tensor(-1, dtype=torch.int32), 4, -1, "little")),
        ("pack-uint8-empty", ops.pack.default, lambda: (torch.empty(3, 0, dtype=torch.uint8), 2, -1, "big")),
        ("pack.out-int16", ops.pack.out, lambda: (ints_of((3, 8), torch.int16), 4),
         lambda: {"out": torch.empty(3, 4, dtype=torch.uint8)}),
        ("pack.out-strided", ops.pack.out, lambda: (ints_of((2, 12), torch.int8), 2, -1, "big"),
         lambda: {"out": torch.empty(3, 2, dtype=torch.uint8).t()}),
        ("pack.out-resize-empty", ops.pack.out, lambda: (ints_of((5, 2), torch.uint64), 2, 0, "little"),
         lambda: {"out": torch.empty(0, dtype=torch.uint8)}),
        ("unpack-bits-4", ops.unpack.default, lambda: (bytes_of((3, 4)), 4)),
        ("unpack-bits-2-dim0-count-7-little", ops.unpack.default, lambda: (bytes_of((2, 3)), 2, 0, 7, "little")),
        ("unpack-signed-bits-4", ops.unpack.default, lambda: (bytes_of((3, 5)), 4, -1, None, "big", True)),
        ("unpack-signed-bits-1-count-negative", ops.unpack.default,
         lambda: (bytes_of((2, 3)), 1, -1, -5, "little", True)),
        ("unpack-transposed-dim1-count-past-the-end", ops.unpack.default,
         lambda: (bytes_of((4, 3)).t(), 2, 1, 20, "big", False)),
        ("unpack-dim-None-signed", ops.unpack.default, lambda: (bytes_of((2, 3)), 2, None, None, "little", True)),
        ("unpack-zero-dim", ops.unpack.default,
         lambda: (torch.tensor(0x9C, dtype=torch.uint8), 4, 0, 1, "big", True)),
        ("unpack-empty-count", ops.unpack.default,
         lambda: (torch.empty(0, 3, dtype=torch.uint8), 4, 0, 3, "big", True)),
        ("unpack.out-bits-2", ops.unpack.out, lambda: (bytes_of((3, 2)), 2),
         lambda: {"out": torch.empty(3, 8, dtype=torch.uint8)}),
        ("unpack.out-strided-signed", ops.unpack.out, lambda: (bytes_of((4, 2)), 4, -1, 3, "little", True),
         lambda: {"out": torch.empty(3, 4, dtype=torch.int8).t()}),
        ("unpack.out-signed-resize-empty", ops.unpack.out, lambda: (bytes_of((2, 3)), 4, 0, 5, "big", True),
         lambda: {"out": torch.empty(0, dtype=torch.int8)}),
        # The search ops: codes of common and odd sizes, int8 beside uint8 (only bits count),
        # batch dims broadcast, a database with repeated codes (ties: the smaller index first).
        ("hamming_distance-uint8", ops.hamming_distance.default, lambda: (bytes_of((3, 16)), bytes_of((5, 16), 5))),
        ("hamming_distance-int8-batched", ops.hamming_distance.default,
         lambda: (ints_of((2, 1, 3, 8), torch.int8), ints_of((4, 5, 8), torch.int8, 6))),
        ("hamming_distance-mixed-odd-bytes", ops.hamming_distance.default,
         lambda: (bytes_of((3, 5)), ints_of((4, 5), torch.int8, 7))),
        ("hamming_distance-transposed-x1", ops.hamming_distance.default,
         lambda: (bytes_of((9, 3)).t(), bytes_of((2, 9), 8))),
        ("hamming_distance-zero-bytes", ops.hamming_distance.default,
         lambda: (torch.empty(2, 3, 0, dtype=torch.uint8), torch.empty(2, 4, 0, dtype=torch.uint8))),
        ("hamming_distance-no-rows", ops.hamming_distance.default,
         lambda: (torch.empty(0, 4, dtype=torch.uint8), bytes_of((3, 4)))),
        ("hamming_distance.out-uint8", ops.hamming_distance.out, lambda: (bytes_of((3, 32)), bytes_of((4, 32), 9)),
         lambda: {"out": torch.empty(3, 4, dtype=torch.int32)}),
        ("hamming_distance.out-strided", ops.hamming_distance.out, lambda: (bytes_of((3, 7)), bytes_of((2, 7), 10)),
         lambda: {"out": torch.empty(2, 3, dtype=torch.int32).t()}),
        ("hamming_distance.out-resize-empty", ops.hamming_distance.out,
         lambda: (ints_of((2, 2, 3), torch.int8), bytes_of((1, 3), 11)), lambda: {"out": torch.empty(0, dtype=torch.int32)}),
        ("hamming_topk-k3", ops.hamming_topk.default, lambda: (bytes_of((4, 16)), bytes_of((20, 16), 12), 3)),
        ("hamming_topk-ties", ops.hamming_topk.default, lambda: (bytes_of((3, 4)), bytes_of((3, 4), 13).repeat(4, 1), 5)),
        ("hamming_topk-int8-k-all", ops.hamming_topk.default,
         lambda: (ints_of((2, 9), torch.int8), ints_of((6, 9), torch.int8, 14), 6)),
        ("hamming_topk-transposed-database", ops.hamming_topk.default,
         lambda: (bytes_of((2, 3)), bytes_of((3, 7), 15).t(), 4)),
        ("hamming_topk-k0", ops.hamming_topk.default, lambda: (bytes_of((2, 8)), bytes_of((5, 8), 16), 0)),
        ("hamming_topk-no-queries", ops.hamming_topk.default,
         lambda: (torch.empty(0, 8, dtype=torch.uint8), bytes_of((5, 8), 17), 2)),
        ("hamming_topk-empty-database", ops.hamming_topk.default,
         lambda: (bytes_of((3, 8)), torch.empty(0, 8, dtype=torch.uint8), 0)),
        ("hamming_topk.out-k2", ops.hamming_topk.out, lambda: (bytes_of((3, 8)), bytes_of((7, 8), 18), 2),
         lambda: {"values": torch.empty(3, 2, dtype=torch.int32), "indices": torch.empty(3, 2, dtype=torch.int64)}),
        ("hamming_topk.out-strided", ops.hamming_topk.out, lambda: (bytes_of((3, 5)), bytes_of((6, 5), 19), 4),
         lambda: {"values": torch.empty(4, 3, dtype=torch.int32).t(), "indices": torch.empty(4, 3, dtype=torch.int64).t()}),
        ("hamming_topk.out-resize-empty", ops.hamming_topk.out,
         lambda: (ints_of((2, 4), torch.int8), bytes_of((5, 4), 20), 3),
         lambda: {"values": torch.empty(0, dtype=torch.int32), "indices": torch.empty(0, dtype=torch.int64)}),
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
    #: The names of the outs when ``out``: the last tensors, in order (hamming_topk's two).
    outs: tuple = ("out",)

    @property
    def pattern(self) -> str:
        """The message's start: "torchops.<op>: " (an in-place op's name with its underscore)."""
        return "^" + re.escape(self.overload._schema.name.replace("::", ".")) + ": "

    def call(self, *tensors):
        """Calls the overload on `tensors` (this row's, or stand-ins for them)."""
        if self.out:
            count = len(self.outs)
            return self.overload(*tensors[:-count], *self.args, **dict(zip(self.outs, tensors[-count:])))
        return self.overload(*tensors, *self.args)

    @property
    def inputs(self) -> tuple:
        """The tensors of the call before its outs."""
        return self.tensors[:-len(self.outs)] if self.out else self.tensors

    @property
    def out_kwargs(self) -> dict:
        """The outs of the call by name ({} when it has none)."""
        return dict(zip(self.outs, self.tensors[-len(self.outs):])) if self.out else {}


def _bad_calls() -> list[BadCall]:
    def i32(*values):
        return make_tensor(list(values), torch.int32)

    def codes(*shape):
        return torch.zeros(shape, dtype=torch.uint8)

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
        # the packing ops: each error of docs/semantics.md's list, per overload (an x of None with
        # an out only: with no tensor at all, PyTorch's dispatcher refuses the call itself)
        BadCall("packbits-float", ops.packbits.default, (torch.ones(2, 3),), (), False, TypeError),
        BadCall("packbits-bitorder", ops.packbits.default, (i32(1, 2, 3),), (-1, "b"), False, ValueError),
        BadCall("packbits-dim", ops.packbits.default, (i32(1, 2, 3),), (1,), False, IndexError),
        BadCall("packbits-dim-zero-dim", ops.packbits.default, (torch.tensor(5),), (-2, "big"), False, IndexError),
        BadCall("packbits-out-x-none", ops.packbits.out, (torch.empty(1, dtype=torch.uint8),), (None,), True,
                TypeError),
        BadCall("packbits-out-dtype", ops.packbits.out, (i32(1, 2, 3), torch.empty(1, dtype=torch.int8)), (), True,
                RuntimeError),
        BadCall("packbits-out-dim-before-dtype", ops.packbits.out, (i32(1, 2, 3), torch.empty(1, dtype=torch.int8)),
                (2, "big"), True, IndexError),
        BadCall("unpackbits-int8", ops.unpackbits.default, (make_tensor([1, 2], torch.int8),), (), False, TypeError),
        BadCall("unpackbits-bitorder", ops.unpackbits.default, (make_tensor([1, 2], torch.uint8),), (-1, None, "Big"),
                False, ValueError),
        BadCall("unpackbits-dim", ops.unpackbits.default, (torch.ones(2, 3, dtype=torch.uint8),), (-3,), False,
                IndexError),
        BadCall("unpackbits-count", ops.unpackbits.default, (torch.ones(2, 2, dtype=torch.uint8),), (0, -17), False,
                ValueError),
        BadCall("unpackbits-count-flattened", ops.unpackbits.default, (torch.ones(2, 3, dtype=torch.uint8),),
                (None, -49), False, ValueError),
        BadCall("unpackbits-out-x-none", ops.unpackbits.out, (torch.empty(8, dtype=torch.uint8),), (None,), True,
                TypeError),
        BadCall("unpackbits-out-dtype", ops.unpackbits.out,
                (make_tensor([1, 2], torch.uint8), torch.empty(16, dtype=torch.int8)), (), True, RuntimeError),
        BadCall("unpackbits-out-count", ops.unpackbits.out,
                (make_tensor([1, 2], torch.uint8), torch.empty(3, dtype=torch.uint8)), (-1, -17), True, ValueError),
        BadCall("unpackbits-count-beyond-int64", ops.unpackbits.default, (torch.ones(17, 3, dtype=torch.uint8),),
                (-1, 2**62), False, ValueError),
        BadCall("unpackbits-out-count-beyond-int64", ops.unpackbits.out,
                (torch.ones(17, 3, dtype=torch.uint8), torch.empty(5, dtype=torch.uint8)), (-1, 2**62), True,
                ValueError),
        BadCall("pack-float", ops.pack.default, (torch.ones(2, dtype=torch.float16),), (4,), False, TypeError),
        BadCall("pack-bits", ops.pack.default, (i32(1, 2, 3),), (3,), False, ValueError),
        BadCall("pack-bitorder", ops.pack.default, (i32(1, 2, 3),), (2, -1, "l"), False, ValueError),
        BadCall("pack-dim", ops.pack.default, (i32(1, 2, 3),), (2, 1, "big"), False, IndexError),
        BadCall("pack-float-before-bits", ops.pack.default, (torch.ones(2),), (3, 7, "b"), False, TypeError),
        BadCall("pack-out-x-none", ops.pack.out, (torch.empty(1, dtype=torch.uint8),), (None, 4), True, TypeError),
        BadCall("pack-out-dtype", ops.pack.out, (i32(1, 2, 3), torch.empty(1, dtype=torch.bool)), (4,), True,
                RuntimeError),
        BadCall("pack-out-bits", ops.pack.out, (i32(1, 2, 3), torch.empty(1, dtype=torch.uint8)), (0,), True,
                ValueError),
        BadCall("unpack-int16", ops.unpack.default, (make_tensor([1, 2], torch.int16),), (4,), False, TypeError),
        BadCall("unpack-bits", ops.unpack.default, (make_tensor([1, 2], torch.uint8),), (8,), False, ValueError),
        BadCall("unpack-bitorder", ops.unpack.default, (make_tensor([1, 2], torch.uint8),), (2, -1, None, ""), False,
                ValueError),
        BadCall("unpack-dim", ops.unpack.default, (torch.tensor(7, dtype=torch.uint8),), (2, 1), False, IndexError),
        BadCall("unpack-count", ops.unpack.default, (torch.ones(2, 3, dtype=torch.uint8),), (4, 0, -5), False,
                ValueError),
        BadCall("unpack-out-count-beyond-int64", ops.unpack.out,
                (torch.ones(3, 3, dtype=torch.uint8), torch.empty(4, dtype=torch.int8)), (4, 0, 2**62, "big", True),
                True, ValueError),
        BadCall("unpack-out-x-none", ops.unpack.out, (torch.empty(4, dtype=torch.uint8),), (None, 2), True, TypeError),
        BadCall("unpack-out-dtype-signed", ops.unpack.out,
                (make_tensor([1, 2], torch.uint8), torch.empty(4, dtype=torch.uint8)), (4, -1, None, "big", True), True,
                RuntimeError),
        BadCall("unpack-out-dtype", ops.unpack.out,
                (make_tensor([1, 2], torch.uint8), torch.empty(4, dtype=torch.int8)), (4,), True, RuntimeError),
        BadCall("unpack-out-count", ops.unpack.out,
                (make_tensor([1, 2], torch.uint8), torch.empty(9, dtype=torch.float32)), (1, None, -17), True,
                ValueError),
        # the search ops
        BadCall("hamming_distance-float", ops.hamming_distance.default, (torch.ones(2, 3), codes(2, 3)), (), False,
                TypeError),
        BadCall("hamming_distance-bool-x2", ops.hamming_distance.default, (codes(2, 3), torch.ones(2, 3) > 0), (),
                False, TypeError),
        BadCall("hamming_distance-int16", ops.hamming_distance.default,
                (codes(2, 3), torch.ones(2, 3, dtype=torch.int16)), (), False, TypeError),
        BadCall("hamming_distance-1-d", ops.hamming_distance.default, (codes(3), codes(2, 3)), (), False, ValueError),
        BadCall("hamming_distance-bytes", ops.hamming_distance.default, (codes(2, 3), codes(2, 4)), (), False,
                ValueError),
        BadCall("hamming_distance-batch", ops.hamming_distance.default, (codes(2, 3, 4), codes(3, 3, 4)), (), False,
                ValueError),
        BadCall("hamming_distance-out-dtype", ops.hamming_distance.out,
                (codes(2, 3), codes(2, 3), torch.empty(2, 2, dtype=torch.int64)), (), True, RuntimeError),
        BadCall("hamming_distance-out-bytes-before-dtype", ops.hamming_distance.out,
                (codes(2, 3), codes(2, 5), torch.empty(2, 2, dtype=torch.int64)), (), True, ValueError),
        BadCall("hamming_topk-float", ops.hamming_topk.default, (codes(2, 3), torch.ones(4, 3)), (1,), False,
                TypeError),
        BadCall("hamming_topk-3-d", ops.hamming_topk.default, (codes(1, 2, 3), codes(4, 3)), (1,), False,
                ValueError),
        BadCall("hamming_topk-bytes", ops.hamming_topk.default, (codes(2, 3), codes(4, 2)), (1,), False, ValueError),
        BadCall("hamming_topk-k-too-large", ops.hamming_topk.default, (codes(2, 3), codes(4, 3)), (5,), False,
                IndexError),
        BadCall("hamming_topk-k-negative", ops.hamming_topk.default, (codes(2, 3), codes(4, 3)), (-1,), False,
                IndexError),
        BadCall("hamming_topk-out-values-dtype", ops.hamming_topk.out,
                (codes(2, 3), codes(4, 3), torch.empty(2, 1, dtype=torch.int64), torch.empty(2, 1, dtype=torch.int64)),
                (1,), True, TypeError, ("values", "indices")),
        BadCall("hamming_topk-out-indices-dtype", ops.hamming_topk.out,
                (codes(2, 3), codes(4, 3), torch.empty(2, 1, dtype=torch.int32), torch.empty(2, 1, dtype=torch.int32)),
                (1,), True, TypeError, ("values", "indices")),
        BadCall("hamming_topk-out-k-before-dtype", ops.hamming_topk.out,
                (codes(2, 3), codes(4, 3), torch.empty(2, 1, dtype=torch.int64), torch.empty(2, 1, dtype=torch.int32)),
                (9,), True, IndexError, ("values", "indices")),
    ]


BAD_CALLS = _bad_calls()


# --------------------------------------------------------------------------
# Every form of every typed function: (name, call(x, counts, floats) -> result, the overload
# it must reach). Each call is written as its source text, an expression of x, c (the
# counts) and f (the floats), kept as the call's ``source``: TorchScript compiles no lambda,
# so tests/test_torchscript.py writes the texts into a module of its own and scripts that.
def typed_call(source: str, namespace: dict | None = None):
    """The function ``lambda x, c, f: <source>``, reading the globals of this module (or of
    `namespace`, another module's)."""
    call = eval(f"lambda x, c, f: {source}", globals() if namespace is None else namespace)
    call.source = source
    return call


TYPED_CALLS = [(name, typed_call(source), overload) for name, source, overload in [
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
    # The packing functions: a right-shaped out= made from x (a view, for packbits and pack: an
    # out that must be resized would break a compiled graph), and unpacking x's values as bytes.
    # Nothing packed along dim 0, the exported program's dynamic one: a result of size
    # ceil(rows / 8) is 1 for some rows, which torch.export specializes (x[::8] alike).
    ("packbits", "torchops.packbits(x)", ops.packbits.default),
    ("packbits positional", 'torchops.packbits(x, -1, "little")', ops.packbits.default),
    ("packbits keywords dim None", 'torchops.packbits(c, dim=None, bitorder="little")', ops.packbits.default),
    ("packbits out", "torchops.packbits(x, out=torch.empty_like(x, dtype=torch.uint8)[..., :(x.shape[-1] + 7) // 8])",
     ops.packbits.out),
    ("unpackbits", "torchops.unpackbits(x.to(torch.uint8))", ops.unpackbits.default),
    ("unpackbits positional", 'torchops.unpackbits(x.to(torch.uint8), 0, 5, "little")', ops.unpackbits.default),
    ("unpackbits keywords dim None", 'torchops.unpackbits(c.to(torch.uint8), dim=None, count=-3, bitorder="little")',
     ops.unpackbits.default),
    ("unpackbits out",
     "torchops.unpackbits(x.to(torch.uint8), count=x.shape[-1], out=torch.empty_like(x, dtype=torch.uint8))",
     ops.unpackbits.out),
    ("pack", "torchops.pack(x, 4)", ops.pack.default),
    ("pack positional", 'torchops.pack(x, 2, -1, "little")', ops.pack.default),
    ("pack keywords dim None", 'torchops.pack(c, bits=1, dim=None, bitorder="big")', ops.pack.default),
    ("pack out", "torchops.pack(x, 4, out=torch.empty_like(x, dtype=torch.uint8)[..., :(x.shape[-1] + 1) // 2])",
     ops.pack.out),
    ("unpack", "torchops.unpack(x.to(torch.uint8), 4)", ops.unpack.default),
    ("unpack positional", 'torchops.unpack(x.to(torch.uint8), 2, 0, 7, "little", True)', ops.unpack.default),
    ("unpack keywords dim None",
     'torchops.unpack(c.to(torch.uint8), bits=4, dim=None, count=-1, bitorder="big", signed=True)',
     ops.unpack.default),
    ("unpack out", "torchops.unpack(x.to(torch.uint8), 4, count=x.shape[-1], signed=True, "
                   "out=torch.empty_like(x, dtype=torch.int8))", ops.unpack.out),
    ("unpack out positional", 'torchops.unpack(x.to(torch.uint8), 2, -1, x.shape[-1], "little", False, '
                              "torch.empty_like(x, dtype=torch.uint8))", ops.unpack.out),
    # The search functions: x's and c's elements as codes of one byte (any dtype, any shape).
    ("hamming_distance", "torchops.hamming_distance(x.to(torch.uint8).reshape(-1, 1), c.to(torch.uint8).reshape(-1, 1))",
     ops.hamming_distance.default),
    ("hamming_distance batched",
     "torchops.hamming_distance(x1=x.to(torch.int8).reshape(1, -1, 1), x2=c.to(torch.uint8).reshape(-1, 1, 1))",
     ops.hamming_distance.default),
    ("hamming_distance out", "torchops.hamming_distance(x.to(torch.uint8).reshape(-1, 1), c.to(torch.uint8).reshape("
                             "-1, 1), out=x.new_empty((x.numel(), c.numel()), dtype=torch.int32))",
     ops.hamming_distance.out),
    ("hamming_topk", "torchops.hamming_topk(x.to(torch.uint8).reshape(-1, 1), c.to(torch.uint8).reshape(-1, 1), 1)",
     ops.hamming_topk.default),
    ("hamming_topk keywords",
     "torchops.hamming_topk(queries=x.to(torch.uint8).reshape(-1, 1), database=c.to(torch.uint8).reshape(-1, 1), k=2)",
     ops.hamming_topk.default),
    ("hamming_topk out", "torchops.hamming_topk(x.to(torch.uint8).reshape(-1, 1), c.to(torch.uint8).reshape(-1, 1), 2, "
                         "out=(x.new_empty((x.numel(), 2), dtype=torch.int32), x.new_empty((x.numel(), 2), "
                         "dtype=torch.int64)))", ops.hamming_topk.out),
]]


class _Recorder:
    """A stand-in for the torchops module: ``torchops.<name>(...)`` records the name and the
    arguments instead of calling anything."""

    def __getattr__(self, name):
        def record(*args, **kwargs):
            self.called = (name, args, kwargs)

        return record


def typed_arguments(call, x, c, f) -> tuple:
    """What a TYPED_CALLS row passes to its typed function: (the function's name, args,
    kwargs), its source run on x, c and f with torchops stood in for, so that a test can call
    the compiled function or the twin with the very same arguments (fresh tensors each time,
    made as the row makes them)."""
    recorder = _Recorder()
    eval(call.source, {**call.__globals__, "torchops": recorder}, {"x": x, "c": c, "f": f})
    return recorder.called
