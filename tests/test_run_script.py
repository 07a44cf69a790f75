"""scripts/run.sh's set-up: when it rebuilds torchops.

Runs the real script, `setup` job, on a small copy of the checkout (a few sources, no C++
compiled) with TORCHOPS_VENV naming an environment whose python is a stand-in: it answers
pip's commands, and its editable install (the build) writes the two extensions and can
change a source while it runs, as an editor or a second terminal can during a real build.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The environment's python: pip succeeds at everything; the build writes the extensions last
# (as setup.py's link does), after adding or editing the sources the environment names.
STAND_IN_PYTHON = """#!/usr/bin/env bash
case "$*" in
  *"pip install"*" -e .")
    echo build >>"$BUILDS"
    if [ -n "${ADD_DURING_BUILD:-}" ]; then echo '// new' >"$ADD_DURING_BUILD"; fi
    if [ -n "${EDIT_DURING_BUILD:-}" ]; then echo '// edited' >>"$EDIT_DURING_BUILD"; fi
    touch torchops/_C.abi3.so torchops/_binding.so ;;
esac
"""


def _checkout(tmp_path):
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "run.sh", repo / "scripts" / "run.sh")
    for name in ("requirements-torch.txt", "requirements-dev.txt", "setup.py"):
        shutil.copy(ROOT / name, repo / name)
    for source in ("csrc/registration.cpp", "csrc/ops/signbit.cpp", "binding/python_binding.cpp"):
        (repo / source).parent.mkdir(parents=True, exist_ok=True)
        (repo / source).write_text("// a source\n")
    (repo / "torchops").mkdir()
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(STAND_IN_PYTHON)
    python.chmod(0o755)
    return repo


def _setup(repo, **env) -> int:
    """Runs `scripts/run.sh setup` in the copy; returns how many builds it ran."""
    builds = repo.parent / "builds"
    before = len(builds.read_text().splitlines()) if builds.exists() else 0
    env = {**os.environ, "TORCHOPS_VENV": str(repo.parent / "venv"), "BUILDS": str(builds), **env,
           # python3 for the script's own question (the Python's version): this one
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for name in ("TORCHOPS_TORCH", "TORCHOPS_PYTHON", "TORCHOPS_CUDA_LIBRARIES"):
        env.pop(name, None)  # the default configuration: an editable install
    result = subprocess.run(["bash", "scripts/run.sh", "setup"], cwd=repo, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return len(builds.read_text().splitlines()) - before if builds.exists() else 0


def test_setup_builds_once_then_finds_nothing_to_do(tmp_path):
    repo = _checkout(tmp_path)
    assert _setup(repo) == 1
    assert _setup(repo) == 0


def test_a_source_added_while_the_build_ran_is_built_by_the_next_setup(tmp_path):
    # Older than the extensions that build wrote, and never compiled by it: only the set of
    # sources tells.
    repo = _checkout(tmp_path)
    assert _setup(repo, ADD_DURING_BUILD="csrc/ops/added.cpp") == 1
    assert (repo / "csrc/ops/added.cpp").exists()
    assert _setup(repo) == 1, "a source added during the last build did not make the next set-up rebuild"
    assert _setup(repo) == 0


def test_a_source_edited_while_the_build_ran_is_built_by_the_next_setup(tmp_path):
    repo = _checkout(tmp_path)
    assert _setup(repo, EDIT_DURING_BUILD="csrc/ops/signbit.cpp") == 1
    assert _setup(repo) == 1, "a source edited during the last build did not make the next set-up rebuild"
    assert _setup(repo) == 0


def test_a_removed_source_and_a_touched_one_rebuild(tmp_path):
    repo = _checkout(tmp_path)
    assert _setup(repo) == 1
    (repo / "csrc/ops/signbit.cpp").unlink()
    assert _setup(repo) == 1
    os.utime(repo / "binding/python_binding.cpp")
    assert _setup(repo) == 1
    assert _setup(repo) == 0
