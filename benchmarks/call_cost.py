"""Where the time of a 1-element call goes, layer by layer: the evidence behind
docs/performance.md's "per-call cost" section.

    .venv/bin/python benchmarks/call_cost.py [--rounds N]

A 1-element int32 left shift (and a 1-element float32 signbit), 1 thread, reached every
way a user can: the typed API (torchops.*, the compiled binding), the same functions forced
onto their torch.ops twin, torch.ops.torchops.* directly, TorchScript, and the C++ API,
each beside PyTorch's builtin reached the same way, and the compiled function that the
typed API's Python function calls, alone. The C++ rows come from a small timing
module compiled at run time (torch.utils.cpp_extension.load_inline, about a minute the first
time, cached after) that calls in a C++ loop, so they hold no Python at all; it also times
the CPU kernel called directly (the dispatcher skipped) and the allocation of a 1-element
output, which split a C++ call into its layers:

    typed API = Python call + binding (parse, GIL, wrap) + dispatcher + CPU kernel
    CPU kernel = output allocation + checks and loop

Every time is the least, over rounds, of the mean of many back-to-back calls (the cost of a
call without interference from the rest of a shared machine; the target table below uses
medians); the rounds alternate between all the rows, so a busy machine slows them alike. Run it against another
build (PYTHONPATH=that checkout) for a "before" column: rows that build lacks are skipped.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from torch.utils.cpp_extension import load_inline

import targets
import torchops

CPP_TIMERS = r"""
#include <torch/extension.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torchops/ops.h>

#include <chrono>

namespace {

template <class Call>
double ns_per_call(int64_t calls, const Call& call) {
  for (int64_t i = 0; i < 100; ++i) call();
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < calls; ++i) call();
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(calls);
}

template <class Signature>
c10::TypedOperatorHandle<Signature> handle(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Signature>();
}

using Shift = at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view, bool);
using ShiftOut = at::Tensor&(const at::Tensor&, const at::Tensor&, c10::string_view, bool, at::Tensor&);  // returns out, as ATen's do
using Signbit = at::Tensor(const at::Tensor&);
const c10::DispatchKeySet kCpuOnly(c10::DispatchKey::CPU);

}  // namespace

// The typed API's most common call bound with pybind11 instead (load_inline binds every
// function listed with pybind11): for the choice between pybind11 and CPython's vectorcall
// protocol. It does less than the binding's compiled function (no plain-tensor or mode
// checks, no keywords, the GIL held), so it is a lower bound for a pybind11 binding.
at::Tensor pybind11_left_shift(const at::Tensor& x, const at::Tensor& y) {
  return torchops::bitshift(x, y, "LEFT");
}

