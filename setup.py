"""Build torchops: two C++ extensions.

- torchops._C, the operator library (csrc/), loaded with torch.ops.load_library. It links
  only against LibTorch (no libtorch_python, no Python symbols), so the same .so also serves
  C++ programs: the package carries the C++ API header (torchops/include/torchops/ops.h)
  and a CMake config (torchops/share/cmake/TorchOps/).
- torchops._binding, the compiled functions of the typed Python API (binding/), linked
  against libtorch_python. torchops works without it, through torch.ops.

It builds against the installed torch (`pip install --no-build-isolation .`): one of the
releases of requirements-torch.txt, or, with a warning that the build is untested there, a
release newer than all of them (an older one is refused); the package built requires that
release (torch==2.15.* when built against 2.15.0): the operator library is tied to its
ABI. Build files go to build/torch-<version>/, one folder per torch, so that builds against
different releases never mix objects.

Environment:
  DEBUG=1   build with -O0 -g instead of -O3.
  TORCHOPS_SANITIZE=undefined | address,undefined
            build with those sanitizers (-O1 -g, no recovery: the first report aborts);
            scripts/sanitize.sh builds such a copy apart and runs the tests under it.
"""
import fcntl
import glob
import hashlib
import os
import runpy
import shlex
import subprocess
import sys

import torch
from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from torch.utils import cpp_extension
from torch.utils.cpp_extension import BuildExtension, CppExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
# One build folder per torch (setuptools already separates Pythons inside it): a build
# against another torch must not find this one's objects up to date.
BUILD_BASE = os.path.join("build", f"torch-{torch.__version__}")
DEBUG = os.environ.get("DEBUG", "0") == "1"
VERSION = "0.2.0"


def sanitizers():
    names = [n.strip() for n in os.environ.get("TORCHOPS_SANITIZE", "").split(",") if n.strip()]
    unknown = sorted(set(names) - {"address", "undefined"})
    if unknown:
        raise SystemExit(f"TORCHOPS_SANITIZE: expected a comma list of address and undefined, "
                         f"got {os.environ['TORCHOPS_SANITIZE']!r} (unknown: {', '.join(unknown)})")
    return sorted(set(names))


# "2.15" for "2.15.0+cpu": the rule torchops applies at import, from the file that holds it
# (importing the package would load the library this script is about to build).
release = runpy.run_path(os.path.join(ROOT, "torchops", "_library.py"))["release"]


def supported_releases():
    # requirements-torch.txt: one "torch==X.Y.Z" line per supported release.
    with open(os.path.join(ROOT, "requirements-torch.txt")) as f:
        pins = [line.strip() for line in f if line.strip().startswith("torch==")]
    return [release(pin.removeprefix("torch==")) for pin in pins]


def release_key(name):
    # Releases compare as versions, not strings: 2.100 comes after 2.15.
    return tuple(int(part) for part in name.split("."))


def built_against():
    """The installed torch's release: a supported one; or a newer one, with a warning (a user
    who upgrades torch the day it is published can still build from source); never an older
    or skipped one (a release between two supported ones is left out on purpose)."""
    releases = supported_releases()
    installed = release(torch.__version__)
    if installed in releases:
        return installed
    if release_key(installed) > max(map(release_key, releases)):
        print(f"warning: torchops: building against torch {torch.__version__}, newer than the releases it is "
              f"tested on ({', '.join(releases)}): the build is untested there. The package built requires "
              f"torch=={installed}.*.", file=sys.stderr)
        return installed
    raise SystemExit(f"torchops builds against torch {', '.join(releases)} (or, untested, a newer release); the "
                     f"installed torch is {torch.__version__}. Install a supported release first (pip install "
                     f"torch==<release>, one of the pins in requirements-torch.txt), then build with "
                     f"--no-build-isolation.")


class build_py_with_build_info(build_py):
    """Writes torchops/_build_info.py beside the built package (into the source tree only for an
    editable install), so that builds against different torch releases never share it.
    torchops/__init__.py reads VERSION (torchops.__version__, also the CMake config's version);
    torchops._library and torchops._inductor read the torch it was built against and the
    supported releases."""

    def run(self):
        super().run()
        package = os.path.join(ROOT if self.editable_mode else self.build_lib, "torchops")
        os.makedirs(package, exist_ok=True)
        with open(os.path.join(package, "_build_info.py"), "w") as f:
            f.write(f'VERSION = "{VERSION}"\nTORCH_VERSION = "{torch.__version__}"\n'
                    f"SUPPORTED_TORCH_RELEASES = {tuple(supported_releases())!r}\n")


