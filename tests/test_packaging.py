"""Packaging: the sdist carries everything the build reads, the wheel built from it holds
both extensions and pins the torch release it was built against, and it runs where no
compiler is, on both call paths, and without the binding.

Makes the sdist of the checkout (`python setup.py sdist`), then, in a fresh virtual
environment that sees the torch of this one (a .pth file: no second copy of torch) and
nothing of the checkout, builds a wheel from that sdist (`pip wheel --no-build-isolation
--no-deps`, as the README says), installs it, and runs torchops there with PATH holding
nothing but that environment: no compiler, no checkout on sys.path. Marked `deploy`.
Where scripts/run.sh installed torchops from a wheel it built the same way (every
configuration but the default one), TORCHOPS_TEST_WHEEL names that wheel, and it is the
one checked and run.
"""
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
import torch

from torchops._library import release

pytestmark = [pytest.mark.deploy, pytest.mark.python_layers]

ROOT = Path(__file__).resolve().parents[1]

USE = """if True:
    import os, shutil, sys
    import torch, torchops
    here = os.path.dirname(torchops.__file__)
    assert here.startswith(sys.prefix), (here, sys.prefix)
    assert not any(shutil.which(tool) for tool in ("c++", "g++", "gcc", "cc")), "a compiler is on PATH"
    from torchops import _fastpath
    x = torch.tensor([-102, 64, -8], dtype=torch.int8)
    paths = [torchops.call_path()]
    results = [torchops.bitwise_right_shift(x, 3, is_arithmetic=False).tolist(), torchops.signbit(-x.float()).tolist()]
    u = torch.tensor([2**64 - 1, 2**63], dtype=torch.uint64)
    zeros = torch.tensor([-0.0, 0.0], dtype=torch.bfloat16)
    results += [torchops.bitshift(u, torch.tensor([60, 64], dtype=torch.uint64), "RIGHT").tolist(),
                torchops.bitwise_left_shift(x.short(), 12).tolist(), torchops.signbit(zeros).tolist()]
    with _fastpath.torch_ops_only():
        paths.append(torchops.call_path())
        results.append(torchops.bitwise_right_shift(x, 3, is_arithmetic=False).tolist())
    print(paths, results, torchops.library_path().startswith(here))
"""
ANSWERS = ("[[19, 8, 31], [False, True, False], [15, 0], [-24576, 0, -32768], [True, False], "
           "[19, 8, 31]] True")


