"""torch.compile through Inductor's Triton backend on CPU tensors, without a GPU: the one
place the tests touch Triton's and Inductor's internals for it (tests/test_inductor_triton.py).

Inductor writes the Triton code it writes for a GPU (``cpu_backend="triton"``) and Triton's
interpreter (``TRITON_INTERPRET=1``) runs each kernel with NumPy on the CPU tensors.
Written for torch 2.14-2.15 with the Triton they bring; everything it changes is restored
on exit.
"""
import contextlib
import os
import sys
import warnings

import numpy as np
import torch


@contextlib.contextmanager
def inductor_triton_on_cpu():
    """Graphs compiled inside are Triton kernels run by Triton's interpreter. Yields a list
    that collects each shift the interpreter runs with a count outside [0, bits): NumPy
    defines those (0 or the sign fill), so results alone cannot show them."""
    import torch.utils._triton as torch_triton
    from torch._inductor import config
    from torch._inductor.runtime import triton_helpers  # noqa: F401 (in sys.modules below)
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase
    from triton.runtime import driver  # the DriverConfig instance, not the module
    from triton.runtime.interpreter import InterpretedFunction, InterpreterBuilder
    from triton.runtime.jit import JITFunction

    class TargetOnly(DriverBase):
        """Inductor's Triton codegen asks the active driver for its target (triton_backend:
        the backend hash in each kernel's inductor_meta); with no GPU Triton finds "0 active
        drivers". The interpreter itself uses no driver."""
        is_active = classmethod(lambda cls: False)  # never picked by Triton's own discovery
        get_current_target = lambda self: GPUTarget("cuda", 80, 32)
        get_active_torch_device = lambda self: torch.device("cpu")
        map_python_to_cpp_type = get_benchmarker = lambda self, *args: None

    out_of_range = []

    def watched(name, shift):
        def run(self, lhs, rhs):
            count, bits = rhs.data, lhs.data.dtype.itemsize * 8
            bad = count >= bits if count.dtype.kind == "u" else (count < 0) | (count >= bits)
            if np.any(bad):
                out_of_range.append((name, str(lhs.data.dtype), np.unique(count[bad]).tolist()))
            return shift(self, lhs, rhs)
        return run

    # (owner, attribute, original) of everything swapped. Triton's library (tl.sum's combine
    # functions, ...) and Inductor's triton_helpers are JITFunctions unless TRITON_INTERPRET
    # was set when they were imported, and an interpreted kernel cannot call a JITFunction
    # ("Cannot call @triton.jit'd outside of the scope of a kernel").
    swapped = [(InterpreterBuilder, n, getattr(InterpreterBuilder, n)) for n in ("create_shl", "create_lshr", "create_ashr")]
    modules = [m for n, m in list(sys.modules.items())
               if m and (n.startswith("triton.language") or n == "torch._inductor.runtime.triton_helpers")]
    for owner in modules + [c for m in modules for c in vars(m).values() if isinstance(c, type)]:
        swapped += [(owner, n, v) for n, v in list(vars(owner).items()) if isinstance(v, JITFunction)]
    interpreted = {}
    cached = (torch_triton.triton_backend, torch_triton.triton_hash_with_backend)  # functools.cache
    saved_driver, saved_env = driver._active, os.environ.get("TRITON_INTERPRET")
    try:
        os.environ["TRITON_INTERPRET"] = "1"  # read as kernels load (triton.jit, async_compile)
        driver.set_active(TargetOnly())
        for owner, name, value in swapped:
            setattr(owner, name, watched(name, value) if owner is InterpreterBuilder
                    else interpreted.setdefault(id(value), InterpretedFunction(value.fn)))
        for fn in cached:
            fn.cache_clear()
        torch._dynamo.reset()  # Dynamo reuses code compiled before, whatever cpu_backend is
        with config.patch(cpu_backend="triton"), warnings.catch_warnings():
            # every kernel module calls set_driver_to_cpu(), which warns without triton-cpu
            warnings.filterwarnings("ignore", "Could not find an active CPU backend")
            yield out_of_range
    finally:
        torch._dynamo.reset()  # no interpreted graph outlives the block
        driver.set_active(saved_driver)  # None: Triton looks for a driver again when asked
        for owner, name, value in swapped:
            setattr(owner, name, value)
        for fn in cached:
            fn.cache_clear()
        if saved_env is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = saved_env
