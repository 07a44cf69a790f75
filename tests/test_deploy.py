"""docs/deploy.md, executed: C++ programs (linked and dlopen'ed), TorchScript, torch.export
and AOTInductor artifacts, ONNX models.

The page's blocks marked `<!-- file: P -->` must equal the file P and those marked
`<!-- from: P -->` must appear in it; its bash blocks run in order, as they stand, in a
directory laid out like the checkout. The tests then check what they produced against the
eager model. Marked `deploy` (scripts/sanitize.sh leaves these out: they build programs
against the library rather than exercise its kernels).
"""
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch

import torchops

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "deploy.md")
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, EXAMPLES)

from conftest import OVERLOAD_NAMES, assert_same_tensors, kill_process_tree  # noqa: E402
from shift_model import ShiftModel, example_inputs  # noqa: E402

pytestmark = pytest.mark.deploy


def cmake_environment():
    """The environment for CMake. A CUDA build of LibTorch (PyPI's torch wheels) makes
    find_package(Torch) look for the CUDA toolkit (docs/deploy.md says so); CMake finds it
    through the nvcc on PATH, which may be a wrapper outside the toolkit (here it is), so
    CUDA_PATH names the toolkit's standard place when it is there and nothing else is set."""
    env = dict(os.environ)
    if torch.version.cuda and "CUDA_PATH" not in env and os.path.isdir("/usr/local/cuda"):
        env["CUDA_PATH"] = "/usr/local/cuda"
    return env


