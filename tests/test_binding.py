"""The compiled binding of the typed API (torchops._binding, torchops/_fastpath.py).

The suites of the contract run on both call paths (conftest.call_path); this file checks
what is particular to the binding: that the typed API calls it, with one signature for the
function, its compiled function and its twin (torchops/_twins.py); that every call it does
not take exactly as torch.ops would (a TorchFunctionMode, a __torch_function__ subclass)
reaches its twin; that every compiled function takes the common calls itself, every
argument by keyword too, says errors in its twin's words and leaks no reference (checks
derived from the declarations: every row of tests/calls.py's TYPED_CALLS is under each);
that the dispatch keys below it (FakeTensorMode, make_fx, tracing, vmap, inference mode,
version counters, torch.compile) see the same ops; threads; and the torch.ops path when the
binding is switched off or missing.
"""
import contextlib
import gc
import inspect
import re
import subprocess
import sys
import threading
import typing
import warnings
import weakref

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

import torchops
from torchops import _fastpath, _twins as twins, ops
from torchops._contract import DECLARATIONS, declaration_of, op_name

from calls import TYPED_CALLS as CALLS, typed_arguments, typed_call
from conftest import DispatchRecorder, make_tensor

pytestmark = pytest.mark.python_layers

OPS = torch.ops.torchops
# The functions with a compiled function: the public API but the kernel-level query.
TYPED_FUNCTIONS = [name for name in ops.__all__ if name != "cpu_capability"]
# The TorchScript signatures (the @overload stubs) of each, read when this file is collected:
# torch.jit.script forgets a function's stubs once it has compiled them, as another test
# file's scripting may before these tests run.
TORCHSCRIPT_STUBS = {
    name: list(torch._jit_internal._get_fn_overloads(torch._jit_internal._qualified_name(getattr(torchops, name)))
               or []) for name in TYPED_FUNCTIONS}


def _x():
    return make_tensor([-102, 64, -8, 1, 0, 127], torch.int8)


def _counts():
    return make_tensor([1, 3, 9, -1, 7, 2], torch.int8)


def _floats():
    return torch.tensor([-0.0, 0.0, -1.5, float("nan"), -float("inf"), 2.0])


CALL_IDS = [name for name, _, _ in CALLS]


def test_the_calls_reach_every_overload_and_every_function():
    from torchops._contract import OVERLOADS

    missing = sorted(str(o) for o in set(OVERLOADS) - {overload for _, _, overload in CALLS})
    reached = {overload._schema.name.removeprefix("torchops::").removesuffix("_") for _, _, overload in CALLS}
    missing += [f"torchops.{op} (declared in torchops/_contract.py)" for op in DECLARATIONS if op not in reached]
    sources = " ".join(call.source for _, call, _ in CALLS)
    missing += [f"torchops.{name}" for name in TYPED_FUNCTIONS if f"torchops.{name}(" not in sources]
    assert not missing, f"tests/calls.py: no call in TYPED_CALLS reaches {', '.join(missing)}: add one"


def _eager(call):
    """The answer on the torch.ops path, for comparison."""
    with _fastpath.torch_ops_only():
        return call(_x(), _counts(), _floats())


def _tensors(result) -> list:
    """A call's result as its tensors: hamming_topk's (values, indices), any other's one."""
    return list(result) if isinstance(result, tuple) else [result]


def _same(result, expected) -> bool:
    """The same answer: of the same type where it is a tuple (a HammingTopk from hamming_topk
    on either path), each tensor equal, a subclass's as a plain tensor."""
    if isinstance(expected, tuple):
        return type(result) is type(expected) and len(result) == len(expected) and all(map(_same, result, expected))
    return torch.equal(result.as_subclass(torch.Tensor), expected)


def assert_twin_outcome(call, expected):
    """`call` gives `expected`: the answer of a callable (_same), or an (error, message) pair
    raised with a message that starts so."""
    if callable(expected):
        assert _same(call(), expected())
        return
    error, message = expected
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value).startswith(message), raised.value


# --------------------------------------------------------------------------
# What torchops exports
def test_torchops_exports_the_typed_api_which_calls_the_compiled_functions():
    assert torchops.call_path() == "binding"
    for name in TYPED_FUNCTIONS:
        function, compiled = getattr(torchops, name), _fastpath.FUNCTIONS[name]
        assert function is getattr(ops, name) and inspect.isfunction(function), function
        assert inspect.isbuiltin(compiled), f"the compiled function of torchops.{name} is {compiled!r}, not compiled"
        assert getattr(ops, f"_{name}_compiled") is compiled  # what a Python call of the function calls
        assert compiled.__name__ == name


@pytest.mark.parametrize("name", TYPED_FUNCTIONS)
def test_the_function_its_compiled_function_and_its_twin_have_one_signature(name):
    function, compiled, twin = getattr(torchops, name), _fastpath.FUNCTIONS[name], twins.TWINS[name]
    signature = inspect.signature(function, eval_str=True)
    assert inspect.signature(twin, eval_str=True) == signature
    plain = signature.replace(
        parameters=[p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()],
        return_annotation=inspect.Signature.empty)
    assert inspect.signature(compiled) == plain
    assert inspect.getdoc(function)
    # The TorchScript signatures (the @overload stubs) narrow the types, nothing else.
    stubs = TORCHSCRIPT_STUBS[name]
    # A function without stubs has one signature, its own: no argument of several types.
    assert stubs or not any(typing.get_origin(p.annotation) is typing.Union and type(None) not in typing.get_args(
        p.annotation) for p in signature.parameters.values()), name
    for stub in stubs:
        assert [(p.name, p.default) for p in inspect.signature(stub).parameters.values()] == \
            [(p.name, p.default) for p in signature.parameters.values()], stub


def test_a_signature_that_strays_from_its_declaration_fails_the_import():
    # torchops.ops holds each function's twin, compiled function and TorchScript signatures
    # to its declaration when it is imported; a declaration that changed alone is caught.
    def bitshift(x, y, direction, arithmetic=False, out=None):
        ...

    with pytest.raises(ImportError, match=re.escape(
            "torchops: the twin of bitshift takes (x, y, direction, arithmetic=True, out=None), "
            "its declaration (torchops.ops) (x, y, direction, arithmetic=False, out=None)")):
        _fastpath.check_declarations({**vars(ops), "bitshift": bitshift})
    # A compiled function without its typed function (a new op's, before its declaration).
    with pytest.raises(ImportError, match=re.escape(
            "torchops: the binding has a compiled function for signbit and torchops/ops.py declares no such "
            "function")):
        _fastpath.check_declarations({name: f for name, f in vars(ops).items() if name != "signbit"})
    _fastpath.check_declarations(vars(ops))


