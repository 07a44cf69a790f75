"""Every overload of the library reaches every integration.

The overloads come from the registered library (torchops._contract.OVERLOADS, which reads
the dispatcher, where csrc/overloads.h's list put them), and each integration is asked
what it covers (and tests/dtensor_worker.py which overloads its cases call), so a new op
that misses one fails the test of that integration, naming the overload and the file to
add it to (docs/internals.md has the whole recipe). A test hands each check an op that no
integration knows, so that none can pass by accident. The prose lists of the ops
(docs/semantics.md's opening and section 8, the docstrings of torchops/onnx.py and
torchops/_triton_kernels.py) are held to the same ops: each must name every one.
"""
import ast
import re
from pathlib import Path

import pytest
import torch

from torchops._contract import DECLARATIONS, OVERLOADS, op_name

ROOT = Path(__file__).resolve().parent.parent


def _has_kernel(overload, key: str) -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key(overload.name(), key)


def _has_fake(overload) -> bool:
    from torch._library.simple_registry import singleton

    return singleton.find(overload.name()).fake_impl.kernel is not None


def _counts_versions(overload) -> bool:
    return not overload._schema.is_mutable or _has_kernel(overload, "ADInplaceOrView")


def _inductor_lowerings():
    from torchops import _inductor

    if not _inductor.enabled():
        pytest.skip("the Inductor lowerings are off on this torch (torchops/_inductor.py's WRITTEN_FOR)")
    from torch._inductor import lowering  # importing it registers torchops's lowerings

    return lowering.lowerings


def _sharding_rules():
    if not torch.distributed.is_available():
        pytest.skip("needs torch.distributed")
    from torch.distributed.tensor import DTensor

    return DTensor._op_dispatcher.sharding_propagator.op_strategy_funcs


def _dtensor_cases():
    """The overloads that tests/dtensor_worker.py's cases call, read from CASES (no process
    starts): the sharding rules are derived, and an overload's cases are what run them (an op
    that is not f(x) writes its own)."""
    import dtensor_worker

    return {f"torchops.{dtensor_worker.overload_called(c)}" for c in dtensor_worker.CASES}


def _onnx_translated():
    pytest.importorskip("onnxscript")
    from torchops import onnx

    return set(onnx.translation_table()) | set(onnx._FUNCTIONAL_FORM)


# What each integration covers: (where an overload is added, does it cover this overload).
INTEGRATIONS = {
    "CPU kernel": ("csrc/ops/cpu.h, csrc/registration.cpp", lambda o: _has_kernel(o, "CPU")),
    "device-generic kernel": ("csrc/ops/composite.h, csrc/registration.cpp",
                              lambda o: _has_kernel(o, "CompositeExplicitAutograd")),
    "Autograd fallthrough": ("csrc/registration.cpp", lambda o: _has_kernel(o, "Autograd")),
    "version counting": ("csrc/ops/autograd.cpp", _counts_versions),
    "fake kernel": ("torchops/_fake.py", _has_fake),
    "batching rule": ("torchops/_vmap.py", lambda o: _has_kernel(o, "FuncTorchBatched")),
    "Inductor lowering": ("torchops/_inductor.py", lambda o: o in _inductor_lowerings()),
    "DTensor sharding rule": ("torchops/_sharding.py", lambda o: o in _sharding_rules()),
    "DTensor case": ("tests/dtensor_worker.py's CASES and overload_called",
                     lambda o: str(o) in _dtensor_cases()),
    "ONNX translation": ("torchops/onnx.py", lambda o: o in _onnx_translated()),
}


def _missing(integration, overloads):
    where, covers = INTEGRATIONS[integration]
    missing = [str(overload) for overload in overloads if not covers(overload)]
    return f"{', '.join(missing)}: no {integration} ({where})" if missing else None


@pytest.mark.parametrize("integration", INTEGRATIONS)
def test_every_overload_has(integration):
    missing = _missing(integration, OVERLOADS)
    assert missing is None, missing


#: The name of the op that no integration knows: one no real op will ever take, so that no op
#: added to torchops can make the checks below find it named or covered.
UNKNOWN_OP = "not_an_op_probe"


@pytest.fixture(scope="module")
def unknown_op():
    """An op in a namespace of its own, with a CPU kernel and nothing else."""
    library = torch.library.Library("torchops_coverage_probe", "DEF")
    library.define(f"{UNKNOWN_OP}(Tensor x, int count) -> Tensor")
    library.impl(UNKNOWN_OP, lambda x, count: x.clone(), "CPU")
    yield getattr(torch.ops.torchops_coverage_probe, UNKNOWN_OP).default
    library._destroy()


