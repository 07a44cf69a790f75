"""torchops inside the PyTorch machinery: torch.library.opcheck on every
overload, fake (meta) kernels, torch.compile and torch.export (TorchScript: test_torchscript.py)."""

import functools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import torchops
from torchops._contract import OVERLOADS, Packing, Search, declaration_of

import model
from calls import BAD_CALLS, OPCHECK_SAMPLES, TYPED_CALLS, counts_of, floats_of, ints_of
from conftest import OVERLOAD_NAMES, assert_same_tensors, make_tensor, random_values

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.python_layers

ops = torch.ops.torchops




@functools.cache
def _aot_dispatch_takes_a_resized_out():
    """Whether this torch's AOT dispatch functionalizes an out= that the op resizes. torch 2.14
    and 2.15 do not, for ATen's own out= ops either: opcheck's test_aot_dispatch_dynamic of
    `aten.add.out` into an empty out fails with "expand: the requested shape has too few
    dimensions" when it copies the result back. torch.compile of such calls works
    (test_compiled_out_resizes_an_empty_out)."""
    try:
        torch.library.opcheck(torch.ops.aten.add.out, (torch.ones(3, 1), torch.ones(1, 4)), {"out": torch.empty(0)},
                              test_utils="test_aot_dispatch_dynamic")
    except Exception as error:  # opcheck's OpCheckError lives in torch.testing._internal
        assert "too few dimensions" in str(error), error
        return False
    return True


@pytest.mark.parametrize("sample", OPCHECK_SAMPLES, ids=[s[0] for s in OPCHECK_SAMPLES])
def test_opcheck(sample):
    name, overload, make_args, *make_kwargs = sample
    kwargs = make_kwargs[0]() if make_kwargs else {}
    checks = {}
    if "resize" in name and not _aot_dispatch_takes_a_resized_out():
        checks = {"test_utils": ("test_schema", "test_autograd_registration", "test_faketensor")}
    torch.library.opcheck(overload, make_args(), kwargs, **checks)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_out_resizes_an_empty_out(backend):
    x, y = ints_of((3, 1), torch.int32), counts_of((1, 4), torch.int32)
    f = floats_of((2, 5), torch.float16).t()

    def fn(x, y, f, out, negative):
        ops.bitshift.out(x, y, "RIGHT", False, out=out)
        ops.signbit.out(f, out=negative)
        return out + 1, negative

    out, negative = torch.empty(0, dtype=torch.int32), torch.empty(0, dtype=torch.bool)
    # Not fullgraph: Dynamo breaks the graph at an out= it must resize, as for ATen's out= ops.
    plus_one, _ = torch.compile(fn, backend=backend)(x, y, f, out, negative)
    assert torch.equal(out, ops.bitshift(x, y, "RIGHT", False)) and torch.equal(plus_one, out + 1)
    assert torch.equal(negative, ops.signbit(f))


def test_opcheck_samples_cover_every_overload():
    missing = sorted(OVERLOAD_NAMES - {str(s[1]) for s in OPCHECK_SAMPLES})
    assert not missing, f"tests/calls.py: no opcheck sample of {', '.join(missing)}: add one to OPCHECK_SAMPLES"


def test_schemas_are_the_contract():
    # docs/semantics.md section 1 lists the schemas; the library registers exactly those.
    text = (ROOT / "docs" / "semantics.md").read_text()
    listed = re.search(r"Schemas, under `torch.ops.torchops`:\n\n```\n(.*?)```", text, re.S).group(1)
    listed = set(listed.splitlines())
    registered = {str(overload._schema).removeprefix("torchops::") for overload in OVERLOADS}
    missing = sorted(registered - listed)
    assert not missing, ("registered, not in docs/semantics.md section 1's list of schemas (add each there):\n"
                         + "\n".join(missing))
    unknown = sorted(listed - registered)
    assert not unknown, ("in docs/semantics.md section 1's list of schemas, not registered (csrc/overloads.h's "
                         "list registers them):\n" + "\n".join(unknown))


