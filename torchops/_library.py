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


def release(version: str) -> str:
    """``"2.15"`` for ``"2.15.0+cpu"``: the part of a torch version that its ABI follows."""
    return ".".join(version.split("+")[0].split(".")[:2])


def load() -> str:
    """Registers the torchops operators with PyTorch and returns the library's path.

    A library built against another torch release is refused here, before it is loaded (its
    symbols may resolve and still mean something else), and one that fails to load is
    reported here, with the torch version it was built against, instead of later as
    "operator torchops::... does not exist".
    """
    path = _find_library()
    try:
        from torchops._build_info import TORCH_VERSION as built_with
    except ImportError:  # a build that did not run setup.py's build_py
        built_with = None
    running = (f"It was built against torch {built_with or 'of an unknown version'}; this process runs torch "
               f"{torch.__version__}. Rebuild with `pip install --no-build-isolation .` (or `-e .` in a checkout) "
               "against the torch you run, or install the torchops built for it.")
    if built_with and release(built_with) != release(torch.__version__):
        raise ImportError(f"torchops: {path} is for another torch release. {running}")
    try:
        torch.ops.load_library(path)
    except OSError as error:
        if built_with and release(built_with) == release(torch.__version__):
            # Not a mismatch of releases: the library itself lacks something (an undefined
            # symbol is a function its sources declare and none defines).
            running = f"It was built against this torch release ({built_with}), and is incomplete."
        raise ImportError(f"torchops: could not load {path}: {error}. {running}") from error
    return path
