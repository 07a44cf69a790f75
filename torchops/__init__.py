"""torchops: bit operations as PyTorch operators: shifts (left, arithmetic right, logical
right), signbit, bit counts, bit packing (NumPy's packbits and unpackbits; 1-, 2- and 4-bit
fields), Hamming distances and nearest-code search over packed binary codes.

The rules are stated in docs/semantics.md. The operators are registered under
``torch.ops.torchops`` (``bitshift``, ``bitshift_``, ``signbit``, ``bitwise_count``, ...,
with their overloads); the functions below are their typed Python API. For C++ programs, exported models and
DTensors see docs/deploy.md.
"""
import os

import torch

from torchops import _library

_library_path = _library.load()
# Choose the kernel level now, so that a bad TORCHOPS_CPU_CAPABILITY (or
# TORCHOPS_CPU_KERNELS) fails the import with its message instead of the first op call.
_cpu_kernels = torch.ops.torchops._cpu_capability()

from torchops import _triton  # noqa: E402

# The compute ops' Triton kernels for CUDA and XPU (Triton itself is imported on their first
# call), and for CPU tensors under TORCHOPS_CPU_KERNELS=triton.
if _cpu_kernels == "triton" and not _triton.available():
    raise ImportError("torchops: TORCHOPS_CPU_KERNELS=triton runs the Triton kernels on CPU tensors, but Triton is "
                      "not installed (torch's CUDA wheels bring it; `pip install triton` otherwise)")
if _triton.available():
    _triton.register(cpu=_cpu_kernels == "triton")

from torchops import _fake  # noqa: E402,F401  (registers the fake kernels)
from torchops import _sharding  # noqa: E402,F401  (DTensor sharding rules, once torch.distributed.tensor loads)
from torchops import _vmap  # noqa: E402,F401  (torch.vmap batching rules)
from torchops import _inductor, _on_import  # noqa: E402
from torchops import ops  # noqa: E402
from torchops._build_info import VERSION as __version__  # noqa: E402
from torchops._fastpath import call_path  # noqa: E402,F401
from torchops.ops import *  # noqa: E402,F401,F403  (the public API, listed in ops.__all__)
from torchops.ops import HammingTopk  # noqa: E402,F401  (hamming_topk's result type, as torch.return_types.topk)

# torch.compile's lowerings, once Inductor loads (importing it here would cost seconds).
_on_import.call_when_imported("torch._inductor.lowering", _inductor.register, "the Inductor lowerings")

#: The directory to put on CMAKE_PREFIX_PATH for ``find_package(TorchOps)``, as
#: ``torch.utils.cmake_prefix_path`` is for ``find_package(Torch)``.
cmake_prefix_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "share", "cmake")


def library_path() -> str:
    """The absolute path of the operator library (``torchops/_C*.so``).

    It needs LibTorch but not Python: a C++ program linked against LibTorch can link it or
    ``dlopen`` it, and then has every ``torchops::`` operator registered.
    """
    return _library_path


def __getattr__(name: str):
    """``torchops.onnx`` (ONNX export), imported on first use: it needs the optional onnx
    packages (``pip install torchops[onnx]``) and takes about a second to import."""
    if name == "onnx":
        import importlib

        return importlib.import_module("torchops.onnx")
    raise AttributeError(f"module 'torchops' has no attribute {name!r}")


__all__ = list(ops.__all__) + ["call_path", "cmake_prefix_path", "library_path"]