def test_writing_overloads_carry_atens_tags():
    # As ATen's: an out= overload returns its out (Tag.out), an in-place one its x (Tag.inplace).
    # Every overload is pt2-compliant; pointwise, all but the packing ops' (their result's
    # shape is not x's: Inductor must not fuse them as pointwise) and the search ops' (they
    # reduce over codes). A search op's out= overload writes each of its results' outs
    # (hamming_topk's values and indices) and returns them in order.
    for overload in OVERLOADS:
        schema = overload._schema
        written = [arg for arg in schema.arguments if arg.alias_info is not None and arg.alias_info.is_write]
        kinds = {torch.Tag.out, torch.Tag.inplace} & set(overload.tags)
        assert torch.Tag.pt2_compliant_tag in overload.tags, overload
        pointwise = not isinstance(declaration_of(overload), (Packing, Search))
        assert (torch.Tag.pointwise in overload.tags) == pointwise, overload
        if not written:
            assert not kinds and all(str(r.type) == "Tensor" and r.alias_info is None for r in schema.returns)
            continue
        if len(written) > 1:
            assert isinstance(declaration_of(overload), Search), overload
            assert [a.name for a in written] == list(declaration_of(overload).outs), overload
        for arg, returned in zip(written, schema.returns, strict=True):
            if arg.kwarg_only:
                assert arg.name in ("out", *declaration_of(overload).outs) if isinstance(
                    declaration_of(overload), Search) else arg.name == "out", overload
                assert kinds == {torch.Tag.out}, overload
            else:
                assert arg.name == schema.arguments[0].name and kinds == {torch.Tag.inplace}, overload
            assert returned.alias_info.is_write and returned.alias_info.before_set == arg.alias_info.before_set, \
                overload


# --------------------------------------------------------------------------
# Fake kernels: same metadata as the real ones, same errors.
FUNCTIONAL_SAMPLES = [s for s in OPCHECK_SAMPLES if not s[1]._schema.is_mutable]


@pytest.mark.parametrize("sample", FUNCTIONAL_SAMPLES, ids=[s[0] for s in FUNCTIONAL_SAMPLES])
def test_fake_kernel_output_metadata_matches_real(sample):
    _, overload, make_args = sample
    args = make_args()
    real = overload(*args)
    with FakeTensorMode() as mode:
        fake_args = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args]
        fake = overload(*fake_args)
    fakes, reals = (fake, real) if isinstance(real, tuple) else ((fake,), (real,))  # hamming_topk's two
    assert len(fakes) == len(reals)
    for fake, real in zip(fakes, reals):
        assert fake.shape == real.shape
        assert fake.dtype == real.dtype
        assert fake.stride() == real.stride()
        assert not fake.requires_grad


@pytest.mark.parametrize("case", BAD_CALLS, ids=[c.id for c in BAD_CALLS])
def test_fake_kernel_raises_the_eager_error(case):
    with pytest.raises(case.exception, match=case.pattern) as eager:
        case.call(*[t.clone() for t in case.tensors])
    with FakeTensorMode() as mode:
        fakes = [mode.from_tensor(t) for t in case.tensors]
        with pytest.raises(case.exception, match=case.pattern) as fake:
            case.call(*fakes)
    assert type(fake.value) is type(eager.value)
    # STYLE.md: the fake kernels say the same thing (eager may append torch's own detail).
    assert str(eager.value).startswith(str(fake.value)), (str(eager.value), str(fake.value))


def test_bad_calls_cover_every_overload():
    covered = {str(case.overload) for case in BAD_CALLS}
    missing = sorted(OVERLOAD_NAMES - covered)
    assert not missing, f"tests/calls.py: no bad call of {', '.join(missing)}: add a row for each"


def _raised_under_compile(error, exception):
    """Dynamo wraps errors from fake-tensor propagation in TorchRuntimeError
    whose message says "got <Type>(...)"; either form counts as `exception`."""
    return type(error) is exception or re.search(rf"got {exception.__name__}\(", str(error))


COMPILE_ERROR_CASES = [c for c in BAD_CALLS
                       if c.id in ("x-float", "direction", "not-broadcastable", "in-place-dtype", "out-dtype",
                                   "signbit-complex", "packbits-float", "pack-bits", "unpackbits-dim", "unpack-count",
                                   "unpack-out-dtype-signed")]


@pytest.mark.parametrize("case", COMPILE_ERROR_CASES, ids=[c.id for c in COMPILE_ERROR_CASES])
def test_compile_raises_the_eager_error(case):
    torch._dynamo.reset()
    compiled = torch.compile(case.call, fullgraph=True, backend="eager")
    with pytest.raises(Exception) as info:
        compiled(*[t.clone() for t in case.tensors])
    assert _raised_under_compile(info.value, case.exception), repr(info.value)


# --------------------------------------------------------------------------
# torch.compile gives eager's answers.
# Every functional form of every typed function (tests/calls.py's TYPED_CALLS: a new op's
# join with no edit here), and some other spellings of the shifts.
_FUNCTIONAL_CALLS = [call for _, call, overload in TYPED_CALLS
                     if torch.Tag.out not in overload.tags and torch.Tag.inplace not in overload.tags]


def _functional(x, y, f):
    # Each call's result as it comes (hamming_topk's is a named tuple): compiled, it must
    # come back of the same type.
    return (
        torchops.bitshift(x, y, "right", True),
        torchops.bitwise_right_shift(x, y, is_arithmetic=False),
        torchops.bitwise_left_shift(x, 257),
        *[call(x, y, f) for call in _FUNCTIONAL_CALLS],
    )


