"""torchops: bit shifts (left, arithmetic right, logical right) and signbit as PyTorch operators.

The rules are stated in docs/semantics.md. The operators are registered as
``torch.ops.torchops.bitshift``, ``bitshift_`` and ``signbit`` (with their overloads);
the functions below are their typed Python API.
"""
from torchops import _library

_library_path = _library.load()

from torchops import _fake  # noqa: E402,F401  (registers the fake kernels)
from torchops.ops import (  # noqa: E402
    bitshift,
    bitwise_left_shift,
    bitwise_left_shift_,
    bitwise_right_shift,
    bitwise_right_shift_,
    signbit,
)

__all__ = [
    "bitshift",
    "bitwise_left_shift",
    "bitwise_left_shift_",
    "bitwise_right_shift",
    "bitwise_right_shift_",
    "signbit",
]