def doc_blocks():
    """The page's fenced blocks as (language, text, marker), marker = ("file" | "from", path) or None."""
    blocks, marker, lines = [], None, open(DOC).read().splitlines()
    i = 0
    while i < len(lines):
        found = re.fullmatch(r"<!-- (file|from): (\S+) -->", lines[i])
        if found:
            marker = (found.group(1), found.group(2))
        elif lines[i].startswith("```"):
            end = lines.index("```", i + 1)
            blocks.append((lines[i][3:].strip(), "\n".join(lines[i + 1:end]) + "\n", marker))
            marker, i = None, end
        i += 1
    return blocks


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """Runs the page's bash blocks in a fresh directory; returns (directory, their output)."""
    directory = tmp_path_factory.mktemp("deploy")
    os.symlink(EXAMPLES, directory / "examples")
    script = "set -euo pipefail\n" + "".join(text for language, text, _ in doc_blocks() if language == "bash")
    env = dict(cmake_environment(), PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    log = directory / "commands.log"
    with open(log, "w") as stdout:
        process = subprocess.Popen(["bash", "-c", script], cwd=directory, env=env, stdout=stdout,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        process.wait(timeout=900)
    except subprocess.TimeoutExpired:
        kill_process_tree(process)  # cmake, the compiler, torch.distributed.run's workers
        pytest.fail(f"docs/deploy.md's commands took more than 900 s:\n{log.read_text()}")
    output = log.read_text()
    assert process.returncode == 0, f"docs/deploy.md's commands failed (exit {process.returncode}):\n{output}"
    return directory, output


def test_doc_shows_the_files_as_they_are():
    marked = [(marker, text) for _, text, marker in doc_blocks() if marker]
    assert {path for (_, path), _ in marked} >= {
        "examples/shift_model.py", "examples/export_model.py", "examples/run_exported.py",
        "examples/cpp/CMakeLists.txt", "examples/cpp/run_shift_model.cpp", "examples/cpp/dlopen_shift_model.cpp",
        "examples/dtensor_demo.py", "examples/export_onnx.py", "torchops/include/torchops/ops.h"}
    for (kind, path), text in marked:
        content = open(os.path.join(ROOT, path)).read()
        if kind == "file":
            assert text == content, f"docs/deploy.md's copy of {path} differs from the file"
        else:
            assert text in content, f"docs/deploy.md's excerpt of {path} is not in the file"


def test_doc_commands_run(deployed):
    directory, output = deployed
    for name in ["shift_model.pt", "shift_model.pt2", "shift_model_aoti.pt2", "shift_model_opset20.onnx",
                 "shift_model_opset28.onnx"]:
        assert (directory / "artifacts" / name).is_file()


def test_exported_and_aoti_artifacts_match_eager_in_a_fresh_process(deployed):
    _, output = deployed
    outputs = len(ShiftModel()(*example_inputs()))
    assert f"torch.export: {outputs} outputs equal the eager model's" in output
    assert f"AOTInductor: {outputs} outputs equal the eager model's" in output


# torch.export.load's own pytree code warns (PyTorch 2.13), not torchops.
@pytest.mark.filterwarnings("ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated:FutureWarning")
def test_exported_program_holds_the_torchops_ops_with_a_symbolic_batch(deployed):
    # The example shows each kind of call, not every op: every overload's export is
    # tests/test_torch_integration.py's (tests/calls.py's TYPED_CALLS, saved and loaded).
    directory, _ = deployed
    program = torch.export.load(str(directory / "artifacts" / "shift_model.pt2"))
    targets = {str(node.target) for node in program.graph.nodes if node.op == "call_function"}
    called = {target for target in targets if target.startswith("torchops.")}
    assert called and called <= OVERLOAD_NAMES, targets  # the ops as themselves, not decomposed
    x_node = next(node for node in program.graph.nodes if node.op == "placeholder" and node.name == "x")
    assert isinstance(x_node.meta["val"].shape[0], torch.SymInt)
    inputs = example_inputs(batch=3)
    assert_same_tensors(program.module()(*inputs), ShiftModel()(*inputs), "torch.export")
    functional = program.run_decompositions()
    assert_same_tensors(functional.module()(*inputs), ShiftModel()(*inputs), "run_decompositions")


def test_cpp_program_runs_torchscript_aoti_and_the_api_like_the_eager_model(deployed):
    directory, output = deployed
    assert "TorchScript, AOTInductor and the C++ API agree" in output
    x, counts, *outputs = torch.load(directory / "cpp_outputs.pt")
    assert x.shape == (6, 8)
    assert_same_tensors(outputs, ShiftModel()(x, counts), "C++")


def test_output_shown_in_the_doc_is_what_the_commands_print(deployed):
    _, output = deployed
    shown = [text for language, text, _ in doc_blocks() if language == "text"]
    assert len(shown) == 3  # run_shift_model's, export_onnx.py's and dtensor_demo.py's
    for line in "".join(shown).splitlines():
        assert line in output.splitlines(), f"docs/deploy.md shows {line!r}; the commands printed:\n{output}"


def test_cpp_program_that_dlopens_the_library(deployed):
    _, output = deployed
    x, _ = example_inputs(batch=6)
    negative = int(torch.signbit(x).sum())
    assert f"signbit(x) through the dlopen'ed library: {negative} of {x.numel()} elements are negative" in output


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf (binutils)")
def test_linked_program_needs_the_library_and_the_dlopen_one_does_not(deployed):
    directory, _ = deployed

    def needed(program):
        dynamic = subprocess.run(["readelf", "-d", str(directory / "build" / "cpp" / program)],
                                 capture_output=True, text=True, check=True).stdout
        return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dynamic)

    library = os.path.realpath(torchops.library_path())
    assert library in map(os.path.realpath, needed("run_shift_model"))
    assert not any("torchops" in name for name in needed("dlopen_shift_model"))


def test_library_path_is_the_loaded_library_and_the_package_has_the_cpp_files():
    path = torchops.library_path()
    assert os.path.isabs(path) and os.path.isfile(path)
    mapped = {line.split()[-1] for line in open("/proc/self/maps") if "/" in line}
    assert os.path.realpath(path) in {os.path.realpath(p) for p in mapped}
    package = os.path.dirname(path)
    assert os.path.isfile(os.path.join(package, "include", "torchops", "ops.h"))
    assert torchops.cmake_prefix_path == os.path.join(package, "share", "cmake")
    assert os.path.isfile(os.path.join(torchops.cmake_prefix_path, "TorchOps", "TorchOpsConfig.cmake"))


def configure(tmp_path, cmake_lists, prefix_path):
    """cmake's configure step on a project of one CMakeLists.txt; returns (exit code, output)."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "CMakeLists.txt").write_text(cmake_lists)
    result = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"),
                             f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path};{prefix_path}"],
                            capture_output=True, text=True, timeout=300, env=cmake_environment())
    return result.returncode, result.stdout + result.stderr


PROJECT = "cmake_minimum_required(VERSION 3.18)\nproject(probe CXX)\nfind_package(TorchOps {version} REQUIRED)\n"


def test_cmake_config_refuses_a_newer_version_than_the_package(tmp_path):
    code, output = configure(tmp_path, PROJECT.format(version="99.0"), torchops.cmake_prefix_path)
    assert code != 0 and f"version: {torchops.__version__}" in output, output


def test_cmake_config_says_when_the_library_is_missing(tmp_path):
    # The config files without the library beside them, as in a checkout that was never built.
    package = tmp_path / "package"
    shutil.copytree(os.path.join(torchops.cmake_prefix_path, "TorchOps"), package / "share" / "cmake" / "TorchOps")
    shutil.copy(os.path.join(os.path.dirname(torchops.library_path()), "_build_info.py"), package)
    code, output = configure(tmp_path / "project", PROJECT.format(version=""), package / "share" / "cmake")
    assert code != 0 and "compiled library _C*.so is missing" in " ".join(output.split()), output
