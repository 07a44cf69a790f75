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
from torchops import _sharding  # noqa: E402,F401  (DTensor sharding rules, once torch.distributed.tensor loads)
from torchops import ops as _api  # noqa: E402
from torchops.ops import *  # noqa: E402,F401,F403  (the public API, listed in ops.__all__)

__all__ = list(_api.__all__)