def assert_same_results(actual, expected):
    """Results of the same types (tensors, HammingTopk) and, leaf by leaf, the same tensors."""
    assert [type(a) for a in actual] == [type(e) for e in expected]
    assert_same_tensors(torch.utils._pytree.tree_leaves(actual), torch.utils._pytree.tree_leaves(expected))


def _in_place(x, y):
    torchops.bitwise_left_shift_(x, y)
    torchops.bitwise_right_shift_(x, 2, is_arithmetic=False)
    return x


# out= tensors that are the graph's inputs, written in place (the mechanism is the same for
# every out= overload; each one compiles in test_inductor's every_overload graph).
def _out(x, y, f, out, out_scalar, out_signbit, out_count):
    torchops.bitshift(x, y, "RIGHT", True, out=out)
    torchops.bitwise_left_shift(x, 70, out=out_scalar)
    torchops.signbit(f, out=out_signbit)
    torchops.bitwise_count(y, out=out_count)
    return out, out_scalar, out_signbit, out_count


def _inputs(rows, cols, seed):
    return ints_of((rows, cols), torch.int16, seed), counts_of((rows, cols), torch.int16, seed + 1), floats_of((rows, cols), seed=seed)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compile_functional(dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_functional, fullgraph=True, dynamic=dynamic)
    for rows, cols in ((4, 5), (7, 3)):
        x, y, f = _inputs(rows, cols, seed=rows)
        assert_same_results(compiled(x, y, f), _functional(x, y, f))
    x, y, f = _inputs(6, 4, seed=9)
    assert_same_results(compiled(x.t(), y.t(), f.t()), _functional(x.t(), y.t(), f.t()))


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compile_in_place(dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_in_place, fullgraph=True, dynamic=dynamic)
    for rows, cols in ((4, 5), (7, 3)):
        x, y, _ = _inputs(rows, cols, seed=rows)
        expected = _in_place(x.clone(), y)
        result = compiled(x, y)
        assert torch.equal(x, expected)
        assert torch.equal(result, expected)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compile_out(dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(_out, fullgraph=True, dynamic=dynamic)
    for rows, cols in ((4, 5), (7, 3)):
        x, y, f = _inputs(rows, cols, seed=rows)
        outs = [torch.empty(rows, cols, dtype=torch.int16), torch.empty(rows, cols, dtype=torch.int16),
                torch.empty(rows, cols, dtype=torch.bool), torch.empty(rows, cols, dtype=torch.uint8)]
        expected = _out(x, y, f, *[o.clone() for o in outs])
        result = compiled(x, y, f, *outs)
        assert_same_tensors(outs, expected)
        assert_same_tensors(result, expected)


# --------------------------------------------------------------------------
# torch.export of the typed Python API with every form and dynamic rows (tests/test_deploy.py
# runs docs/deploy.md's model, with AOTInductor and a fresh process).
class TypedApiModule(torch.nn.Module):
    """Every form of every typed function: tests/calls.py's TYPED_CALLS, which reach every
    overload (tests/test_binding.py checks that), so a new op needs no line here."""

    def forward(self, x, y, f):
        return tuple(call(x, y, f) for _, call, _ in TYPED_CALLS)


@pytest.mark.filterwarnings("ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated:FutureWarning")
def test_export_of_the_typed_api_with_dynamic_rows_saves_and_loads(tmp_path):
    rows = torch.export.Dim("rows")
    program = torch.export.export(TypedApiModule(), _inputs(4, 5, seed=11), dynamic_shapes=({0: rows},) * 3)
    torch.export.save(program, tmp_path / "typed_api.pt2")
    program = torch.export.load(tmp_path / "typed_api.pt2")
    # Every overload is in the program as saved and loaded: each deploys this way.
    targets = {str(node.target) for node in program.graph.nodes if node.op == "call_function"}
    missing = sorted(OVERLOAD_NAMES - targets)
    assert not missing, f"tests/calls.py's TYPED_CALLS call no {', '.join(missing)}: add a row there"
    assert {t for t in targets if t.startswith("torchops.")} == OVERLOAD_NAMES
    loaded = program.module()
    for rows_now in (4, 7):
        inputs = _inputs(rows_now, 5, seed=rows_now)
        assert_same_results(loaded(*inputs), TypedApiModule()(*inputs))


def test_without_import_torchops_meta_tensors_take_the_device_generic_kernels():
    # The library loaded alone (as a C++ program loads it): the meta device, like every
    # backend without a kernel of its own, gets the device-generic kernels, with the layout
    # and the errors of the CPU kernels, before torchops._fake replaces them.
    code = (
        "import torch\n"
        f"torch.ops.load_library({torchops.library_path()!r})\n"
        "x = torch.ones(4, 3, dtype=torch.int8, device='meta').t()\n"
        "out = torch.ops.torchops.bitshift(x, torch.ones(3, 1, dtype=torch.int16, device='meta'), 'LEFT')\n"
        "print(out.device, out.dtype, tuple(out.shape), out.stride())\n"
        "try:\n"
        "    torch.ops.torchops.signbit(torch.ones(2, dtype=torch.complex64, device='meta'))\n"
        "except TypeError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "meta torch.int16 (3, 4) (1, 3)",
        "torchops.signbit: x must be a float16, bfloat16, float32, float64, integer or bool tensor, got complex64",
    ]


def _random_layout(rng, shape, dtype):
    """A tensor of `shape` in a random layout: permuted dims, every other element of some."""
    order = list(range(len(shape)))
    rng.shuffle(order)
    stepped = [rng.random() < 0.3 for _ in shape]
    base = torch.randint(-5, 5, [shape[d] * (2 if stepped[d] else 1) for d in order]).to(dtype)
    tensor = base.permute(*[order.index(d) for d in range(len(shape))]) if shape else base
    return tensor[tuple(slice(None, None, 2) if s else slice(None) for s in stepped)]


def test_fake_kernel_output_strides_match_real_over_random_layouts():
    # The fake kernels lay outputs out as TensorIterator does (a packing op's: contiguous), on
    # every dim that has more than one element (the stride of a size-1 dim is arbitrary, and
    # TensorIterator's is not reproduced: it does not change how the tensor is read).
    import random

    rng = random.Random(0)
    bytes_rng = random.Random(1)  # the packed bytes' layouts, drawn apart

    def meaningful(tensor):
        return tuple(stride for stride, size in zip(tensor.stride(), tensor.shape) if size > 1)

    for _ in range(300):
        shape = [rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(0, 4))]
        count_shape = [size if rng.random() < 0.6 else 1 for size in shape][rng.randint(0, len(shape)):]
        x, y = _random_layout(rng, shape, torch.int16), _random_layout(rng, count_shape, torch.int16)
        packed = _random_layout(bytes_rng, shape, torch.uint8)
        for op, args in [(ops.bitshift.default, (x, y, "LEFT")), (ops.bitshift.Scalar, (x, 3, "RIGHT")),
                         (ops.signbit.default, (x,)), (ops.packbits.default, (x, 0, "little")),
                         (ops.pack.default, (x, 2, -1)), (ops.unpackbits.default, (packed, -1, 5)),
                         (ops.unpack.default, (packed, 4, 0, None, "big", True))]:
            real = op(*args)
            with FakeTensorMode() as mode:
                fake = op(*[mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args])
            assert (fake.shape, meaningful(fake)) == (real.shape, meaningful(real)), (op, shape, x.stride(), y.stride())


