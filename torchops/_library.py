"""Loading the compiled operator library (torchops/_C*.so) into PyTorch."""
import glob
import os

import torch

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _find_library() -> str:
    candidates = sorted(glob.glob(os.path.join(_PACKAGE_DIR, "_C*.so")))
    if not candidates:
        raise ImportError(
            f"torchops: the compiled library _C*.so is missing from {_PACKAGE_DIR}; build it with "
            "`pip install --no-build-isolation -e .` in the torchops checkout"
        )
    return candidates[0]


def load() -> str:
    """Registers the torchops operators with PyTorch and returns the library's path.

    A library that fails to load is reported here, with the torch version it was built
    against, instead of later as "operator torchops::... does not exist".
    """
    path = _find_library()
    try:
        torch.ops.load_library(path)
    except OSError as error:
        try:
            from torchops._build_info import TORCH_VERSION as built_with
        except ImportError:
            built_with = "an unknown version"
        raise ImportError(
            f"torchops: could not load {path}: {error}. It was built against torch {built_with}; "
            f"this process runs torch {torch.__version__}. Rebuild with "
            "`pip install --no-build-isolation -e .` against the torch you run."
        ) from error
    return path