def test_a_python_call_reaches_the_compiled_function():
    # The compiled function is what a Python call of the typed API runs: with it replaced,
    # the function calls the replacement, with the arguments as given.
    seen = []
    compiled = ops._bitwise_left_shift_compiled
    ops._bitwise_left_shift_compiled = lambda *args: seen.append(args) or "the replacement's answer"
    try:
        assert torchops.bitwise_left_shift(1, 2, False) == "the replacement's answer"
    finally:
        ops._bitwise_left_shift_compiled = compiled
    assert seen == [(1, 2, False, None, None)]


def test_cpu_capability_and_call_path_are_exported():
    assert {"call_path", "cpu_capability"} <= set(torchops.__all__)
    assert torchops.call_path() in ("binding", "torch.ops")


def test_help_shows_the_public_api_and_no_private_alias():
    import pydoc

    text = pydoc.render_doc(torchops, renderer=pydoc.plaintext)
    listed = re.findall(r"^    (\w+)\(", text, re.M)
    assert set(torchops.__all__) - {"cmake_prefix_path"} <= set(listed)
    # pydoc lists a module held under another name (an alias) among SUBMODULES
    aliases = [name for name, value in vars(torchops).items()
               if inspect.ismodule(value) and value.__name__.startswith("torchops.") and value.__name__ != f"torchops.{name}"]
    assert aliases == [] and "SUBMODULES" not in text, aliases


# --------------------------------------------------------------------------
# Calls the binding leaves to torch.ops
class RecordingMode(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.append(func)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("name, call, overload", CALLS, ids=CALL_IDS)
def test_a_torch_function_mode_sees_every_typed_call(name, call, overload):
    with RecordingMode() as mode:
        result = call(_x(), _counts(), _floats())
    assert overload in mode.seen, mode.seen
    assert _same(result, _eager(call))


class Tagged(torch.Tensor):
    """A subclass with a __torch_function__ that records the ops it sees."""
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func)
        return super().__torch_function__(func, types, args, kwargs)


@pytest.mark.parametrize("name, call, overload", CALLS, ids=CALL_IDS)
def test_a_torch_function_subclass_is_honoured(name, call, overload):
    Tagged.seen = []
    result = call(_x().as_subclass(Tagged), _counts().as_subclass(Tagged), _floats().as_subclass(Tagged))
    assert overload in Tagged.seen, Tagged.seen
    assert _same(result, _eager(call))


