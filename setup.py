"""Build torchops: two C++ extensions.

- torchops._C, the operator library (csrc/), loaded with torch.ops.load_library. It links
  only against LibTorch (no libtorch_python, no Python symbols), so the same .so also serves
  C++ programs: the package carries the C++ API header (torchops/include/torchops/ops.h)
  and a CMake config (torchops/share/cmake/TorchOps/).
- torchops._binding, the compiled entries of the typed Python API (binding/), linked
  against libtorch_python. torchops works without it, through torch.ops.

Environment:
  DEBUG=1   build with -O0 -g instead of -O3.
  TORCHOPS_SANITIZE=undefined | address,undefined
            build with those sanitizers (-O1 -g, no recovery: the first report aborts);
            scripts/sanitize.sh builds such a copy apart and runs the tests under it.
"""
import glob
import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
DEBUG = os.environ.get("DEBUG", "0") == "1"
VERSION = "0.1.0"


def sanitizers():
    names = [n.strip() for n in os.environ.get("TORCHOPS_SANITIZE", "").split(",") if n.strip()]
    unknown = sorted(set(names) - {"address", "undefined"})
    if unknown:
        raise SystemExit(f"TORCHOPS_SANITIZE: expected a comma list of address and undefined, "
                         f"got {os.environ['TORCHOPS_SANITIZE']!r} (unknown: {', '.join(unknown)})")
    return sorted(set(names))


def write_build_info():
    # torchops/__init__.py compares TORCH_VERSION with the running torch to explain a
    # mismatch; VERSION is torchops.__version__ and the CMake config's version.
    with open(os.path.join(ROOT, "torchops", "_build_info.py"), "w") as f:
        f.write(f'VERSION = "{VERSION}"\nTORCH_VERSION = "{torch.__version__}"\n')


def compile_and_link_flags():
    cxx_flags = ["-O0", "-g"] if DEBUG else ["-O3"]
    link_flags = ["-g"] if DEBUG else []
    names = sanitizers()
    if names:
        # No recovery: the first report aborts the process, so no test can pass over it.
        # -O1 (the last -O wins): quicker to compile than -O3, with stack traces that stay readable.
        sanitize = [f"-fsanitize={','.join(names)}", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g"]
        cxx_flags += sanitize + ([] if DEBUG else ["-O1"])
        link_flags = sanitize
    cxx_flags += ["-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    return cxx_flags, link_flags


def extensions():
    cxx_flags, link_flags = compile_and_link_flags()
    include_dirs = [os.path.join(ROOT, "csrc"), os.path.join(ROOT, "torchops", "include")]
    operator_library = CppExtension(
        name="torchops._C",
        sources=sorted(glob.glob(os.path.join("csrc", "**", "*.cpp"), recursive=True)),
        include_dirs=include_dirs,
        extra_compile_args={"cxx": cxx_flags},
        extra_link_args=link_flags,
        py_limited_api=True,  # no libtorch_python
    )
    python_binding = CppExtension(
        name="torchops._binding",
        sources=sorted(glob.glob(os.path.join("binding", "*.cpp"))),
        include_dirs=include_dirs,
        extra_compile_args={"cxx": list(cxx_flags)},
        extra_link_args=list(link_flags),
        py_limited_api=False,  # links libtorch_python, for torch.Tensor's C API
    )
    return [operator_library, python_binding]


def onnx_requirements():
    # One list for the extra and for CI: the lines of requirements-dev.txt after its "# onnx" marker.
    with open(os.path.join(ROOT, "requirements-dev.txt")) as f:
        lines = [line.strip() for line in f]
    return [line for line in lines[lines.index("# onnx") + 1:] if line and not line.startswith("#")]


ONNX_REQUIREMENTS = onnx_requirements()
write_build_info()
setup(
    name="torchops",
    version=VERSION,
    description="Bit shifts (arithmetic and logical) and signbit as PyTorch operators",
    long_description=open(os.path.join(ROOT, "README.md")).read(),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["torchops", "torchops.*"]),
    # For C++ programs (docs/deploy.md): the API header and the CMake package config; for
    # type checkers, py.typed (PEP 561: the typed API's hints are to be read).
    package_data={"torchops": ["include/torchops/*.h", "share/cmake/TorchOps/*.cmake", "py.typed"]},
    ext_modules=extensions(),
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.10",
    # The operator library is ABI-tied to the torch it was built against.
    install_requires=["torch==2.13.*"],
    # torchops.onnx (docs/deploy.md#onnx): the releases it was written and tested against,
    # pinned as in requirements-dev.txt.
    extras_require={"onnx": ONNX_REQUIREMENTS},
)