@pytest.mark.parametrize("integration", [name for name in INTEGRATIONS if name != "CPU kernel"])
def test_each_check_names_an_op_it_does_not_cover(integration, unknown_op):
    where = INTEGRATIONS[integration][0]
    if integration == "version counting":  # a functional op needs none; its in-place form would
        library = torch.library.Library("torchops_coverage_probe", "FRAGMENT")
        try:
            library.define(f"{UNKNOWN_OP}_(Tensor(a!) x, int count) -> Tensor(a!)")
            unknown_op = getattr(torch.ops.torchops_coverage_probe, f"{UNKNOWN_OP}_").default
            expected = f"{unknown_op}: no {integration} ({where})"
            missing = _missing(integration, [unknown_op])
            assert missing == expected, f"expected the check to report {expected!r}, got {missing!r}"
        finally:
            library._destroy()
        return
    expected = f"{unknown_op}: no {integration} ({where})"
    missing = _missing(integration, [unknown_op])
    assert missing == expected, f"expected the check to report {expected!r}, got {missing!r}"


def test_an_op_without_a_declaration_is_named_with_the_file(unknown_op):
    # A new op's overloads before its declaration: the fake kernels, batching and sharding
    # rules are made from it, so importing torchops stops here, saying where it goes.
    from torchops._contract import declaration_of

    with pytest.raises(KeyError, match=re.escape(
            f"torchops_coverage_probe.{UNKNOWN_OP} is registered and has no declaration: "
            "add it to torchops/_contract.py's DECLARATIONS")):
        declaration_of(unknown_op)


# --------------------------------------------------------------------------
# The prose that lists the ops: each list must name every op, as the registered overloads
# and the declarations (torchops/_contract.py) have them, so that a new op that misses one
# fails here, naming the list and its file.
def _read(path: str) -> str:
    return (ROOT / path).read_text()


def _docstring(path: str) -> str:
    return ast.get_docstring(ast.parse(_read(path)))


def _between(text: str, start: str, end: str) -> str:
    """The text from the first `start` to the next `end` after it (to the end without one)."""
    begin = text.index(start)
    stop = text.find(end, begin + len(start))
    return text[begin:stop if stop >= 0 else None]


# Each list of the ops: (its file, its text). An op is named there as a word, by its name or
# as torchops.<name> (`packbits`, torchops.packbits; not np.packbits, not packbits_).
OP_LISTS = {
    "docs/semantics.md's opening": ("docs/semantics.md", lambda: _between(_read("docs/semantics.md"), "# ", "\n## 1.")),
    "docs/semantics.md section 8's ops that name themselves": (
        "docs/semantics.md",
        lambda: _between(_between(_read("docs/semantics.md"), "\n## 8.", "\n## 9."), "The ops name themselves (", ")")),
    "torchops/onnx.py's docstring of translation_table": (
        "torchops/onnx.py", lambda: _between(_docstring("torchops/onnx.py"), "- :func:`translation_table`", "\n- ")),
    "torchops/_triton_kernels.py's opening": (
        "torchops/_triton_kernels.py", lambda: _between(_docstring("torchops/_triton_kernels.py"), "", "\n\n")),
}


def _ops() -> list:
    """Every op by name: each registered overload's (bitshift_ beside bitshift) and each declared one."""
    return sorted({op_name(overload).removeprefix("torchops.") for overload in OVERLOADS} | set(DECLARATIONS))


def _unnamed(op_list: str, ops) -> str | None:
    where, text = OP_LISTS[op_list]
    text = text()
    missing = [op for op in ops if not re.search(rf"(?<![\w.])(?:torchops\.)?{re.escape(op)}(?!\w)", text)]
    return f"{', '.join(missing)}: not named in {op_list} ({where})" if missing else None


@pytest.mark.parametrize("op_list", OP_LISTS)
def test_every_list_of_the_ops_names_each(op_list):
    missing = _unnamed(op_list, _ops())
    assert missing is None, missing


@pytest.mark.parametrize("op_list", OP_LISTS)
def test_each_list_of_the_ops_is_found_and_names_no_unknown_op(op_list):
    # Each list's text is found (a heading or phrase it is cut at that changed fails here),
    # and an op it does not name is reported.
    assert OP_LISTS[op_list][1]().strip()
    where = OP_LISTS[op_list][0]
    expected = f"{UNKNOWN_OP}: not named in {op_list} ({where})"
    unnamed = _unnamed(op_list, [UNKNOWN_OP])
    assert unnamed == expected, f"expected {op_list} not to name {UNKNOWN_OP!r} ({expected!r}), got {unnamed!r}"
