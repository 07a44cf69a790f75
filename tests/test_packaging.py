"""Packaging: the wheel holds both extensions and pins its torch, and it runs where no
compiler is, on both call paths, and without the binding.

Builds a wheel with `pip wheel --no-build-isolation --no-deps .` (as docs/deploy.md and the
README say), installs it into a fresh virtual environment that sees the torch of this
one (a .pth file: no second copy of torch), and runs torchops there with PATH holding
nothing but that environment: no compiler, no checkout on sys.path. Marked `deploy`.
"""
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.deploy

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
    with _fastpath.torch_ops_only():
        paths.append(torchops.call_path())
        results.append(torchops.bitwise_right_shift(x, 3, is_arithmetic=False).tolist())
    print(paths, results, torchops.library_path().startswith(here))
"""
ANSWERS = "[[19, 8, 31], [False, True, False], [19, 8, 31]] True"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                             "--disable-pip-version-check", "-w", str(out), str(ROOT)],
                            capture_output=True, text=True, timeout=1200, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    (path,) = out.glob("torchops-*.whl")
    return path


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
    assert requires == ["torch==2.13.*"] + [f'{pin}; extra == "onnx"' for pin in onnx_pins], requires


def test_the_wheel_runs_without_a_compiler_on_both_paths_and_without_the_binding(wheel, tmp_path):
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # torch (and what it needs) from this environment, behind the fresh one's own packages.
    (site / "torch_from_the_test_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index",
                              "--disable-pip-version-check", str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    check = subprocess.run([str(python), "-m", "pip", "check", "--disable-pip-version-check"],
                           capture_output=True, text=True, timeout=300)
    assert "torchops" not in check.stdout, check.stdout  # torch==2.13.* is satisfied

    env = {"PATH": str(venv / "bin"), "HOME": str(tmp_path)}
    run = subprocess.run([str(python), "-c", USE], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == f"['binding', 'torch.ops'] {ANSWERS}\n", run.stdout + run.stderr

    # Without the binding module: a warning, the torch.ops path, the same answers.
    (binding,) = (site / "torchops").glob("_binding*.so")
    binding.unlink()
    run = subprocess.run([str(python), "-c", USE], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == f"['torch.ops', 'torch.ops'] {ANSWERS}\n", run.stdout + run.stderr
    assert "torchops._binding could not be loaded" in run.stderr, run.stderr