class sdist_one_at_a_time(sdist):
    """Makes the sdist holding a lock on build/sdist.lock: its files are staged in the
    checkout (torchops-<version>/), which two sdists made at once (CI's two lanes setting up
    side by side, test_packaging beside them) would remove under each other."""

    def run(self):
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        with open(os.path.join(ROOT, "build", "sdist.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            super().run()


class build_ext_kept(BuildExtension):
    """An editable install (pip install -e .) builds in a fresh temporary folder by default,
    so every rebuild compiled every file; this one keeps its objects and ninja's file in the
    torch's build folder (build/torch-<version>/), where ninja recompiles only the sources a
    change reaches (a changed header: the files that include it) and links again."""

    def finalize_options(self):
        super().finalize_options()
        if self.editable_mode:
            self.build_temp = os.path.join(ROOT, BUILD_BASE, f"editable.{sys.implementation.cache_tag}")

    def build_extensions(self):
        # The operator library's sources that start with csrc/torch_headers.h compile after
        # it has been precompiled, with the very flags of the library's ninja file
        # (BuildExtension composes them inside cpp_extension's private
        # _write_ninja_file_and_compile_objects, the one place they are all known), into a
        # folder put first on the include path; the other sources (the kernel files) compile
        # meanwhile. Without that function (another torch), the sources read the header
        # itself: slower, the same objects.
        write = getattr(cpp_extension, "_write_ninja_file_and_compile_objects", None)
        if write is None:
            return super().build_extensions()

        def write_after_precompiling(*args, **kwargs):
            if args or "sources" not in kwargs:  # not the call this was written for
                return write(*args, **kwargs)
            sources, objects = kwargs["sources"], kwargs["objects"]
            users = [uses_torch_headers(source) for source in sources]
            if not any(users):
                return write(**kwargs)
            folder = os.path.join(kwargs["build_directory"], "precompiled")
            # The header's digest among the flags: a source compiled with its precompiled copy
            # names neither in its dependencies, so it is the changed command that makes ninja
            # compile every source again when the header changes.
            with open(TORCH_HEADERS, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()[:16]
            # torch's headers as system headers (their -I then ignored): compiled as one
            # header, they leave template instantiations to the end of each source, where
            # their own warnings (-Wsign-compare in c10's TypeSafeSignMath.h) would be reported.
            system = [f"-isystem{shlex.quote(path)}" for path in cpp_extension.include_paths()]
            cflags = [f"-I{shlex.quote(folder)}", f"-DTORCHOPS_TORCH_HEADERS={digest}", *system] + list(kwargs["cflags"])
            precompiling = precompile_torch_headers(folder, cflags + list(kwargs["post_cflags"]))
            others = [(source, obj) for source, obj, user in zip(sources, objects, users) if not user]
            try:
                if others:
                    write(**dict(kwargs, cflags=cflags, sources=[s for s, _ in others], objects=[o for _, o in others]))
            finally:
                if precompiling is not None:
                    precompiling()
            return write(**dict(kwargs, cflags=cflags))

        cpp_extension._write_ninja_file_and_compile_objects = write_after_precompiling
        try:
            return super().build_extensions()
        finally:
            cpp_extension._write_ninja_file_and_compile_objects = write


TORCH_HEADERS = os.path.join(ROOT, "csrc", "torch_headers.h")


def uses_torch_headers(source):
    with open(source) as f:
        return "#include <torch_headers.h>" in f.read()


def precompile_torch_headers(folder, flags):
    """Starts compiling csrc/torch_headers.h into FOLDER/torch_headers.h.gch with FLAGS
    (shell words), unless the copy there was made from the same header with the same
    command; returns a function that waits for it (None when nothing was started). A
    compiler that cannot (not GCC) leaves no copy: the sources then read the header itself."""
    output = os.path.join(folder, "torch_headers.h.gch")
    command = [cpp_extension.get_cxx_compiler()] + shlex.split(" ".join(flags)) + [
        "-x", "c++-header", TORCH_HEADERS, "-o", output]
    stamp = shlex.join(command)  # the header's digest among the flags
    stamp_path = output + ".command"
    if os.path.exists(output) and os.path.exists(stamp_path):
        with open(stamp_path) as f:
            if f.read() == stamp:
                return None
    os.makedirs(folder, exist_ok=True)
    for path in (output, stamp_path):
        if os.path.exists(path):
            os.remove(path)
    log = open(output + ".log", "w+")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)

    def wait():
        with log:
            if process.wait() == 0:
                with open(stamp_path, "w") as f:
                    f.write(stamp)
                return
            log.seek(0)
            print("setup.py: the torch headers were not precompiled (the sources read them instead):\n"
                  + log.read()[-2000:], file=sys.stderr)
        if os.path.exists(output):
            os.remove(output)

    return wait


def compile_and_link_flags():
    # -g0: Python's own CFLAGS (which setuptools passes first) carry -g; without debug
    # information a build takes about a quarter less time and the objects are 30x smaller.
    cxx_flags = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]
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
TORCH_RELEASE = built_against()
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
    cmdclass={"build_ext": build_ext_kept, "build_py": build_py_with_build_info, "sdist": sdist_one_at_a_time},
    options={"build": {"build_base": BUILD_BASE}},
    python_requires=">=3.11",
    # The operator library is ABI-tied to the torch it was built against.
    install_requires=[f"torch=={TORCH_RELEASE}.*"],
    # torchops.onnx (docs/deploy.md#onnx): the releases it was written and tested against,
    # pinned as in requirements-dev.txt.
    extras_require={"onnx": ONNX_REQUIREMENTS},
)
