"""Every device: which kernel each backend gets, the switch that sends CPU tensors to the
other devices' paths (TORCHOPS_CPU_KERNELS), and the registration of the compute ops'
Triton kernels.

The paths themselves are checked by the semantic suites, run whole under
TORCHOPS_CPU_KERNELS=composite and =triton (.ci/run); on a machine with a GPU,
tests/test_cuda.py runs them on the device.
"""
import ast
from pathlib import Path

import pytest
import torch

from torchops import _triton
from torchops._contract import OVERLOADS

from conftest import run_python

# The backend keys that have no kernel of torchops's own but the device-generic one.
OTHER_BACKENDS = ["CUDA", "XPU", "MPS", "PrivateUse1", "HIP", "Meta"]


@pytest.mark.parametrize("backend", OTHER_BACKENDS)
def test_every_overload_runs_on_every_backend(backend):
    missing = [str(o) for o in OVERLOADS if not torch._C._dispatch_has_computed_kernel_for_dispatch_key(o.name(), backend)]
    assert not missing, f"no {backend} kernel: {missing}"


@pytest.mark.parametrize("compute_op", sorted(_triton.COMPUTE_OPS))
def test_the_compute_ops_are_private_ops_with_an_aten_kernel_everywhere(compute_op):
    name = f"torchops::{compute_op}"
    assert torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeExplicitAutograd")
    assert str(getattr(torch.ops.torchops, compute_op).default) not in {str(o) for o in OVERLOADS}


def test_every_compute_op_has_a_triton_launcher():
    # Read from the source: importing the launchers needs Triton, which this torch may lack.
    tree = ast.parse(Path(_triton.__file__).with_name("_triton_kernels.py").read_text())
    launchers = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    missing = sorted(f"{compute_op} (launcher {launcher})" for compute_op, launcher in _triton.COMPUTE_OPS.items()
                     if launcher not in launchers)
    assert not missing, f"torchops/_triton_kernels.py has no launcher for {', '.join(missing)}: add it there"


@pytest.mark.skipif(not _triton.available(), reason="Triton is not installed with this torch")
@pytest.mark.parametrize("compute_op", sorted(_triton.COMPUTE_OPS))
@pytest.mark.parametrize("device", _triton.DEVICES)
def test_with_triton_installed_the_compute_ops_of_cuda_and_xpu_are_triton(compute_op, device):
    assert torch._C._dispatch_has_kernel_for_dispatch_key(f"torchops::{compute_op}", device)


def test_import_does_not_import_triton():
    result = run_python("import sys, torchops; print('triton' in sys.modules, torchops.cpu_capability())")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "False"


@pytest.mark.parametrize("kernels", ["composite"] + (["triton"] if _triton.available() else []))
def test_the_switch_names_the_path_as_the_level(kernels):
    code = ("import torch, torchops\n"
            "print(torchops.cpu_capability(), torch.ops.torchops._supported_cpu_capabilities())\n"
            "x = torch.tensor([-102, 64, -8], dtype=torch.int8)\n"
            "print(torchops.bitwise_right_shift(x, 3, is_arithmetic=False).tolist())\n"
            "try:\n"
            "    torch.ops.torchops._set_cpu_capability('default')\n"
            "except ValueError as error:\n"
            "    print(error)\n")
    result = run_python(code, TORCHOPS_CPU_KERNELS=kernels)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"{kernels} ['{kernels}']",
        "[19, 8, 31]",
        f"torchops: 'default' is not the kernel level of this process: TORCHOPS_CPU_KERNELS={kernels} sends "
        f"every CPU call to the {kernels} kernels",
    ]


@pytest.mark.skipif(not _triton.available(), reason="Triton is not installed with this torch")
def test_the_interpreted_kernels_run_where_triton_was_imported_compiled_first():
    # A process that imported Triton before TORCHOPS_CPU_KERNELS=triton set TRITON_INTERPRET
    # (one that compiled a graph first) has Triton's library compiled: its JITFunctions
    # (tl.sum, tl.zeros, ...) cannot be called from an interpreted kernel, so the kernels
    # use Triton's builtins alone. Every launcher's answers against the compiled levels'.
    code = ("import torch, torchops\n"
            "x = torch.arange(-8, 8, dtype=torch.int8).reshape(2, 8)\n"
            "print(torchops.bitwise_left_shift(x, 3).tolist(), torchops.bitwise_right_shift(x, x).tolist(),\n"
            "      torchops.bitwise_right_shift(x, 2, is_arithmetic=False).tolist(),\n"
            "      torchops.signbit(x.float()).tolist(), torchops.bitwise_count(x).tolist(),\n"
            "      torchops.packbits(x > 0).tolist(), torchops.unpackbits(torchops.packbits(x), bitorder='little').tolist(),\n"
            "      torchops.pack(x, 4).tolist(), torchops.unpack(torchops.pack(x, 2), 2, signed=True).tolist())\n")
    triton = run_python("import triton.language\n" + code, TORCHOPS_CPU_KERNELS="triton", TRITON_INTERPRET="0")
    assert triton.returncode == 0, triton.stderr
    compiled = run_python(code)
    assert compiled.returncode == 0, compiled.stderr
    assert triton.stdout == compiled.stdout


@pytest.mark.parametrize("value", ["Composite", "", "cuda"])
def test_a_value_that_is_not_a_choice_fails_the_import_naming_it(value):
    result = run_python("import torchops", TORCHOPS_CPU_KERNELS=value)
    assert result.returncode != 0
    assert (f"ValueError: torchops: TORCHOPS_CPU_KERNELS='{value}' is not a choice of CPU kernels "
            "(choices: composite, triton; unset for the compiled levels)") in result.stderr


def test_when_triton_fails_to_import_the_aten_kernels_take_over_with_a_warning():
    # The Triton kernels registered (as on a machine with a GPU), then their module failing
    # to import: the first call warns, takes the Triton kernels out and runs the ATen one.
    code = ("import sys, warnings, torch, torchops\n"
            "from torchops import _triton\n"
            "if not _triton.registered():\n"
            "    _triton.register()\n"
            "sys.modules['torchops._triton_kernels'] = None  # its import now raises ImportError\n"
            "x = torch.tensor([-1.0, 2.0, -0.0])\n"
            "out = torch.empty(3, dtype=torch.bool)\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    _triton._kernel('_signbit_compute', 'signbit_compute')(out, x)\n"
            "print(out.tolist(), _triton.registered())\n"
            "print(caught[0].message)\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "[True, False, True] ()"
    assert lines[1].startswith("torchops: Triton could not be imported (ModuleNotFoundError(") and lines[1].endswith(
        "the ops run their ATen compute kernels on every device")
    assert not torch._C._dispatch_has_kernel_for_dispatch_key("torchops::_signbit_compute", "CPU")

