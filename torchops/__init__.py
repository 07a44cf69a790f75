"""torchops: bit shifts (left, arithmetic right, logical right) and signbit as PyTorch operators.

The rules are stated in docs/semantics.md. The operators are registered as
``torch.ops.torchops.bitshift``, ``bitshift_`` and ``signbit`` (with their overloads);
the functions below are their typed Python API.
"""
import torch

from torchops import _library

_library_path = _library.load()
# Choose the kernel level now, so that a bad TORCHOPS_CPU_CAPABILITY fails the import
# with its message instead of the first op call.
torch.ops.torchops._cpu_capability()

from torchops import _fake  # noqa: E402,F401  (registers the fake kernels)
from torchops.ops import (  # noqa: E402
    bitshift,
    cpu_capability,
    bitwise_left_shift,
    bitwise_left_shift_,
    bitwise_right_shift,
    bitwise_right_shift_,
    signbit,
)

__all__ = [
    "bitshift",
    "cpu_capability",
    "bitwise_left_shift",
    "bitwise_left_shift_",
    "bitwise_right_shift",
    "bitwise_right_shift_",
    "signbit",
]
