"""A small model that shows each kind of torchops call: functional, in place and out=, tensor
and int counts, results of the operands' dtype, bool (signbit) and uint8 (bitwise_count).

examples/export_model.py saves it as TorchScript, as a torch.export program and as an
AOTInductor package; examples/run_exported.py and examples/cpp/ run those artifacts.
"""
import torch

import torchops


class ShiftModel(torch.nn.Module):
    # The typed API, which torch.jit.script compiles too: the scripted model calls the
    # torchops:: operators, which is all a C++ program needs to run it.
    def forward(self, x: torch.Tensor, counts: torch.Tensor):
        left = torchops.bitwise_left_shift(x, counts)  # counts broadcast over the rows
        logical = torchops.bitwise_right_shift(x, 3, is_arithmetic=False)  # logical right shift of int32
        arithmetic = torch.empty_like(x)
        torchops.bitwise_right_shift(x, counts, out=arithmetic)
        halved = torch.empty_like(x)
        torchops.bitshift(x, 1, "RIGHT", out=halved)  # ONNX's name, with an explicit direction
        shifted = x.clone()
        torchops.bitwise_left_shift_(shifted, counts)  # in place
        torchops.bitwise_right_shift_(shifted, 2, is_arithmetic=False)
        negative = torchops.signbit(x)
        negative_out = torch.empty(x.shape, dtype=torch.bool, device=x.device)
        torchops.signbit(x, out=negative_out)
        bits = torchops.bitwise_count(x)  # the 1 bits of |x|, uint8
        count_bits = torch.empty(counts.shape, dtype=torch.uint8, device=x.device)
        torchops.bitwise_count(counts, out=count_bits)
        return left, logical, arithmetic, halved, shifted, negative, negative_out, bits, count_bits


def example_inputs(batch: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """x: (batch, 8) int32 of both signs; counts: (8,) int32 from -3 to 32, out-of-range ones included."""
    x = torch.arange(batch * 8, dtype=torch.int32).reshape(batch, 8) * 123457 - 3000000
    counts = torch.arange(8, dtype=torch.int32) * 5 - 3
    return x, counts