# --------------------------------------------------------------------------
# A count taken from a size (unpacking exactly the packed length) stays symbolic: count is
# a SymInt, so one graph serves every size and export keeps the size's Dim.
def _round_trip_of_the_rows(x, w):
    n = x.shape[1]
    return (torchops.unpackbits(torchops.packbits(x), count=n), torchops.unpack(torchops.pack(w, 4), 4, count=n, signed=True),
            torchops.unpackbits(torchops.packbits(x, dim=1), dim=1, count=-x.shape[0]), torch.ops.torchops.unpack(torchops.pack(w, 2), 2, -1, n - 1))


def _round_trip_inputs(n, seed):
    x = (ints_of((3, n), torch.int8, seed) > 0).to(torch.uint8)
    return x, ints_of((3, n), torch.int8, seed + 1)


def test_a_count_taken_from_a_size_compiles_once_for_every_size():
    from torch._dynamo.testing import CompileCounterWithBackend

    torch._dynamo.reset()
    counter = CompileCounterWithBackend("inductor")  # Inductor's lowerings take the symbolic count too
    compiled = torch.compile(_round_trip_of_the_rows, backend=counter, fullgraph=True, dynamic=True)
    for n in (17, 20, 29, 41, 64):  # packed lengths of 2 bytes and more: a length of 1 specializes (contiguity)
        inputs = _round_trip_inputs(n, seed=n)
        assert_same_tensors(compiled(*inputs), _round_trip_of_the_rows(*inputs))
    assert counter.frame_count == 1


def test_a_count_taken_from_a_size_exports_with_its_dim():
    class RoundTrip(torch.nn.Module):
        def forward(self, x, w):
            return _round_trip_of_the_rows(x, w)

    n = torch.export.Dim("n", min=17)
    program = torch.export.export(RoundTrip(), _round_trip_inputs(22, seed=3), dynamic_shapes=({1: n}, {1: n}))
    for size in (19, 28, 43):
        inputs = _round_trip_inputs(size, seed=size)
        assert_same_tensors(program.module()(*inputs), _round_trip_of_the_rows(*inputs))