def test_a_subclass_result_comes_back_unchanged():
    class Answer(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "answered by the subclass"

    x = _x().as_subclass(Answer)
    assert torchops.bitshift(x, 1, "LEFT") == "answered by the subclass"
    assert torchops.signbit(_floats(), out=torch.empty(6, dtype=torch.bool).as_subclass(Answer)) == \
        "answered by the subclass"
    # hamming_topk's twin makes a HammingTopk of the op's pair only: another answer comes back as it is.
    codes = torch.zeros(2, 3, dtype=torch.uint8)
    assert torchops.hamming_topk(codes.as_subclass(Answer), codes, 1) == "answered by the subclass"


def test_parameters_are_plain_tensors():
    # torch.nn.Parameter is Tensor as far as C++ is concerned (PyTorch's own bindings agree).
    x = torch.nn.Parameter(_x(), requires_grad=False)
    assert torch.equal(torchops.bitwise_left_shift(x, _counts()), _eager(CALLS[4][1]))


# --------------------------------------------------------------------------
# Dispatch keys below the binding
@pytest.mark.parametrize("name, call, overload", CALLS, ids=CALL_IDS)
def test_fake_tensor_mode(name, call, overload):
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    expected = _eager(call)
    with FakeTensorMode() as mode:
        fake = call(mode.from_tensor(_x()), mode.from_tensor(_counts()), mode.from_tensor(_floats()))
    assert isinstance(fake, tuple) is isinstance(expected, tuple) and type(fake) in (type(expected), FakeTensor)
    assert [(f.shape, f.dtype, f.stride()) for f in _tensors(fake)] == \
        [(e.shape, e.dtype, e.stride()) for e in _tensors(expected)]


def test_fake_tensor_mode_raises_the_eager_error():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        with pytest.raises(TypeError, match="torchops.bitshift: x must be an integer tensor"):
            torchops.bitshift(mode.from_tensor(_floats()), 1, "LEFT")


def _python_code_run(call) -> set:
    """The code objects of the Python functions that run during call() (sys.setprofile sees
    every call)."""
    codes = set()

    def record(frame, event, arg):
        if event == "call":
            codes.add(frame.f_code)

    sys.setprofile(record)
    try:
        call()
    except Exception:
        pass
    finally:
        sys.setprofile(None)
    return codes


@pytest.mark.parametrize("name, call", [
    ("bitwise_left_shift", lambda s: torchops.bitwise_left_shift(s, 1)),
    ("bitshift", lambda s: torchops.bitshift(torch.ones(2, 2, dtype=torch.int32), s, "LEFT")),
    ("bitwise_count", lambda s: torchops.bitwise_count(s)),
], ids=["x", "y", "unary x"])
def test_a_sparse_tensor_is_the_bindings_own_call(name, call):
    # The op refuses another layout in the twin's words, so the binding sends it to the op
    # itself instead of to the twin (the refusal: FAILING_CALLS' "a sparse x").
    if _fastpath.call_path() != "binding":
        pytest.skip("the compiled binding is not in use")
    sparse = torch.tensor([[1, 0], [0, 2]], dtype=torch.int32).to_sparse()
    twin = twins.TWINS[name].__code__
    assert twin not in _python_code_run(lambda: call(sparse))
    # The same observation sees the twin run for a call the binding leaves to it (a float count).
    assert twins.TWINS["bitshift"].__code__ in _python_code_run(lambda: torchops.bitshift(sparse, 1.5, "LEFT"))


def _sparse(x, c, f):
    return torchops.bitwise_left_shift(x.to_sparse(), c)


# Calls that fail in the op: (name, call, the overload, the error, how its message begins).
FAILING_CALLS = [
    ("shapes that do not broadcast", lambda x, c, f: torchops.bitwise_left_shift(x, c[:4]), OPS.bitshift.default,
     RuntimeError, "torchops.bitwise_left_shift: x of shape [6] and y of shape [4] do not broadcast"),
    ("out of another dtype", lambda x, c, f: torchops.bitshift(x, 3, "RIGHT", out=torch.empty(6)),
     OPS.bitshift.Scalar_out, RuntimeError, "torchops.bitshift: out has dtype float32"),
    ("in place, a wider result", lambda x, c, f: torchops.bitwise_right_shift_(x, c.long()), OPS.bitshift_.default,
     RuntimeError, "torchops.bitwise_right_shift_: the result dtype int64"),
    ("an unknown direction", lambda x, c, f: torchops.bitshift(x, c, "UP"), OPS.bitshift.default, ValueError,
     "torchops.bitshift: direction must be one of"),
    ("signbit of complex", lambda x, c, f: torchops.signbit(f.to(torch.complex64)), OPS.signbit.default, TypeError,
     "torchops.signbit: x must be a float16"),
    ("signbit, out not bool", lambda x, c, f: torchops.signbit(f, out=torch.empty(6)), OPS.signbit.out,
     RuntimeError, "torchops.signbit: out has dtype float32"),
    ("a sparse x", _sparse, OPS.bitshift.default, TypeError, "torchops.bitwise_left_shift: x must be a strided"),
    ("unpackbits of int8", lambda x, c, f: torchops.unpackbits(x), OPS.unpackbits.default, TypeError,
     "torchops.unpackbits: x must be a uint8 tensor of packed bytes, got int8"),
    ("pack, out not uint8", lambda x, c, f: torchops.pack(x, 4, out=torch.empty(3, dtype=torch.int8)),
     OPS.pack.out, RuntimeError, "torchops.pack: out has dtype int8"),
]


@pytest.mark.parametrize("path", ["binding", "torch.ops"])
@pytest.mark.parametrize("name, call, overload, error, message", [(name, call, overload, None, None)
                                                                  for name, call, overload in CALLS] + FAILING_CALLS,
                         ids=CALL_IDS + [case[0] for case in FAILING_CALLS])
def test_each_typed_call_dispatches_its_op_once(name, call, overload, error, message, path):
    x, counts, floats = _x(), _counts(), _floats()
    before = x.clone()
    with _fastpath.torch_ops_only() if path == "torch.ops" else contextlib.nullcontext():
        with DispatchRecorder() as recorder:
            if error is None:
                call(x, counts, floats)
            else:
                with pytest.raises(error) as raised:
                    call(x, counts, floats)
    assert recorder.seen == [overload]
    if error is not None:
        assert str(raised.value).startswith(message), raised.value
        assert torch.equal(x, before)


@pytest.mark.parametrize("name, call, overload", CALLS, ids=CALL_IDS)
def test_make_fx_records_the_torchops_op(name, call, overload):
    from torch.fx.experimental.proxy_tensor import make_fx

    graph = make_fx(call)(_x(), _counts(), _floats())
    targets = [node.target for node in graph.graph.nodes if node.op == "call_function"]
    assert overload in targets, targets
    assert _same(graph(_x(), _counts(), _floats()), _eager(call))


@pytest.mark.parametrize("name, call, overload", CALLS, ids=CALL_IDS)
def test_jit_trace_records_the_torchops_op(name, call, overload):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit.trace is deprecated in PyTorch 2.13
        traced = torch.jit.trace(call, (_x(), _counts(), _floats()), check_trace=False)
    assert f"torchops::{overload._schema.name.split('::')[1]}" in str(traced.graph), traced.graph
    x, counts, floats = _x().flip(0), _counts().flip(0), _floats().flip(0)
    with _fastpath.torch_ops_only():
        expected = call(x, counts, floats)
    # A traced function gives a tuple result as a plain tuple (hamming_topk's HammingTopk).
    assert _same(tuple(_tensors(traced(x, counts, floats))), tuple(_tensors(expected)))


def test_vmap():
    x = torch.arange(-12, 12, dtype=torch.int32).reshape(4, 6)
    counts = torch.arange(24, dtype=torch.int32).reshape(4, 6) % 35
    floats = torch.linspace(-3, 3, 24).reshape(4, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch: no batching rule, so it loops over the batch
        batched = torch.vmap(lambda a, b: torchops.bitwise_right_shift(a, b, is_arithmetic=False))(x, counts)
        scalar = torch.vmap(lambda a: torchops.bitshift(a, 3, "LEFT"))(x)
        sign = torch.vmap(torchops.signbit)(floats)
    assert torch.equal(batched, torch.stack([torchops.bitwise_right_shift(a, b, False) for a, b in zip(x, counts)]))
    assert torch.equal(scalar, torchops.bitshift(x, 3, "LEFT"))
    assert torch.equal(sign, torch.signbit(floats))


@pytest.mark.parametrize("name, call, overload", CALLS, ids=CALL_IDS)
def test_inference_mode(name, call, overload):
    expected = _eager(call)
    with torch.inference_mode():
        result = call(_x(), _counts(), _floats())
    assert _same(result, expected)
    assert all(tensor.is_inference() for tensor in _tensors(result))  # made in the mode, as its x (in place) and out are


def _on(path):
    """Runs the block on `path`: the binding, or every call sent to the torch.ops twins."""
    return _fastpath.torch_ops_only() if path == "torch.ops" else contextlib.nullcontext()


@pytest.mark.parametrize("path", ["binding", "torch.ops"])
@pytest.mark.parametrize("write", ["in place", "in place int", "out", "out int", "signbit out"])
def test_writing_an_inference_tensor_outside_inference_mode_is_refused_before_the_write(path, write):
    with torch.inference_mode():
        target = _x() if "signbit" not in write else torch.zeros(6, dtype=torch.bool)
    before = target.clone()
    counts = _counts()  # a normal tensor: the call reaches the ADInplaceOrView key too
    calls = {
        "in place": lambda: torchops.bitwise_left_shift_(target, counts),
        "in place int": lambda: torchops.bitwise_left_shift_(target, 1),
        "out": lambda: torchops.bitshift(_x(), counts, "LEFT", out=target),
        "out int": lambda: torchops.bitshift(_x(), 1, "LEFT", out=target),
        "signbit out": lambda: torchops.signbit(_floats(), out=target),
    }
    with _on(path):
        with pytest.raises(RuntimeError, match="inference tensor.*torch.inference_mode"):
            calls[write]()
    assert torch.equal(target, before)


@pytest.mark.parametrize("path", ["binding", "torch.ops"])
def test_writes_bump_the_version_counter_once(path):
    x, counts, out, bools = _x(), _counts(), torch.empty(6, dtype=torch.int8), torch.empty(6, dtype=torch.bool)
    view = x[1:]
    with _on(path):
        for write, written in [
            (lambda: torchops.bitwise_left_shift_(x, counts), x),
            (lambda: torchops.bitwise_right_shift_(x, 2), x),
            (lambda: torchops.bitwise_left_shift_(view, 1), x),  # a view shares its base's counter
            (lambda: torchops.bitshift(counts, counts, "LEFT", out=out), out),
            (lambda: torchops.bitshift(counts, 3, "LEFT", out=out), out),
            (lambda: torchops.signbit(_floats(), out=bools), bools),
        ]:
            versions = (x._version, counts._version, out._version, bools._version)
            write()
            after = (x._version, counts._version, out._version, bools._version)
            bumped = [b - a for a, b in zip(versions, after)]
            assert bumped == [int(written is t) for t in (x, counts, out, bools)]
        functional = (x._version, counts._version)
        torchops.bitshift(x, counts, "LEFT")
        torchops.signbit(_floats())
        assert (x._version, counts._version) == functional


def test_autograd_sees_an_in_place_write_of_a_saved_tensor():
    # signbit.out writes `out`; a float tensor saved for backward and then overwritten
    # through a bool view is caught by its version counter, as with PyTorch's own ops.
    base = torch.tensor([1.0, -2.0], requires_grad=True)
    saved = base * 1.0
    loss = (saved * saved).sum()  # saves `saved`
    with torch.no_grad():
        torchops.signbit(torch.tensor([-1.0, 1.0]), out=saved.view(torch.int32).view(torch.bool)[:2])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


# --------------------------------------------------------------------------
# torch.compile traces the twins: the graph holds the torchops ops, in one piece
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compile_sees_the_torchops_ops_without_a_graph_break(dynamic):
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def program(x, counts, floats):
        return [call(x, counts, floats) for _, call, _ in CALLS]

    compiled = torch.compile(program, backend=backend, fullgraph=True, dynamic=dynamic)
    # Even sizes: the search rows view x and c as two codes (x.view(2, -1)).
    for size in (6, 6, 10):  # a second call of the same size reuses the graph
        x, counts, floats = (_x().repeat(2)[:size], _counts().repeat(2)[:size], _floats().repeat(2)[:size])
        if size != 6:
            counts, floats = counts.flip(0), floats.flip(0)
        with _fastpath.torch_ops_only():
            expected = program(x, counts, floats)
        got = compiled(x, counts, floats)
        assert len(got) == len(expected)
        for a, e in zip(got, expected):
            assert _same(a, e)
    assert 1 <= len(graphs) <= 2
    targets = {node.target for node in graphs[0].graph.nodes if node.op == "call_function"}
    assert {overload for _, _, overload in CALLS} <= targets, targets


def _guarded_globals(function, *args):
    """The module globals whose values torch.compile checks before each call of `function`'s
    compiled code: the `source=G[...]` lines of its guard tree (Dynamo's guard manager, read
    through its debugging helper)."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    torch._dynamo.reset()
    torch.compile(function, backend="eager", fullgraph=True)(*args)
    (cache_entry,) = _debug_get_cache_entry_list(function)
    return set(re.findall(r"source=(G\[[^,]*?)(?:,|$)", str(cache_entry.guard_manager), re.M))


@pytest.mark.parametrize("name, call, overload", CALLS, ids=CALL_IDS)
def test_a_compiled_typed_call_is_guarded_as_the_raw_op(name, call, overload):
    # Dynamo guards what it reads: a typed call must cost no guard but the function's own,
    # as a call of torch.ops.torchops.* costs the op's; not the code, defaults or globals of
    # the twin it traces (each re-checked before every call of the compiled code).
    def program(x, counts, floats):
        return call(x, counts, floats)

    guarded = {source for source in _guarded_globals(program, _x(), _counts(), _floats()) if "torchops" in source}
    called = re.search(r"torchops\.(\w+)\(", call.source).group(1)
    # torchops as the call's module (tests/calls.py) sees it: one of its globals.
    module = f"G['__import_{call.__module__}'].torchops"
    assert guarded == {module, f"{module}.{called}"}


def test_the_twins_read_no_module_global():
    # What makes the guards above: everything a twin uses is a closure cell (torchops/_twins.py).
    import dis

    def code_objects(code):
        yield code
        for constant in code.co_consts:
            if hasattr(constant, "co_code"):
                yield from code_objects(constant)

    factory = twins._make_twins.__code__
    read = {instruction.argval for code in code_objects(factory) if code is not factory
            for instruction in dis.get_instructions(code) if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    assert read == set()


def test_import_torchops_does_not_import_dynamo_and_compile_still_works():
    # torch._dynamo costs over a second to import: the twins are registered when it loads.
    code = """if True:
        import sys, warnings
        import torch, torchops
        assert "torch._dynamo" not in sys.modules, "import torchops imported torch._dynamo"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f = torch.compile(lambda x: torchops.bitwise_right_shift(x, 1, is_arithmetic=False), fullgraph=True,
                              backend="eager")
            x = torch.tensor([1, -2, 3], dtype=torch.int8)
            assert f(x).tolist() == [0, 127, 1], f(x).tolist()
        assert not [w for w in caught if "torchops" in str(w.message)], [str(w.message) for w in caught]
        print("ok")
    """
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr


# --------------------------------------------------------------------------
# Threads, reference counts, keywords
def test_eight_threads_at_once():
    rng = np.random.default_rng(8)
    inputs = [(make_tensor(rng.integers(-2**31, 2**31, 4096).tolist(), torch.int32),
               make_tensor(rng.integers(-3, 40, 4096).tolist(), torch.int32)) for _ in range(8)]
    with _fastpath.torch_ops_only():
        expected = [(torchops.bitwise_right_shift(x, c, False), torchops.signbit(x.float()), torchops.bitshift(x, 5, "LEFT"))
                    for x, c in inputs]
    failures, start = [], threading.Barrier(8)

    def work(index):
        x, c = inputs[index]
        out = torch.empty_like(x)
        start.wait()
        for _ in range(300):
            got = (torchops.bitwise_right_shift(x, c, False), torchops.signbit(x.float()),
                   torchops.bitshift(x, 5, "LEFT", out=out))
            if not all(torch.equal(a, e) for a, e in zip(got, expected[index])):
                failures.append(index)
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


# --------------------------------------------------------------------------
# What every compiled function must do, derived from the declarations: each check runs on
# every row of TYPED_CALLS (tests/calls.py), which reaches every overload of every op of
# torchops/_contract.py's DECLARATIONS and every typed function
# (test_the_calls_reach_every_overload_and_every_function), with the very arguments the row
# passes (calls.typed_arguments); the failing calls are made from the rows too, with an x of
# a dtype the op's declaration refuses and an out that no function takes. A new op is under
# every check by its rows in TYPED_CALLS, with nothing written here;
# test_each_derived_check_fails_for_a_compiled_function_that_gets_it_wrong shows each check
# failing for a compiled function that does not do what it checks.
def _arguments(call) -> tuple:
    """(the typed function's name, its BoundArguments) of a TYPED_CALLS row, on fresh tensors."""
    name, args, kwargs = typed_arguments(call, _x(), _counts(), _floats())
    return name, inspect.signature(twins.TWINS[name]).bind(*args, **kwargs)


def _refused_dtype(overload) -> torch.dtype:
    """A dtype that the op's declaration takes for none of its tensor operands."""
    return next(d for d in (torch.complex64, torch.float64, torch.bool) if d not in declaration_of(overload).dtypes)


# The failing forms of a row: (its arguments) -> the same with one changed.
def _x_the_op_refuses(bound, overload):
    first = next(iter(bound.arguments))  # x, x1, queries: the first tensor operand
    bound.arguments[first] = bound.arguments[first].to(_refused_dtype(overload))


def _out_no_function_takes(bound, overload):
    bound.arguments["out"] = "".join(["not ", "a tensor"])  # the twin's to refuse


FAILURES = {"an x the op refuses": _x_the_op_refuses, "an out no function takes": _out_no_function_takes}


def _failing(call, overload, failure) -> tuple:
    name, bound = _arguments(call)
    FAILURES[failure](bound, overload)
    return name, bound


def _by_keyword(bound) -> dict:
    """Every argument, defaults included, by keyword, the keywords not interned (the compiled
    functions compare interned keywords by identity first)."""
    bound.apply_defaults()
    return {"".join(list(name)): value for name, value in bound.arguments.items()}


def _twin_code_run(call) -> tuple:
    """(call()'s result or raised exception, the code objects of torchops/_twins.py that ran
    meanwhile): none when the compiled function takes the call, say_as alone when it takes
    it and says the op's error."""
    ran, outcome = set(), []

    def record(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == twins.__file__:
            ran.add(frame.f_code)

    sys.setprofile(record)
    try:
        outcome.append(call())
    except Exception as error:
        outcome.append(error)
    finally:
        sys.setprofile(None)
    return outcome[0], ran


def _names(codes) -> str:
    return ", ".join(sorted(code.co_name for code in codes))


def check_takes_the_call(functions, call, overload):
    """The compiled function takes the row's call, as the row writes it, itself (no code of
    the twins runs) and gives the twin's answer."""
    name, args, kwargs = typed_arguments(call, _x(), _counts(), _floats())
    result, ran = _twin_code_run(lambda: functions[name](*args, **kwargs))
    assert not ran, f"torchops.{name}: the compiled function left {call.source} to its twin ({_names(ran)} ran)"
    assert not isinstance(result, Exception), f"{call.source} raised {result!r}"
    _, fresh = _arguments(call)
    assert _same(result, twins.TWINS[name](*fresh.args, **fresh.kwargs)), call.source


def check_takes_every_argument_by_keyword(functions, call, overload):
    """The same with every parameter of the signature, defaults included, by keyword."""
    name, bound = _arguments(call)
    keywords = _by_keyword(bound)
    result, ran = _twin_code_run(lambda: functions[name](**keywords))
    assert not ran, \
        f"torchops.{name}: the compiled function left {call.source} by keyword to its twin ({_names(ran)} ran)"
    assert not isinstance(result, Exception), f"{call.source} raised {result!r}"
    _, fresh = _arguments(call)
    assert _same(result, twins.TWINS[name](*fresh.args, **fresh.kwargs)), call.source


def check_says_errors_in_the_twins_words(functions, call, overload):
    """Each failing form of the row raises what the twin raises, the same type and message,
    which names the function called; an error of the op, from a call that the compiled
    function takes itself (it runs say_as, nothing else of the twins)."""
    for failure in FAILURES:
        name, bound = _failing(call, overload, failure)
        error, ran = _twin_code_run(lambda: functions[name](*bound.args, **bound.kwargs))
        _, fresh = _failing(call, overload, failure)
        with pytest.raises(Exception) as raised:
            twins.TWINS[name](*fresh.args, **fresh.kwargs)
        assert isinstance(error, Exception), f"{call.source} with {failure}: no error, {error!r}"
        assert (type(error), str(error)) == (type(raised.value), str(raised.value)), \
            f"{call.source} with {failure}: {error!r}, the twin {raised.value!r}"
        assert str(error).startswith(f"torchops.{name}: "), error
        if failure == "an x the op refuses":
            assert ran <= {twins.say_as.__code__}, f"{call.source} with {failure}: left to the twin ({_names(ran)} ran)"


def _refcounted(bound) -> list:
    """The arguments whose reference counts a call must keep: the tensors, the strs and the
    tuples and lists (hamming_topk's outs) and their items (ints, bools and None are shared
    by everything)."""
    objects = []
    for value in bound.arguments.values():
        if isinstance(value, (torch.Tensor, str, tuple, list)):
            objects.append(value)
        if isinstance(value, (tuple, list)):
            objects.extend(value)
    return objects


def _not_interned(bound):
    """The row's strs ("LEFT", "big") as strs of their own: the counts of interned ones are
    shared with the code that spells them."""
    for name, value in bound.arguments.items():
        if isinstance(value, str) and len(value) > 1:
            bound.arguments[name] = "".join(list(value))
    return bound


def check_leaks_no_reference(functions, call, overload, rounds=50):
    """The row's call and its failing forms, by position and by keyword, `rounds` times
    after a warm-up, leave every argument's reference count as it was; an out= call returns
    its out, an in-place call its x, and a functional call's result is freed once dropped."""
    name, bound = _arguments(call)
    bound = _not_interned(bound)
    failing = [_not_interned(_failing(call, overload, failure)[1]) for failure in FAILURES]
    compiled = functions[name]
    if torch.Tag.out in overload.tags:
        outs = bound.arguments["out"]
        written = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    elif overload._schema.is_mutable:
        written = [next(iter(bound.arguments.values()))]
    else:
        written = None

    def run(arguments, by_keyword):
        return compiled(**_by_keyword(arguments)) if by_keyword else compiled(*arguments.args, **arguments.kwargs)

    def calls():
        for by_keyword in (False, True):
            result = run(bound, by_keyword)
            if written is not None:
                assert len(_tensors(result)) == len(written) and all(
                    a is b for a, b in zip(_tensors(result), written)), f"{call.source} returns {result!r}"
            for arguments in failing:
                try:
                    run(arguments, by_keyword)
                except Exception:
                    continue
                raise AssertionError(f"{call.source}: a failing form did not fail")

    objects = _refcounted(bound) + [o for arguments in failing for o in _refcounted(arguments)]
    calls()  # warm up caches
    gc.collect()
    before = [sys.getrefcount(o) for o in objects]
    for _ in range(rounds):
        calls()
    gc.collect()
    after = [sys.getrefcount(o) for o in objects]
    assert after == before, f"{call.source}: reference counts {before} became {after}"
    if written is None:
        result = compiled(*bound.args, **bound.kwargs)
        alive = [weakref.ref(tensor) for tensor in _tensors(result)]
        del result  # freed now: nothing else refers to it, not even through a cycle
        assert all(ref() is None for ref in alive), f"{call.source}: its result outlives the last reference to it"


DERIVED_CHECKS = {
    "takes the call": check_takes_the_call,
    "takes every argument by keyword": check_takes_every_argument_by_keyword,
    "says errors in the twin's words": check_says_errors_in_the_twins_words,
    "leaks no reference": check_leaks_no_reference,
}


def _form(source: str):
    """A call of the typed API made as calls.py's TYPED_CALLS rows are, reading this module's
    globals (_packed(), _mask(), _queries(), _database(), _topk_outs())."""
    return typed_call(source, globals())


# Forms that TYPED_CALLS has not, each argument of each kind the compiled functions take
# (ints or None for dim, count and bits, keywords in any order, an out to resize, hamming_topk's
# outs as a list, which TorchScript has no form of): under the same checks. x: _x() (int8).
ARGUMENT_KINDS = [(name, _form(source), overload) for name, source, overload in [
    ("packbits", "torchops.packbits(_mask())", OPS.packbits.default),
    ("packbits dim None", 'torchops.packbits(_mask(), None, "little")', OPS.packbits.default),
    ("packbits keywords out",
     'torchops.packbits(x=_mask(), bitorder="big", dim=0, out=torch.empty(0, dtype=torch.uint8))', OPS.packbits.out),
    ("unpackbits", "torchops.unpackbits(_packed())", OPS.unpackbits.default),
    ("unpackbits positional", 'torchops.unpackbits(_packed(), 0, 5, "little")', OPS.unpackbits.default),
    ("unpackbits dim None out",
     "torchops.unpackbits(_packed(), dim=None, count=-3, out=torch.empty(45, dtype=torch.uint8))", OPS.unpackbits.out),
    ("pack", "torchops.pack(x, 4)", OPS.pack.default),
    ("pack positional out", 'torchops.pack(x, 2, None, "little", torch.empty(2, dtype=torch.uint8))', OPS.pack.out),
    ("pack dim -2", "torchops.pack(x.reshape(2, 3), bits=1, dim=-2)", OPS.pack.default),
    ("unpack", "torchops.unpack(_packed(), 4)", OPS.unpack.default),
    ("unpack positional", 'torchops.unpack(_packed(), 2, -1, 11, "little", True)', OPS.unpack.default),
    ("unpack positional out",
     'torchops.unpack(_packed(), 4, None, None, "big", False, torch.empty(12, dtype=torch.uint8))', OPS.unpack.out),
    ("unpack keywords out",
     "torchops.unpack(x=_packed(), bits=1, count=0, signed=True, out=torch.empty(0, dtype=torch.int8))",
     OPS.unpack.out),
    ("hamming_distance", "torchops.hamming_distance(_queries(), _database())", OPS.hamming_distance.default),
    ("hamming_distance int8 keywords", "torchops.hamming_distance(x2=_database(), x1=_queries().view(torch.int8))",
     OPS.hamming_distance.default),
    ("hamming_distance batched out", "torchops.hamming_distance(_queries().unsqueeze(0), _database().unsqueeze(1), "
                                     "torch.empty(0, dtype=torch.int32))", OPS.hamming_distance.out),
    ("hamming_distance out None", "torchops.hamming_distance(_queries(), _database(), out=None)",
     OPS.hamming_distance.default),
    ("hamming_topk", "torchops.hamming_topk(_queries(), _database(), 2)", OPS.hamming_topk.default),
    ("hamming_topk keywords k 0", "torchops.hamming_topk(database=_database(), k=0, queries=_queries())",
     OPS.hamming_topk.default),
    ("hamming_topk out None", "torchops.hamming_topk(_queries(), _database(), 5, None)", OPS.hamming_topk.default),
    ("hamming_topk positional out", "torchops.hamming_topk(_queries(), _database(), 2, _topk_outs())",
     OPS.hamming_topk.out),
    ("hamming_topk out list", "torchops.hamming_topk(_queries(), _database(), 3, out=list(_topk_outs(0, 0)))",
     OPS.hamming_topk.out),
]]


@pytest.mark.parametrize("check", DERIVED_CHECKS)
@pytest.mark.parametrize("name, call, overload", CALLS + ARGUMENT_KINDS,
                         ids=CALL_IDS + [f"kind: {name}" for name, _, _ in ARGUMENT_KINDS])
def test_every_compiled_function(check, name, call, overload):
    if _fastpath.call_path() != "binding":
        pytest.skip("the compiled binding is not in use")
    DERIVED_CHECKS[check](_fastpath.FUNCTIONS, call, overload)


def _falls_back(name, compiled, overload):
    return twins.TWINS[name]


def _falls_back_by_keyword(name, compiled, overload):
    return lambda *args, **kwargs: twins.TWINS[name](*args, **kwargs) if kwargs else compiled(*args)


def _keeps(name, compiled, overload):
    kept = []
    return lambda *args, **kwargs: kept.append((args, kwargs)) or compiled(*args, **kwargs)


def _keeps_its_result(name, compiled, overload):
    kept = []
    return lambda *args, **kwargs: kept.append(compiled(*args, **kwargs)) or kept[-1]


def _says_the_ops_words(name, compiled, overload):
    def unsaid(*args, **kwargs):
        try:
            return compiled(*args, **kwargs)
        except Exception as error:
            error.args = (str(error).replace(f"torchops.{name}: ", f"{op_name(overload)}: "),)
            raise

    return unsaid


@pytest.mark.parametrize("check, fault", [
    ("takes the call", _falls_back),
    ("takes every argument by keyword", _falls_back_by_keyword),
    ("says errors in the twin's words", _says_the_ops_words),
    ("leaks no reference", _keeps),
    ("leaks no reference", _keeps_its_result),
], ids=["falls back", "falls back by keyword", "says the op's words", "keeps its arguments", "keeps its result"])
def test_each_derived_check_fails_for_a_compiled_function_that_gets_it_wrong(check, fault):
    if _fastpath.call_path() != "binding":
        pytest.skip("the compiled binding is not in use")
    # bitwise_left_shift(x, c): a function named otherwise than its op, a functional overload.
    _, call, overload = next(row for row in CALLS if row[0] == "left")
    name = "bitwise_left_shift"
    functions = {**_fastpath.FUNCTIONS, name: fault(name, _fastpath.FUNCTIONS[name], overload)}
    with pytest.raises(AssertionError):
        DERIVED_CHECKS[check](functions, call, overload)
    DERIVED_CHECKS[check](_fastpath.FUNCTIONS, call, overload)


@pytest.mark.parametrize("call, message", [
    (lambda f, x: f["bitshift"](x, 1, "LEFT", True, None, None), r"takes from 3 to 5 positional arguments"),
    (lambda f, x: f["bitshift"](x, 1, "LEFT", direction="LEFT"), r"multiple values for argument 'direction'"),
    (lambda f, x: f["bitshift"](x, 1, "LEFT", outt=x), r"unexpected keyword argument 'outt'"),
    (lambda f, x: f["bitshift"](x, 1), r"missing 1 required positional argument: 'direction'"),
    (lambda f, x: f["signbit"](), r"missing 1 required positional argument: 'x'"),
    (lambda f, x: f["bitwise_left_shift_"](x, 1, True, None, None, None), r"takes from 2 to 5 positional"),
], ids=["too many", "twice", "unknown", "missing", "signbit missing", "in place too many"])
@pytest.mark.parametrize("called", ["typed API", "compiled functions"])
def test_a_call_that_does_not_fit_the_signature_gets_pythons_type_error(call, message, called):
    functions = {name: getattr(torchops, name) for name in TYPED_FUNCTIONS} if called == "typed API" \
        else _fastpath.FUNCTIONS
    x = _x()
    before = x.clone()
    with pytest.raises(TypeError, match=message):
        call(functions, x)
    assert torch.equal(x, before)


def test_the_binding_resize_warning_is_a_python_warning():
    out = torch.empty(2, dtype=torch.int8)
    with pytest.warns(UserWarning, match="resized"):
        torchops.bitshift(_x(), 1, "LEFT", out=out)
    assert out.shape == (6,)


# --------------------------------------------------------------------------
# The packing functions' arguments: ints or None (dim, count, bits), a str, a bool
def _packed():
    return make_tensor([0b10110000, 0x1E, 0xFF, 0x07, 0x80, 0x01], torch.uint8).reshape(2, 3)


def _mask():
    return torch.tensor([1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1], dtype=torch.bool).reshape(2, 6)


# Calls that the compiled functions leave to the twin: (call, the answer's call, or the error
# and its message).
_BIG = 2**64
PACKING_CALLS_FOR_THE_TWIN = [
    (lambda: torchops.packbits(_mask(), np.int64(0)), lambda: torchops.packbits(_mask(), 0)),
    (lambda: torchops.unpack(_packed(), np.uint8(4), count=np.int32(-1), signed=np.bool_(True)),
     lambda: torchops.unpack(_packed(), 4, count=-1, signed=True)),
    (lambda: torchops.packbits(None), (TypeError, "torchops.packbits: x must be a tensor, got None")),
    (lambda: torchops.unpackbits([1, 2]), (TypeError, "torchops.unpackbits: x must be a tensor, got list")),
    (lambda: torchops.packbits(_mask(), True), (TypeError, "torchops.packbits: dim must be an int or None, got bool")),
    (lambda: torchops.unpackbits(_packed(), count=1.0),
     (TypeError, "torchops.unpackbits: count must be an int or None, got float")),
    (lambda: torchops.pack(_x(), None), (TypeError, "torchops.pack: bits must be an int, got None")),
    (lambda: torchops.pack(_x(), 4, bitorder=b"big"),
     (TypeError, "torchops.pack: bitorder must be a str, 'big' or 'little', got bytes")),
    (lambda: torchops.unpack(_packed(), 4, signed=1), (TypeError, "torchops.unpack: signed must be a bool, got int")),
    (lambda: torchops.pack(_x(), 4, out=_x().tolist()),
     (TypeError, "torchops.pack: out must be a tensor or None, got list")),
    # An int beyond int64: the op's checks refuse it in the twin, in their order and words.
    (lambda: torchops.pack(_x(), _BIG), (ValueError, f"torchops.pack: bits must be 1, 2 or 4, got {_BIG}")),
    (lambda: torchops.pack(_x().float(), _BIG), (TypeError, "torchops.pack: x must be an integer or bool tensor")),
    (lambda: torchops.unpackbits(_packed(), -_BIG),
     (IndexError,
      f"torchops.unpackbits: dim {-_BIG} is out of range for a 2-d x (expected a dim in [-2, 1], or None)")),
    (lambda: torchops.unpack(_packed(), 4, count=-_BIG),
     (ValueError, f"torchops.unpack: count {-_BIG} drops more than the 6 fields along dim 1")),
]


@pytest.mark.parametrize("call, expected", PACKING_CALLS_FOR_THE_TWIN, ids=range(len(PACKING_CALLS_FOR_THE_TWIN)))
def test_a_packing_call_the_compiled_function_leaves_to_the_twin(call, expected):
    assert_twin_outcome(call, expected)


@pytest.mark.parametrize("path", ["binding", "torch.ops"])
@pytest.mark.parametrize("call, error, message", [
    (lambda: torchops.pack(_x(), 3), ValueError, "torchops.pack: bits must be 1, 2 or 4, got 3"),
    (lambda: torchops.packbits(_mask(), bitorder="b"), ValueError,
     "torchops.packbits: bitorder must be 'big' or 'little', got 'b'"),
    (lambda: torchops.unpackbits(_packed(), 2), IndexError,
     "torchops.unpackbits: dim 2 is out of range for a 2-d x (expected a dim in [-2, 1], or None)"),
    (lambda: torchops.unpackbits(_packed(), None, -49), ValueError,
     "torchops.unpackbits: count -49 drops more than the 48 bits of the flattened x"),
    (lambda: torchops.unpack(_packed(), 4, signed=True, out=torch.empty(6, dtype=torch.uint8)), RuntimeError,
     "torchops.unpack: out has dtype uint8 but the result has dtype int8"),
], ids=["bits", "bitorder", "dim", "count", "out dtype"])
def test_a_packing_call_the_op_refuses_gets_the_same_error_on_both_paths(call, error, message, path):
    with _on(path):
        with pytest.raises(error) as raised:
            call()
    assert str(raised.value).startswith(message), raised.value


# --------------------------------------------------------------------------
# The search functions' arguments: tensors, an int k, out= a tensor or a (values, indices) pair
def _queries():
    return make_tensor([0b10110000, 0x1E, 0xFF, 0x07, 0x80, 0x01], torch.uint8).reshape(3, 2)


def _database():
    return make_tensor([0x1E, 0xFF, 0x00, 0x00, 0x80, 0x01, 0x1E, 0xFF, 0xB0, 0x1E], torch.uint8).reshape(5, 2)


def _topk_outs(q=3, k=2):
    return torch.empty(q, k, dtype=torch.int32), torch.empty(q, k, dtype=torch.int64)


@pytest.mark.parametrize("path", ["binding", "torch.ops"])
@pytest.mark.parametrize("kind", ["tuple", "list"])
def test_hamming_topk_returns_a_named_tuple_of_its_outs(path, kind):
    values, indices = _topk_outs(3, 0)  # of another shape: resized
    with _on(path):
        result = torchops.hamming_topk(_queries(), _database(), 2, out=(values, indices) if kind == "tuple"
                                       else [values, indices])
        fresh = torchops.hamming_topk(_queries(), _database(), 2)
    assert type(result) is type(fresh) is torchops.HammingTopk
    assert result.values is values and result.indices is indices and result == (values, indices)
    assert _same(result, fresh)
    # nearest first, the smaller index first among equal distances (the first query is at 7 from
    # rows 1 and 2, the second at 9 from rows 0, 2 and 3: ties at the k-th place)
    distances = [[sum((a ^ b).bit_count() for a, b in zip(query, code)) for code in _database().tolist()]
                 for query in _queries().tolist()]
    nearest = [sorted(range(5), key=lambda j: (row[j], j))[:2] for row in distances]
    assert fresh.indices.tolist() == nearest == [[4, 1], [4, 0], [2, 1]]
    assert fresh.values.tolist() == [[row[j] for j in found] for row, found in zip(distances, nearest)]


def test_the_search_result_type_is_exported_and_pickles():
    import pickle

    result = torchops.hamming_topk(_queries(), _database(), 2)
    assert torchops.HammingTopk is torchops.ops.HammingTopk and torchops.HammingTopk._fields == ("values", "indices")
    assert "HammingTopk" not in torchops.__all__  # a type, as torch.return_types.topk, not a function
    assert _same(pickle.loads(pickle.dumps(result)), result)


# Calls that the compiled functions leave to the twin: (call, the answer's call, or the error
# and its message).
SEARCH_CALLS_FOR_THE_TWIN = [
    (lambda: torchops.hamming_topk(_queries(), _database(), np.int64(2)),
     lambda: torchops.hamming_topk(_queries(), _database(), 2)),
    (lambda: torchops.hamming_topk(_queries(), _database(), torch.tensor(3)),
     lambda: torchops.hamming_topk(_queries(), _database(), 3)),
    (lambda: torchops.hamming_topk(_queries(), _database(), 2, out=(_topk_outs()[0].as_subclass(Tagged),
                                                                   _topk_outs()[1])),
     lambda: torchops.hamming_topk(_queries(), _database(), 2)),
    (lambda: torchops.hamming_distance(None, _database()),
     (TypeError, "torchops.hamming_distance: x1 must be a tensor, got None")),
    (lambda: torchops.hamming_distance(_queries(), _database().tolist()),
     (TypeError, "torchops.hamming_distance: x2 must be a tensor, got list")),
    (lambda: torchops.hamming_distance(_queries(), _database(), out=(torch.empty(0, dtype=torch.int32),)),
     (TypeError, "torchops.hamming_distance: out must be a tensor or None, got tuple")),
    (lambda: torchops.hamming_topk(_queries().numpy(), _database(), 2),
     (TypeError, "torchops.hamming_topk: queries must be a tensor, got ndarray")),
    (lambda: torchops.hamming_topk(_queries(), _database(), True),
     (TypeError, "torchops.hamming_topk: k must be an int, got bool")),
    (lambda: torchops.hamming_topk(_queries(), _database(), 2.0),
     (TypeError, "torchops.hamming_topk: k must be an int, got float")),
    (lambda: torchops.hamming_topk(_queries(), _database(), None),
     (TypeError, "torchops.hamming_topk: k must be an int, got None")),
    (lambda: torchops.hamming_topk(_queries(), _database(), 2, out=_topk_outs()[0]),
     (TypeError, "torchops.hamming_topk: out must be None or a tuple of two tensors (values, indices), got Tensor")),
    (lambda: torchops.hamming_topk(_queries(), _database(), 2, out=_topk_outs()[:1]),
     (TypeError, "torchops.hamming_topk: out must be None or a tuple of two tensors (values, indices), got a tuple "
                 "of 1")),
    (lambda: torchops.hamming_topk(_queries(), _database(), 2, out=[_topk_outs()[0], None]),
     (TypeError, "torchops.hamming_topk: out must be None or a tuple of two tensors (values, indices), got "
                 "(Tensor, None)")),
    # A k beyond int64: the op's checks refuse it in the twin, in their order and words.
    (lambda: torchops.hamming_topk(_queries(), _database(), _BIG),
     (IndexError, f"torchops.hamming_topk: k {_BIG} is out of range for a database of 5 codes (expected 0 <= k <= 5")),
    (lambda: torchops.hamming_topk(_queries().float(), _database(), -_BIG),
     (TypeError, "torchops.hamming_topk: queries must be a uint8 or int8 tensor of packed codes, got float32")),
]


@pytest.mark.parametrize("call, expected", SEARCH_CALLS_FOR_THE_TWIN, ids=range(len(SEARCH_CALLS_FOR_THE_TWIN)))
def test_a_search_call_the_compiled_function_leaves_to_the_twin(call, expected):
    assert_twin_outcome(call, expected)


@pytest.mark.parametrize("path", ["binding", "torch.ops"])
@pytest.mark.parametrize("call, error, message", [
    (lambda: torchops.hamming_topk(_queries(), _database(), 6), IndexError,
     "torchops.hamming_topk: k 6 is out of range for a database of 5 codes (expected 0 <= k <= 5, as torch.topk)"),
    (lambda: torchops.hamming_topk(_queries(), _database(), -1), IndexError, "torchops.hamming_topk: k -1 is out"),
    (lambda: torchops.hamming_distance(_queries().float(), _database()), TypeError,
     "torchops.hamming_distance: x1 must be a uint8 or int8 tensor of packed codes, got float32"),
    (lambda: torchops.hamming_distance(_queries(), _database()[:, :1]), ValueError,
     "torchops.hamming_distance: x1 and x2 must hold codes of the same size, got 2 bytes (x1) and 1 bytes (x2)"),
    (lambda: torchops.hamming_topk(_queries().unsqueeze(0), _database(), 1), ValueError,
     "torchops.hamming_topk: queries must have 2 dims (Q, B)"),
    (lambda: torchops.hamming_distance(_queries(), _database(), out=torch.empty(0)), RuntimeError,
     "torchops.hamming_distance: out has dtype float32 but the result has dtype int32"),
    (lambda: torchops.hamming_topk(_queries(), _database(), 2, out=_topk_outs()[::-1]), TypeError,
     "torchops.hamming_topk: values must be an int32 tensor, got int64"),
], ids=["k too large", "k negative", "dtype", "code sizes", "dims", "out dtype", "outs swapped"])
def test_a_search_call_the_op_refuses_gets_the_same_error_on_both_paths(call, error, message, path):
    with _on(path):
        with pytest.raises(error) as raised:
            call()
    assert str(raised.value).startswith(message), raised.value


# --------------------------------------------------------------------------
# The torch.ops path: asked for, or without the binding
def _run(code, **env):
    import os

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, **env})
    return result


def test_torchops_call_path_environment_variable():
    code = """if True:
        import torch, torchops
        assert torchops.call_path() == "torch.ops", torchops.call_path()
        x = torch.tensor([-8], dtype=torch.int8)
        assert torchops.bitwise_right_shift(x, 1, is_arithmetic=False).tolist() == [124]
        print("ok")
    """
    result = _run(code, TORCHOPS_CALL_PATH="torch.ops")
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
    result = _run("import torchops", TORCHOPS_CALL_PATH="fast")
    assert result.returncode != 0 and "TORCHOPS_CALL_PATH must be one of binding, torch.ops, got 'fast'" in result.stderr


def test_without_the_binding_module_torchops_works_through_torch_ops():
    code = """if True:
        import importlib.abc, sys, warnings
        class NoBinding(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "torchops._binding":
                    raise ImportError("no torchops._binding in this test")
        sys.meta_path.insert(0, NoBinding())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import torch, torchops
        assert any("could not be loaded" in str(w.message) for w in caught), [str(w.message) for w in caught]
        assert torchops.call_path() == "torch.ops"
        assert torchops.bitshift is torchops.ops.bitshift
        x = torch.tensor([-8], dtype=torch.int8)
        assert torchops.bitwise_right_shift(x, 1, is_arithmetic=False).tolist() == [124]
        assert torchops.signbit(torch.tensor([-0.0])).tolist() == [True]
        print("ok")
    """
    result = _run(code)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
