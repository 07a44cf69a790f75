"""A small model that calls every torchops operator: functional, in place and out=.

examples/export_model.py saves it as TorchScript, as a torch.export program and as an
AOTInductor package; examples/run_exported.py and examples/cpp/ run those artifacts.
"""
import torch

import torchops  # noqa: F401  (registers torch.ops.torchops)


class ShiftModel(torch.nn.Module):
    # Calls through the overload packets (torch.ops.torchops.bitshift, not .Scalar or .out):
    # the overload follows from the arguments, as TorchScript requires.
    def forward(self, x: torch.Tensor, counts: torch.Tensor):
        left = torch.ops.torchops.bitshift(x, counts, "LEFT")  # counts broadcast over the rows
        logical = torch.ops.torchops.bitshift(x, 3, "RIGHT", False)  # logical right shift of int32
        arithmetic = torch.empty_like(x)
        torch.ops.torchops.bitshift(x, counts, "RIGHT", True, out=arithmetic)
        halved = torch.empty_like(x)
        torch.ops.torchops.bitshift(x, 1, "RIGHT", True, out=halved)
        shifted = x.clone()
        torch.ops.torchops.bitshift_(shifted, counts, "LEFT")  # in place
        torch.ops.torchops.bitshift_(shifted, 2, "RIGHT", False)
        negative = torch.ops.torchops.signbit(x)
        negative_out = torch.empty(x.shape, dtype=torch.bool)
        torch.ops.torchops.signbit(x, out=negative_out)
        return left, logical, arithmetic, halved, shifted, negative, negative_out


def example_inputs(batch: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """x: (batch, 8) int32 of both signs; counts: (8,) int32 from -3 to 32, out-of-range ones included."""
    x = torch.arange(batch * 8, dtype=torch.int32).reshape(batch, 8) * 123457 - 3000000
    counts = torch.arange(8, dtype=torch.int32) * 5 - 3
    return x, counts