def _pip(python, *args, timeout=300):
    return subprocess.run([str(python), "-m", "pip", *args, "--disable-pip-version-check"],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdist")
    # The egg-info beside the sdist, not in the checkout: another configuration's set-up
    # (scripts/run.sh) may be making an sdist of the same checkout at the same time.
    result = subprocess.run([sys.executable, "setup.py", "--quiet", "egg_info", "--egg-base", str(out),
                             "sdist", "--dist-dir", str(out)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    (path,) = out.glob("torchops-*.tar.gz")
    return path


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    """A new virtual environment whose own site-packages come first, then this one's (for
    torch and the build tools): nothing of the checkout is on its path."""
    venv = tmp_path_factory.mktemp("fresh")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "torch_from_the_test_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, site


@pytest.fixture(scope="module")
def wheel(sdist, fresh_venv, tmp_path_factory):
    """The wheel pip builds from the sdist in the fresh environment (the build's own files
    are the sdist's alone); or, under TORCHOPS_TEST_WHEEL, the wheel scripts/run.sh built
    from this checkout's sdist the same way for this environment's torch and installed
    there (the configurations other than the default one: one build each, not two)."""
    if os.environ.get("TORCHOPS_TEST_WHEEL"):
        return Path(os.environ["TORCHOPS_TEST_WHEEL"])
    python, _ = fresh_venv
    out = tmp_path_factory.mktemp("wheel")
    result = _pip(python, "wheel", "--no-build-isolation", "--no-deps", "-w", str(out), str(sdist), timeout=1200)
    assert result.returncode == 0, result.stdout + result.stderr
    (path,) = out.glob("torchops-*.whl")
    return path


def test_the_sdist_carries_every_source_and_no_build_output(sdist):
    names = {name.split("/", 1)[1] for name in tarfile.open(sdist).getnames() if "/" in name}
    needed = {"setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "requirements-torch.txt", "requirements-dev.txt"}
    for folder, patterns in {"csrc": ("*.h", "*.cpp"), "binding": ("*.cpp",), "torchops": ("*.py", "*.h", "*.cmake"),
                             "tests": ("*.py",), "docs": ("*.md",)}.items():
        needed |= {str(path.relative_to(ROOT)) for pattern in patterns for path in (ROOT / folder).rglob(pattern)}
    needed.discard("torchops/_build_info.py")  # each build writes its own
    assert needed - names == set()
    assert not [name for name in names if name.endswith((".so", ".pyc")) or name == "torchops/_build_info.py"]


@pytest.mark.slow  # the default configuration's wheel is a build from scratch
def test_the_wheel_holds_both_extensions_and_pins_torch(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("torchops/_C") and n.endswith(".so") for n in names), names
    assert any(n.startswith("torchops/_binding") and n.endswith(".so") for n in names), names
    assert "torchops/include/torchops/ops.h" in names and "torchops/share/cmake/TorchOps/TorchOpsConfig.cmake" in names
    assert "torchops/py.typed" in names  # type checkers read the hints
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Description-Content-Type: text/markdown" in text and "## Two commands" in text  # the README
    requires = [line.removeprefix("Requires-Dist: ") for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:")]
    # torch, and the optional extra torchops[onnx] pinned as in requirements-dev.txt (CI installs those)
    lines = [line.strip() for line in (ROOT / "requirements-dev.txt").read_text().splitlines()]
    onnx_pins = [line for line in lines[lines.index("# onnx") + 1:] if line and not line.startswith("#")]
    assert {"onnx", "onnxscript", "onnxruntime"} <= {pin.split("==")[0] for pin in onnx_pins}
    # The release this torch is (torch==2.15.* when built against 2.15.0): the library is ABI-tied.
    torch_pin = f"torch=={release(torch.__version__)}.*"
    assert requires == [torch_pin] + [f'{pin}; extra == "onnx"' for pin in onnx_pins], requires


@pytest.mark.slow
def test_the_wheel_runs_without_a_compiler_on_both_paths_and_without_the_binding(wheel, fresh_venv, tmp_path):
    python, site = fresh_venv
    # --ignore-installed: this environment's torchops (seen through the .pth) is not the wheel.
    install = _pip(python, "install", "--no-deps", "--no-index", "--ignore-installed", str(wheel))
    assert install.returncode == 0, install.stdout + install.stderr
    check = _pip(python, "check")
    assert "torchops" not in check.stdout, check.stdout  # its torch pin is satisfied

    env = {"PATH": str(python.parent), "HOME": str(tmp_path)}
    run = subprocess.run([str(python), "-c", USE], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == f"['binding', 'torch.ops'] {ANSWERS}\n", run.stdout + run.stderr

    # Without the binding module: a warning, the torch.ops path, the same answers.
    (binding,) = (site / "torchops").glob("_binding*.so")
    binding.unlink()
    run = subprocess.run([str(python), "-c", USE], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == f"['torch.ops', 'torch.ops'] {ANSWERS}\n", run.stdout + run.stderr
    assert "torchops._binding could not be loaded" in run.stderr, run.stderr


OTHER_RELEASE = "import torch; torch.__version__ = '2.99.0+cpu'\n"
SUPPORTED = [line.split("==")[1].rsplit(".", 1)[0] for line in (ROOT / "requirements-torch.txt").read_text().splitlines()
             if line.startswith("torch==")]


def test_the_isolated_build_requirement_spans_the_supported_releases():
    major, minor = SUPPORTED[-1].split(".")
    assert f'"torch>={SUPPORTED[0]},<{major}.{int(minor) + 1}"' in (ROOT / "pyproject.toml").read_text()


def _setup_py_metadata(version, out):
    """setup.py as pip runs it for the package's metadata (egg_info, into `out`), with the
    installed torch claiming to be `version`: (the process's result, the torch requirement
    of the package it describes, or None where it stopped)."""
    code = (f"import torch; torch.__version__ = {version!r}\n"
            f"import runpy, sys; sys.argv = ['setup.py', '--quiet', 'egg_info', '--egg-base', {str(out)!r}]\n"
            "runpy.run_path('setup.py', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    requires = list(out.glob("*.egg-info/requires.txt"))
    return result, requires[0].read_text().splitlines()[0] if requires else None


_NEXT = f"{SUPPORTED[-1].split('.')[0]}.{int(SUPPORTED[-1].split('.')[1]) + 1}"


# The next minor release; one whose minor sorts before the newest's as a string (2.100 after
# 2.15); the next major release.
@pytest.mark.parametrize("version", [f"{_NEXT}.0+cpu", "2.100.0", "3.0.0.dev20300101"])
def test_setup_builds_against_a_newer_torch_with_a_warning_and_pins_it(version, tmp_path):
    result, torch_requirement = _setup_py_metadata(version, tmp_path)
    assert result.returncode == 0, result.stderr
    warning = (f"warning: torchops: building against torch {version}, newer than the releases it is tested on "
               f"({', '.join(SUPPORTED)}): the build is untested there.")
    assert result.stderr.count(warning) == 1 and result.stderr.count("warning: torchops:") == 1, result.stderr
    assert torch_requirement == f"torch=={release(version)}.*"  # the operator library is ABI-tied to it


# The release before the oldest; one whose minor sorts after the oldest's as a string (2.9
# before 2.13); an older major release.
@pytest.mark.parametrize("version", [f"{SUPPORTED[0].split('.')[0]}.{int(SUPPORTED[0].split('.')[1]) - 1}.0+cpu",
                                     "2.9.1", "1.13.1"])
def test_setup_refuses_a_torch_older_than_the_supported_releases(version, tmp_path):
    result, torch_requirement = _setup_py_metadata(version, tmp_path)
    assert result.returncode != 0 and torch_requirement is None, result.stderr
    assert (f"torchops builds against torch {', '.join(SUPPORTED)} (or, untested, a newer release); the installed "
            f"torch is {version}. Install a supported release first") in result.stderr, result.stderr


@pytest.mark.parametrize("supported", SUPPORTED)
def test_setup_builds_against_a_supported_torch_without_a_warning(supported, tmp_path):
    result, torch_requirement = _setup_py_metadata(f"{supported}.0+cpu", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "warning: torchops" not in result.stderr, result.stderr
    assert torch_requirement == f"torch=={supported}.*"


def test_a_library_built_for_a_newer_torch_loads_on_it(tmp_path):
    # Built against a release newer than the supported ones and run on that release: it loads
    # and runs; the Inductor lowerings (written for the supported releases) stand aside.
    code = f"""if True:
        import sys, types, torch
        torch.__version__ = "{_NEXT}.0+cpu"
        build_info = types.ModuleType("torchops._build_info")
        build_info.VERSION, build_info.TORCH_VERSION = "0", torch.__version__
        build_info.SUPPORTED_TORCH_RELEASES = {tuple(SUPPORTED)!r}
        sys.modules["torchops._build_info"] = build_info  # what a build against it writes
        import torchops
        from torchops import _inductor
        _inductor.register()
        x = torch.tensor([-8, 64], dtype=torch.int8)
        print(torchops.bitwise_right_shift(x, 1, is_arithmetic=False).tolist(), _inductor.enabled(), _inductor.registered())
    """
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "[124, 32] False False\n", result.stdout + result.stderr


def test_import_refuses_a_library_built_for_another_torch_release(tmp_path):
    code = OTHER_RELEASE + "import torchops"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode != 0
    assert (f"is for another torch release. It was built against torch {torch.__version__}; this process runs "
            "torch 2.99.0+cpu. Rebuild with") in result.stderr, result.stderr


def test_a_library_that_does_not_load_for_this_torch_says_it_is_incomplete(monkeypatch):
    # A library built against the running torch that still fails to load (an undefined symbol:
    # a function declared and never defined) is not a release mismatch: no "Rebuild against".
    from torchops import _library

    def load_library(path):
        raise OSError(f"{path}: undefined symbol: _ZN8torchops3cpu10bit_lengthERKN2at6TensorE")

    monkeypatch.setattr(torch.ops, "load_library", load_library)
    with pytest.raises(ImportError, match="undefined symbol: .*It was built against this torch release") as info:
        _library.load()
    assert "Rebuild" not in str(info.value)


def test_every_source_that_includes_torch_starts_with_the_precompiled_headers():
    """csrc/torch_headers.h is precompiled once per build (setup.py) and used only where it is
    a source's first include (GCC reads nothing precompiled after a source's first token): an
    operator-library source that includes torch another way compiles at three times the cost.
    The kernel files include nothing from torch (scripts/aarch64.sh relies on it)."""
    first_include = "#include <torch_headers.h>"
    late, kernels_with_torch = [], []
    for path in sorted((ROOT / "csrc").rglob("*.cpp")):
        text = path.read_text()
        includes = [line for line in text.splitlines() if line.startswith("#include")]
        uses_torch = any(line.split()[1].startswith(("<ATen/", "<c10/", "<torch/", "<torch_headers.h>"))
                         or line.startswith('#include "ops/') for line in includes)
        if path.parent.name == "kernels":
            if uses_torch:
                kernels_with_torch.append(path.name)
        elif uses_torch and includes[0].split("//")[0].strip() != first_include:
            late.append(path.relative_to(ROOT).as_posix())
    assert not late, f"sources whose first include is not {first_include}: {late}"
    assert not kernels_with_torch, f"kernel files that include torch: {kernels_with_torch}"
