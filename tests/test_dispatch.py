"""The kernel level: detection, TORCHOPS_CPU_CAPABILITY, the in-process switch, and
refusals that name the bad value, the architecture's levels and the levels this CPU supports."""
import os
import platform
import re
import shutil
import subprocess
import sys

import pytest
import torch

import torchops

from conftest import run_python

# Each architecture's levels, lowest first (docs/internals.md#adding-a-kernel-level).
ARCHITECTURE_LEVELS = {"x86_64": ["default", "avx2", "avx512", "avx512_bitalg"], "aarch64": ["default"]}
LEVELS = torch.ops.torchops._cpu_capabilities()
SUPPORTED = torch.ops.torchops._supported_cpu_capabilities()
ARCHITECTURE = {"x86_64": "x86-64"}.get(platform.machine(), platform.machine())


@pytest.mark.skipif(platform.machine() not in ARCHITECTURE_LEVELS, reason="an architecture without its own levels")
def test_the_levels_are_those_of_the_architecture_running():
    assert LEVELS == ARCHITECTURE_LEVELS[platform.machine()]


def test_supported_levels_start_with_default_and_are_ordered():
    assert SUPPORTED[0] == "default"
    assert SUPPORTED == LEVELS[: len(SUPPORTED)]


def test_level_in_use_is_the_best_supported_one_without_the_variable():
    result = run_python("import torchops; print(torchops.cpu_capability())", TORCHOPS_CPU_CAPABILITY="")
    # An empty value is not a level either: it is refused, not taken as unset.
    assert result.returncode != 0
    env = {k: v for k, v in os.environ.items() if k != "TORCHOPS_CPU_CAPABILITY"}
    result = subprocess.run([sys.executable, "-c", "import torchops; print(torchops.cpu_capability())"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == SUPPORTED[-1]


@pytest.mark.parametrize("level", SUPPORTED)
def test_variable_forces_each_supported_level(level):
    result = run_python("import torchops; print(torchops.cpu_capability())", TORCHOPS_CPU_CAPABILITY=level)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == level


def test_unknown_level_in_variable_fails_the_import_with_a_clear_message():
    result = run_python("import torchops", TORCHOPS_CPU_CAPABILITY="avx1024")
    assert result.returncode != 0
    assert (f"TORCHOPS_CPU_CAPABILITY='avx1024' is not a kernel level on {ARCHITECTURE} "
            f"(its levels: {', '.join(LEVELS)}); this CPU supports: {', '.join(SUPPORTED)}") in result.stderr


# Names of the other architectures' levels (on x86-64, which has them all, a name an
# aarch64 level could be given).
FOREIGN_LEVELS = sorted({name for levels in ARCHITECTURE_LEVELS.values() for name in levels} - set(LEVELS)) or ["neon"]


@pytest.mark.parametrize("level", FOREIGN_LEVELS)
def test_a_level_of_another_architecture_is_not_a_level_here(level, restore_level):
    with pytest.raises(ValueError, match=f"'{level}' is not a kernel level on {ARCHITECTURE} "
                                         rf"\(its levels: {', '.join(LEVELS)}\)"):
        torch.ops.torchops._set_cpu_capability(level)


@pytest.mark.skipif(SUPPORTED == LEVELS, reason="this CPU runs every level")
def test_level_the_cpu_cannot_run_is_refused():
    missing = LEVELS[len(SUPPORTED)]
    result = run_python("import torchops", TORCHOPS_CPU_CAPABILITY=missing)
    assert result.returncode != 0
    assert f"'{missing}' is a level this CPU cannot run" in result.stderr


def test_switch_in_process_and_refusals(restore_level):
    for level in SUPPORTED:
        torch.ops.torchops._set_cpu_capability(level)
        assert torchops.cpu_capability() == level
    with pytest.raises(ValueError, match=r"'AVX2' is not a kernel level on .*; this CPU supports: default"):
        torch.ops.torchops._set_cpu_capability("AVX2")
    assert torchops.cpu_capability() == SUPPORTED[-1]  # unchanged by the refusal


@pytest.fixture
def restore_level():
    before = torchops.cpu_capability()
    yield
    torch.ops.torchops._set_cpu_capability(before)


def test_a_kernel_table_that_leaves_a_slot_out_does_not_compile(tmp_path):
    """Every level's KernelTable starts from the portable one (csrc/kernels/kernels_impl.h's
    portable_table), which must set every slot (csrc/kernels/kernels.h's Slot): one left out
    would be a null pointer called at run time. The portable level's file compiles as it is,
    and not with the last slot of that table taken out."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    kernels = os.path.join(root, "csrc", "kernels")
    impl = open(os.path.join(kernels, "kernels_impl.h")).read()
    table = re.search(r"portable_table\(\) \{\s*return \{[^}]*\}", impl).group(0)
    short = re.sub(r",\s*&?\w+\}$", "}", table)
    assert short != table, table
    (tmp_path / "kernels").mkdir()
    shutil.copy(os.path.join(kernels, "kernels_default.cpp"), tmp_path / "level.cpp")

    def compile_(impl_text):
        # level.cpp's "kernels/kernels_impl.h" is found next to it first, kernels.h in csrc.
        (tmp_path / "kernels" / "kernels_impl.h").write_text(impl_text)
        # $CXX where it is set: the cross compiler under the emulated aarch64 run.
        compiler = os.environ.get("CXX", "g++").split()
        return subprocess.run([*compiler, "-std=c++20", "-fsyntax-only", "-I", os.path.join(root, "csrc"),
                               str(tmp_path / "level.cpp")], capture_output=True, text=True, timeout=120)

    whole = compile_(impl)
    assert whole.returncode == 0, whole.stderr[-2000:]
    missing = compile_(impl.replace(table, short))
    assert missing.returncode != 0 and "deleted function" in missing.stderr, missing.stderr[-2000:]