// ns per call of `what`, over `calls` calls from C++ (no Python).
double time_cpp(const std::string& what, const at::Tensor& x, at::Tensor out, const at::Tensor& f,
                int64_t calls) {
  if (what == "api") return ns_per_call(calls, [&] { torchops::bitshift(x, x, "LEFT"); });
  if (what == "api_out") return ns_per_call(calls, [&] { torchops::bitshift_out(out, x, x, "LEFT"); });
  if (what == "aten") return ns_per_call(calls, [&] { at::bitwise_left_shift(x, x); });
  if (what == "aten_out") return ns_per_call(calls, [&] { at::bitwise_left_shift_out(out, x, x); });
  if (what == "api_signbit") return ns_per_call(calls, [&] { torchops::signbit(f); });
  if (what == "aten_signbit") return ns_per_call(calls, [&] { at::signbit(f); });
  // The registered CPU kernels themselves: the dispatcher's work (key extraction, the
  // Autograd and ADInplaceOrView steps) skipped.
  static const auto shift = handle<Shift>("torchops::bitshift", "");
  static const auto shift_out = handle<ShiftOut>("torchops::bitshift", "out");
  static const auto signbit = handle<Signbit>("torchops::signbit", "");
  if (what == "kernel") return ns_per_call(calls, [&] { shift.redispatch(kCpuOnly, x, x, "LEFT", true); });
  if (what == "kernel_out") return ns_per_call(calls, [&] { shift_out.redispatch(kCpuOnly, x, x, "LEFT", true, out); });
  if (what == "kernel_signbit") return ns_per_call(calls, [&] { signbit.redispatch(kCpuOnly, f); });
  // What every functional call pays for its output: a 1-element tensor made and freed.
  if (what == "empty") return ns_per_call(calls, [&] { at::detail::empty_cpu({1}, at::kInt); });
  TORCH_CHECK(false, "time_cpp: unknown ", what);
}
"""

CPP_ROWS = ["api", "api_out", "aten", "aten_out", "api_signbit", "aten_signbit", "kernel", "kernel_out",
            "kernel_signbit", "empty"]


def build_cpp_timers():
    return load_inline(
        name="torchops_call_cost",
        cpp_sources=[CPP_TIMERS],
        functions=["time_cpp", "pybind11_left_shift"],
        extra_include_paths=[os.path.join(os.path.dirname(torchops.__file__), "include")],  # torchops/ops.h
        extra_ldflags=[torchops.library_path()],
        extra_cflags=["-O2"],
        verbose=False,
    )


@torch.jit.script
def builtin_loop(x: torch.Tensor, out: torch.Tensor, calls: int):
    for _ in range(calls):
        torch.bitwise_left_shift(x, x, out=out)


@torch.jit.script
def torchops_loop(x: torch.Tensor, out: torch.Tensor, calls: int):
    for _ in range(calls):
        torch.ops.torchops.bitshift(x, x, "LEFT", True, out=out)  # TorchScript picks .out


def typed_api_loop(x: torch.Tensor, out: torch.Tensor, calls: int):
    for _ in range(calls):
        torchops.bitwise_left_shift(x, x, out=out)


SCRIPT_LOOPS = {"TorchScript: builtin": builtin_loop, "TorchScript: torch.ops.torchops": torchops_loop}
try:
    SCRIPT_LOOPS["TorchScript: typed API"] = torch.jit.script(typed_api_loop)
except Exception:  # a build whose typed API TorchScript cannot compile: the row is skipped
    pass


def python_rows(x, out, f, bool_out):
    """name -> a no-argument call."""
    shift_out = torch.ops.torchops.bitshift.out
    rows = {
        "typed API: torchops.bitwise_left_shift(x, y)": lambda: torchops.bitwise_left_shift(x, x),
        "typed API, out=": lambda: torchops.bitwise_left_shift(x, x, out=out),
        "torch.ops.torchops.bitshift(x, y, 'LEFT')": lambda: torch.ops.torchops.bitshift.default(x, x, "LEFT", True),
        "torch.ops.torchops.bitshift.out": lambda: shift_out(x, x, "LEFT", True, out=out),
        "builtin: torch.bitwise_left_shift(x, y)": lambda: torch.bitwise_left_shift(x, x),
        "builtin, out=": lambda: torch.bitwise_left_shift(x, x, out=out),
        "aten through torch.ops: torch.ops.aten.bitwise_left_shift.Tensor": (
            lambda: torch.ops.aten.bitwise_left_shift.Tensor(x, x)),
        "typed API: torchops.signbit(x)": lambda: torchops.signbit(f),
        "typed API signbit, out=": lambda: torchops.signbit(f, out=bool_out),
        "torch.ops.torchops.signbit(x)": lambda: torch.ops.torchops.signbit.default(f),
        "builtin: torch.signbit(x)": lambda: torch.signbit(f),
        "builtin signbit, out=": lambda: torch.signbit(f, out=bool_out),
    }
    fastpath = getattr(torchops, "_fastpath", None)
    if fastpath is not None and torchops.call_path() == "binding":
        compiled = fastpath.FUNCTIONS["bitwise_left_shift"]
        if compiled is not torchops.bitwise_left_shift:  # the function is Python, `compiled` is not
            rows["the compiled function alone (what the typed API calls)"] = lambda: compiled(x, x)
        def on_twin(call):
            def run():
                with fastpath.torch_ops_only():
                    call()
            return run
        # The context manager's own cost is measured too and taken off (see measure()).
        rows["typed API on its torch.ops twin"] = on_twin(lambda: torchops.bitwise_left_shift(x, x))
        rows["(the switch to the twin alone)"] = on_twin(lambda: None)
    return rows


def per_call_ns(call, calls):
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e9


def measure(rounds: int):
    torch.set_num_threads(1)
    x = torch.ones(1, dtype=torch.int32)
    out = torch.empty_like(x)
    f = torch.tensor([-1.0])
    bool_out = torch.empty(1, dtype=torch.bool)
    rows = python_rows(x, out, f, bool_out)
    cpp = build_cpp_timers()
    rows["the same shift bound with pybind11 (a lower bound: no checks, no keywords)"] = (
        lambda: cpp.pybind11_left_shift(x, x))
    script_calls = 20000
    samples = {name: [] for name in [*rows, *(f"C++ {r}" for r in CPP_ROWS), *SCRIPT_LOOPS]}
    for call in rows.values():
        per_call_ns(call, 200)
    for loop in SCRIPT_LOOPS.values():
        loop(x, out, 100)
    for _ in range(rounds):
        for name, call in rows.items():
            samples[name].append(per_call_ns(call, 2000))
        for what in CPP_ROWS:
            samples[f"C++ {what}"].append(cpp.time_cpp(what, x, out, f, 20000))
        for name, loop in SCRIPT_LOOPS.items():
            start = time.perf_counter()
            loop(x, out, script_calls)
            samples[name].append((time.perf_counter() - start) / script_calls * 1e9)
    # The least of the rounds: the cost of a call without interference from the rest of the
    # machine, which is what the layers add up to (medians on a shared machine do not).
    least = {name: min(values) for name, values in samples.items()}
    if "(the switch to the twin alone)" in least:
        least["typed API on its torch.ops twin"] -= least.pop("(the switch to the twin alone)")
    return least


def report(ns):
    def row(name, value):
        print(f"  {value:7.0f} ns  {name}")

    print(f"1-element int32 left shift / float32 signbit, 1 thread, torch {torch.__version__}, "
          f"kernel level {torchops.cpu_capability()}, call path "
          f"{torchops.call_path() if hasattr(torchops, 'call_path') else 'torch.ops (no binding in this build)'}")
    print("\nPython (each time includes creating and freeing the result, except out=):")
    for name in ns:
        if not name.startswith(("C++", "TorchScript")):
            row(name, ns[name])
    print("\nTorchScript loop (no Python per call):")
    row("torch.bitwise_left_shift(x, y, out=)", ns["TorchScript: builtin"])
    row("torch.ops.torchops.bitshift(x, y, 'LEFT', True, out=)", ns["TorchScript: torch.ops.torchops"])
    if "TorchScript: typed API" in ns:
        row("torchops.bitwise_left_shift(x, y, out=)", ns["TorchScript: typed API"])
    print("\nC++ (no Python):")
    names = {"api": "torchops::bitshift(x, y, \"LEFT\")", "api_out": "torchops::bitshift_out(out, x, y, \"LEFT\")",
             "aten": "at::bitwise_left_shift(x, y)", "aten_out": "at::bitwise_left_shift_out(out, x, y)",
             "api_signbit": "torchops::signbit(x)", "aten_signbit": "at::signbit(x)",
             "kernel": "torchops's CPU kernel, dispatcher skipped", "kernel_out": "the same, out=",
             "kernel_signbit": "torchops's signbit CPU kernel, dispatcher skipped",
             "empty": "allocating and freeing a 1-element output (at::detail::empty_cpu)"}
    for what in CPP_ROWS:
        row(names[what], ns[f"C++ {what}"])

    typed = ns["typed API: torchops.bitwise_left_shift(x, y)"]
    api, kernel, empty = ns["C++ api"], ns["C++ kernel"], ns["C++ empty"]
    print("\nWhere a typed-API call goes (functional, int32 shift):")
    row("Python: the call, its arguments (binding or torch.ops), wrapping and freeing the result", typed - api)
    row("dispatcher: key extraction, the Autograd step", api - kernel)
    row("output allocation", empty)
    row("checks and loop", kernel - empty)
    row("total", typed)
    typed_out, api_out, kernel_out = ns["typed API, out="], ns["C++ api_out"], ns["C++ kernel_out"]
    print("Where a typed-API out= call goes:")
    row("Python: the call and its arguments (binding or torch.ops)", typed_out - api_out)
    row("dispatcher: key extraction, the Autograd and ADInplaceOrView (version count) steps", api_out - kernel_out)
    row("checks and loop", kernel_out)
    row("total", typed_out)


def target_pairs():
    """(typed function and form, torchops call, the matching builtin call) for every typed
    function, functional, in place and out=, on 1-element tensors. A logical right shift
    has no builtin; it is set against the arithmetic one, the same amount of work."""
    x, y, o = torch.ones(1, dtype=torch.int32), torch.ones(1, dtype=torch.int32), torch.empty(1, dtype=torch.int32)
    f, b = torch.tensor([-1.0]), torch.empty(1, dtype=torch.bool)
    return [
        ("bitshift(x, y, 'LEFT')", lambda: torchops.bitshift(x, y, "LEFT"), lambda: torch.bitwise_left_shift(x, y)),
        ("bitshift(x, 3, 'RIGHT')", lambda: torchops.bitshift(x, 3, "RIGHT"), lambda: torch.bitwise_right_shift(x, 3)),
        ("bitshift(x, y, 'LEFT', out=)", lambda: torchops.bitshift(x, y, "LEFT", out=o),
         lambda: torch.bitwise_left_shift(x, y, out=o)),
        ("bitshift(x, 3, 'RIGHT', out=)", lambda: torchops.bitshift(x, 3, "RIGHT", out=o),
         lambda: torch.bitwise_right_shift(x, 3, out=o)),
        ("bitwise_left_shift(x, y)", lambda: torchops.bitwise_left_shift(x, y), lambda: torch.bitwise_left_shift(x, y)),
        ("bitwise_left_shift(x, 3)", lambda: torchops.bitwise_left_shift(x, 3), lambda: torch.bitwise_left_shift(x, 3)),
        ("bitwise_right_shift(x, y)", lambda: torchops.bitwise_right_shift(x, y),
         lambda: torch.bitwise_right_shift(x, y)),
        ("bitwise_right_shift(x, y, is_arithmetic=False)", lambda: torchops.bitwise_right_shift(x, y, is_arithmetic=False),
         lambda: torch.bitwise_right_shift(x, y)),
        ("bitwise_left_shift(x, y, out=)", lambda: torchops.bitwise_left_shift(x, y, out=o),
         lambda: torch.bitwise_left_shift(x, y, out=o)),
        ("bitwise_right_shift(x, y, out=)", lambda: torchops.bitwise_right_shift(x, y, out=o),
         lambda: torch.bitwise_right_shift(x, y, out=o)),
        ("bitwise_left_shift_(x, y)", lambda: torchops.bitwise_left_shift_(o, y), lambda: o.bitwise_left_shift_(y)),
        ("bitwise_right_shift_(x, 1)", lambda: torchops.bitwise_right_shift_(o, 1), lambda: o.bitwise_right_shift_(1)),
        ("signbit(x)", lambda: torchops.signbit(f), lambda: torch.signbit(f)),
        ("signbit(x, out=)", lambda: torchops.signbit(f, out=b), lambda: torch.signbit(f, out=b)),
    ]


def measure_targets(rounds: int):
    """{(threads, level): [(name, torchops ns, builtin ns)]} for every typed function, at 1
    and 2 threads and every vector level this CPU runs (the default level if none)."""
    levels = [level for level in torch.ops.torchops._supported_cpu_capabilities() if level != "default"] or ["default"]
    before_threads, before_level = torch.get_num_threads(), torchops.cpu_capability()
    pairs = target_pairs()
    results = {}
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for level in levels:
                torch.ops.torchops._set_cpu_capability(level)
                samples = [([], []) for _ in pairs]
                for _ in range(rounds):
                    for (_, ours, theirs), (ours_ns, theirs_ns) in zip(pairs, samples):
                        ours_ns.append(per_call_ns(ours, 1000))
                        theirs_ns.append(per_call_ns(theirs, 1000))
                results[threads, level] = [(name, statistics.median(a), statistics.median(b))
                                           for (name, _, _), (a, b) in zip(pairs, samples)]
    finally:
        torch.set_num_threads(before_threads)
        torch.ops.torchops._set_cpu_capability(before_level)
    return results


def report_targets(results):
    """The per-call rows, and call_cost.py's targets (targets.py) judged on them."""
    print("\n1-element calls of every typed function against the matching builtin (ratio = builtin / torchops):")
    rows = []
    for (threads, level), measured in results.items():
        print(f"  {threads} thread(s), level {level}:")
        for name, ours, theirs in measured:
            rows.append({"name": name, "threads": threads, "level": level, "x_builtin": theirs / ours})
            print(f"    {ours:6.0f} ns  {theirs:6.0f} ns  {theirs / ours:5.2f}x  {name}")
    print("\nTARGETS (benchmarks/targets.py)")
    print(targets.text(targets.evaluate("call_cost", rows, lambda r: f"{r['name']} ({r['threads']} thread(s), "
                                                                       f"{r['level']})")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="alternating rounds (default 15)")
    rounds = parser.parse_args().rounds
    report(measure(rounds))
    report_targets(measure_targets(max(3, rounds // 3)))


if __name__ == "__main__":
    main()
