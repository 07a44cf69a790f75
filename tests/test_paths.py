"""Every path below an overload gives the same answer: calls of every overload, each run on
every path this process can reach, compared with the first.

The paths below ``torch.ops.torchops.<op>.<overload>`` (docs/internals.md, "The layers"):

* ``cpu=<level>``: the CPU kernels at each kernel level the CPU supports (switched
  in-process), the best level first: the reference.
* ``composite``: the device-generic entries (csrc/ops/composite.cpp, csrc/ops/unary.cpp),
  which every backend without a kernel of its own runs (CUDA, XPU, MPS, ...), and their
  compute ops' composite kernels. The call is redispatched to PrivateUse1, a key with no
  kernel of its own: the entry runs on the CPU tensors and calls its compute op through the
  dispatcher, which gives CPU tensors the composite kernel.
* ``triton``: the same entries with the compute ops' Triton kernels
  (torchops/_triton_kernels.py), run by Triton's interpreter: torchops._triton registers them
  for the CPU around the call. Only where Triton is installed (torch 2.14 and 2.15); skipped,
  saying so, elsewhere.

Under TORCHOPS_CPU_KERNELS=composite or =triton, CPU tensors take that path by plain dispatch,
which is then the reference, and the kernel levels cannot be reached; a test left with no
other path to compare is skipped with the reason. TORCHOPS_TEST_SAMPLED=1 runs the best level
only; unless TORCHOPS_TEST_FULL=1, a quarter of the examples are drawn (tests/conftest.py).

The calls are made from what the library registers, with no code of any op's own
(test_random_calls): each overload of torchops._contract.OVERLOADS; its tensors' dtypes from
its op's declaration, each operand its own (promotion, refused pairs) and now and then one the
op does not take; its other arguments from its schema's types, the values of its samples in
tests/calls.py and hostile ones of the type (a bad direction, Scalars far out of range, bools,
floats); shapes that broadcast (or not), 0-d and empty; every layout (transposed, permuted,
channels_last-like, sliced with steps and offsets, expanded, mixed); out= of every kind (of
the result's shape in any layout, empty, of another shape, of another dtype, x itself,
overlapping x); operands that are x itself; values over each dtype's whole range and its
edges, counts near 0 and every width, floats as bit patterns (NaNs, -0.0, infs). A packing op
(a ``Packing`` declaration: packbits, unpackbits, pack, unpack) is drawn the same way: its
bits, dim, count and bitorder from its samples and hostile values of their types (dims out
of range, counts past the end or dropping more than there are, None), now and then a dim of
up to 70 elements, its out= kinds from its result's shape, which is not x's. A search op
(a ``Search`` declaration: hamming_distance, hamming_topk) takes two tensors of codes of 0
to 128 bytes (code_shapes: batch dims that broadcast or not, empty ones, now and then code
sizes that differ), its k from its samples and hostile values, and out= of each of its
results. Beside them,
every pair of a few layouts and dtypes (test_every_pair_of_layouts), layouts once found to
differ (test_known_layouts), and the samples and bad calls of tests/calls.py (test_fixed_calls).

Each call runs on each path on fresh copies of the same tensors (a shared storage stays
shared), and what the path did is compared with the reference: the result's bits, dtype,
shape, strides and offset, and whether it is the out or x tensor; every tensor's bits and
metadata afterwards; the warnings; an error's type and message. A mismatch names the
overload, the call (each tensor's dtype, shape, strides, offset), the path and what differs.

Hypothesis is derandomized (the same examples every run) and shrinks a failure to a small
call, printed as the falsifying example; the same run reproduces it. One overload's test:
``pytest "tests/test_paths.py::test_random_calls[torchops.bitshift.out]"``
(``test_random_calls_on_triton[...]`` for the Triton path). ``--hypothesis-show-statistics``
shows what was drawn (layouts, kinds of out=, errors).
"""
import contextlib
import dataclasses
import functools
import importlib.util
import itertools
import math
import os
import re
import sys
import tempfile
import warnings
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import model
from calls import BAD_CALLS, OPCHECK_SAMPLES
from conftest import (
    CPU_CAPABILITIES, FLOAT_FORMATS, NUMPY_DTYPES, OTHER_DEVICES_PATH, SAMPLED, SWEEPS_SAMPLED, argument_templates, as_bits,
    dtype_id, interesting_counts, interesting_values, special_float_patterns,
)
from torchops import _triton
from torchops._contract import OVERLOADS, Packing, Search, declaration_of, op_name

# Examples per overload; Triton's interpreter costs milliseconds a call, hence fewer on its path.
EXAMPLES = 200 if SWEEPS_SAMPLED else 800
TRITON_EXAMPLES = 50 if SWEEPS_SAMPLED else 200


def profile(examples):
    # No example database: a CI run and a rerun draw the same examples.
    return settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Dtypes no op declares now and then take a tensor's place, for the dtype errors.
UNDECLARED_DTYPES = (torch.float32, torch.bool, torch.complex64)


# --------------------------------------------------------------------------
# The paths


@dataclasses.dataclass(frozen=True)
class Path:
    name: str
    run: object  # run(overload, args, kwargs): the call on this path


@functools.cache
def interpreted_kernels():
    """torchops/_triton_kernels.py imported apart, under Triton's interpreter (which triton.jit
    reads as the kernels are defined): a GPU test in the same process may have imported the
    module compiled, and must keep it so."""
    spec = importlib.util.find_spec("torchops._triton_kernels")
    module = importlib.util.module_from_spec(spec)
    with mock.patch.dict(os.environ, TRITON_INTERPRET="1"):
        spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def cpu_compute_kernels(triton):
    """The compute ops' CPU kernels: Triton's, interpreted, when `triton`, else the composite ones;
    torchops._triton's registrations and imported kernels as they were afterwards."""
    keys, kernels = _triton.registered(), _triton._state.get("kernels")
    if ("CPU" in keys) == triton:
        yield
        return
    with mock.patch.dict(os.environ):  # register(cpu=True) sets TRITON_INTERPRET
        _triton.unregister()
        try:
            if triton:
                _triton.register(cpu=True)
                _triton._state["kernels"] = interpreted_kernels()
            yield
        finally:
            _triton.unregister()
            if keys:
                _triton.register(cpu="CPU" in keys)
            _triton._state["kernels"] = kernels


def at_level(level):
    def run(overload, args, kwargs):
        before = torch.ops.torchops._cpu_capability()
        torch.ops.torchops._set_cpu_capability(level)
        try:
            return overload(*args, **kwargs)
        finally:
            torch.ops.torchops._set_cpu_capability(before)
    return run


def device_generic(triton):
    # PrivateUse1 has no kernel of its own: the device-generic entry runs on the CPU tensors.
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.PrivateUse1)

    def run(overload, args, kwargs):
        with cpu_compute_kernels(triton):
            return overload.redispatch(keys, *args, **kwargs)
    return run


def reachable_paths():
    """The reference first: the CPU kernels at the best level, or what plain dispatch gives
    under TORCHOPS_CPU_KERNELS; then every other path this process reaches."""
    if OTHER_DEVICES_PATH is None:
        levels = CPU_CAPABILITIES[::-1][:1 if SAMPLED else None]
        paths = [Path(f"cpu={level}", at_level(level)) for level in levels]
    else:
        paths = [Path(OTHER_DEVICES_PATH, lambda overload, args, kwargs: overload(*args, **kwargs))]
    paths += [Path("composite", device_generic(triton=False))]
    if _triton.available():
        paths += [Path("triton", device_generic(triton=True))]
    return [paths[0]] + [path for path in paths[1:] if path.name != paths[0].name]


PATHS = reachable_paths()
REFERENCE = PATHS[0]
TRITON_PATHS = [path for path in PATHS[1:] if path.name == "triton"]
OTHER_PATHS = [path for path in PATHS[1:] if path.name != "triton"]


def paths_or_skip(paths):
    if not paths:
        pytest.skip(f"no path to compare with the reference here ({', '.join(path.name for path in PATHS)} "
                    f"reachable, TORCHOPS_CPU_KERNELS={os.environ.get('TORCHOPS_CPU_KERNELS')}, Triton "
                    f"{'installed' if _triton.available() else 'not installed'})")
    return paths


# --------------------------------------------------------------------------
# Running a call on a path, and what it did


class Call:
    """A call of an overload; printed (in a falsifying example too) with each tensor's layout."""

    def __init__(self, overload, args, kwargs):
        self.overload, self.args, self.kwargs = overload, args, kwargs

    def __repr__(self):
        arguments = [describe(a) for a in self.args] + [f"{k}={describe(v)}" for k, v in self.kwargs.items()]
        return f"{self.overload}({', '.join(arguments)})"

    def named_tensors(self):
        """(schema name, tensor) for each tensor of the call."""
        names = [a.name for a in self.overload._schema.arguments if not a.kwarg_only]
        pairs = list(zip(names, self.args)) + list(self.kwargs.items())
        return [(name, value) for name, value in pairs if isinstance(value, torch.Tensor)]


def describe(value):
    if not isinstance(value, torch.Tensor):
        return repr(value)
    return (f"tensor({dtype_id(value.dtype)}, shape={tuple(value.shape)}, stride={value.stride()}, "
            f"offset={value.storage_offset()})")


def fresh(call):
    """The call on copies of its tensors: new storages (one shared by two tensors stays
    shared), each tensor with its shape, strides and offset."""
    storages = {}

    def copy(value):
        if not isinstance(value, torch.Tensor):
            return value
        storage = value.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes())
        if storage.nbytes() == 0 or key not in storages:
            storages[key] = storage.clone()
        return torch.empty(0, dtype=value.dtype).set_(storages[key], value.storage_offset(), value.shape,
                                                       value.stride())

    return Call(call.overload, tuple(copy(a) for a in call.args), {k: copy(v) for k, v in call.kwargs.items()})


def state(prefix, tensor):
    """What a tensor is and holds, as plain values (its elements' bits in order: a float's
    bits tell NaNs and -0.0 apart)."""
    bits = as_bits(torch.view_as_real(tensor) if tensor.is_complex() else tensor).reshape(-1)
    return {f"{prefix}.dtype": tensor.dtype, f"{prefix}.shape": tuple(tensor.shape),
            f"{prefix}.stride": tensor.stride(), f"{prefix}.offset": tensor.storage_offset(),
            f"{prefix}.bits": bits.tolist()}


@contextlib.contextmanager
def warnings_seen():
    """The warnings raised inside, as (category, message): Python's, and C++'s (TORCH_WARN),
    which a torch.ops call prints to the process's stderr (its time stamp taken off)."""
    seen = []
    sys.stderr.flush()
    with tempfile.TemporaryFile() as stderr, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        saved = os.dup(2)
        os.dup2(stderr.fileno(), 2)
        try:
            yield seen
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            stderr.seek(0)
            seen += [(w.category.__name__, str(w.message)) for w in caught]
            seen += [("stderr", re.sub(r"^\[W[^]]*\] ", "", line)) for line in stderr.read().decode().splitlines()]


def outcome(path, call):
    """What `call` did on `path`: its result or error, its warnings, every tensor afterwards."""
    call = fresh(call)
    with warnings_seen() as warned:
        try:
            result = path.run(call.overload, call.args, call.kwargs)
        except Exception as error:  # noqa: BLE001 (the error is the answer compared)
            seen = {"error": (type(error).__name__, str(error))}
        else:
            results = result if isinstance(result, tuple) else (result,)  # hamming_topk's two
            seen = {}
            for index, one in enumerate(results):
                key = "result" if len(results) == 1 else f"result[{index}]"
                returned = [name for name, tensor in call.named_tensors() if tensor is one]
                seen.update({f"{key} is": returned or "a new tensor", **state(key, one)})
    seen["warnings"] = warned
    for name, tensor in call.named_tensors():
        seen.update(state(f"{name} afterwards", tensor))
    return seen


def shown(key, value, other):
    """A value for a message: a list of bits by its first difference from `other`."""
    if key.endswith(".bits") and isinstance(value, list) and isinstance(other, list) and len(value) == len(other):
        index = next(i for i, (a, b) in enumerate(zip(value, other)) if a != b)
        return f"[{index}] = {value[index]!r} (of {len(value)})"
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "..."


def assert_paths_agree(call, paths):
    """Runs `call` on the reference and on each of `paths`; returns the reference's outcome."""
    expected = outcome(REFERENCE, call)
    differences = []
    for path in paths:
        got = outcome(path, call)
        differences += [f"  {key}: {shown(key, got.get(key), expected.get(key))} on {path.name}, "
                        f"{shown(key, expected.get(key), got.get(key))} on {REFERENCE.name}"
                        for key in dict.fromkeys([*expected, *got]) if got.get(key) != expected.get(key)]
    if differences:
        raise AssertionError(f"{call} differs from {REFERENCE.name}:\n" + "\n".join(differences))
    return expected


# --------------------------------------------------------------------------
# Random calls of every overload, from its schema, its declaration and its samples


def mostly(common, rare):
    """`common` five times in six, `rare` otherwise (shrinking towards `common`)."""
    return st.integers(0, 5).flatmap(lambda k: rare if k == 5 else common)


@functools.cache
def edges(dtype):
    """The values of `dtype` worth more than their share of a random draw, as a NumPy array:
    its boundaries and bit patterns, and counts near 0 and every width; a float's special
    bit patterns (NaNs, -0.0, infs, subnormals), as the same-width integers."""
    if dtype.is_floating_point:
        bits_dtype = FLOAT_FORMATS[dtype][2]
        values = [model.wrap(pattern, bits_dtype) for _, pattern, _ in special_float_patterns(dtype)]
        return np.array(values, dtype=object).astype(NUMPY_DTYPES[bits_dtype])
    counts = {model.wrap(c, dtype) for n in (8, 16, 32, 64) for c in (-n - 1, -n, n - 1, n, n + 1)}
    values = interesting_values(dtype) + interesting_counts(dtype) + sorted(counts)
    return np.array(values, dtype=object).astype(NUMPY_DTYPES[dtype])


def filled(dtype, size, seed):
    """A 1-D tensor of `size` values of `dtype`: random bit patterns over the whole range,
    about half of them replaced by the dtype's edges."""
    rng = np.random.default_rng(seed)
    if dtype.is_complex:
        return torch.view_as_complex(filled(dtype.to_real(), 2 * size, seed).reshape(size, 2))
    if dtype == torch.bool:
        return torch.from_numpy(rng.integers(0, 2, size=size).astype(np.bool_))
    bits_dtype = FLOAT_FORMATS[dtype][2] if dtype.is_floating_point else dtype
    low, high = model.value_range(bits_dtype)
    values = rng.integers(low, high, size=size, endpoint=True, dtype=NUMPY_DTYPES[bits_dtype])
    picked = rng.integers(0, 2, size=size).astype(np.bool_)
    values[picked] = rng.choice(edges(dtype), size=int(picked.sum()))
    return torch.from_numpy(values).view(dtype)


@st.composite
def shapes(draw, longest=5):
    """0-d to 4-d, dims up to 5, now and then one of them 0, or up to `longest` (a packing op
    packs up to 8 elements a byte: a dim of up to 70 leaves a vector loop tails)."""
    shape = [draw(st.integers(1, 5)) for _ in range(draw(st.sampled_from((0, 1, 2, 2, 3, 3, 4))))]
    if shape and draw(st.integers(0, 7)) == 7:
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    elif shape and longest > 5 and draw(st.integers(0, 2)) == 2:
        shape[draw(st.integers(0, len(shape) - 1))] = draw(st.integers(6, longest))
    return tuple(shape)


@st.composite
def operand_shapes(draw, shape):
    """Mostly `shape`; otherwise one that broadcasts to it (leading dims dropped, dims of 1),
    now and then one that does not (a dim one longer)."""
    if draw(st.integers(0, 2)) < 2:
        return shape
    kept = len(shape) - draw(st.integers(0, len(shape)))
    dims = [draw(st.sampled_from((d, 1))) for d in shape[len(shape) - kept:]]
    if dims and draw(st.integers(0, 7)) == 7:
        dims[-1] += 1
    return tuple(dims)


LAYOUTS = ("contiguous", "transposed", "permuted", "channels_last-like", "sliced", "expanded", "mixed")


def strided(shape, dtype, seed, order, steps, offset, expanded):
    """A tensor of `shape` and `dtype` (values: filled(seed)) whose dims lie in memory in
    `order` (outermost first), each sliced with its step, at an offset, the `expanded` ones of
    stride 0. Its storage has an element to spare at its end (room for a view overlapping it)."""
    stored = [1 if expanded[d] else shape[d] * steps[d] for d in order]
    values = filled(dtype, math.prod(stored) + offset + 1, seed)
    tensor = values[offset:offset + math.prod(stored)].view(stored).permute(np.argsort(order).tolist())
    return tensor[tuple(slice(None, None, step) for step in steps)].expand(shape)


@st.composite
def tensors(draw, shape, dtype):
    """A tensor of `shape` and `dtype` in one of LAYOUTS; "mixed" draws each of its traits."""
    rank = len(shape)
    layout = draw(st.sampled_from(LAYOUTS))
    event(f"layout {layout}")
    mixed = layout == "mixed"
    order = list(range(rank))
    if layout == "transposed" and rank >= 2:
        order[-2:] = order[:-3:-1]
    if layout == "channels_last-like" and rank >= 3:
        order = [0, *range(2, rank), 1]
    if layout == "permuted" or mixed:
        order = draw(st.permutations(order))
    steps = [draw(st.integers(1, 3)) if layout == "sliced" or mixed else 1 for _ in shape]
    offset = draw(st.integers(0, 3)) if layout == "sliced" or mixed else 0
    expanded = [draw(st.booleans()) if layout == "expanded" or mixed else False for _ in shape]
    return strided(shape, dtype, draw(st.integers(0, 2**32 - 1)), order, steps, offset, expanded)


def value_strategy(argument, samples):
    """A non-tensor argument: its samples' values, and now and then a hostile one of its type."""
    hostile = {
        "str": st.sampled_from(["UP", "", "Left", "left ", "RIGHT\n"]),
        "Scalar": st.one_of(st.integers(-70, 70), st.sampled_from([127, 255, 256, 2**31, 2**32, 2**63 - 1, -2**63]),
                            st.booleans(), st.sampled_from([1.0, 1.5, -0.0, float("nan")])),
        "bool": st.booleans(),
        "int": st.integers(-2**63, 2**63 - 1),
        "float": st.floats(),
        # a packing op's dim or count: out of range, too negative, past the end (not so far
        # past it that the result would not fit in memory)
        "Optional[int]": st.none() | st.integers(-70, 70),
        # a search op's k: negative, 0, past the database
        "SymInt": st.integers(-3, 45),
    }.get(str(argument.type))
    return st.sampled_from(samples) if hostile is None else mostly(st.sampled_from(samples), hostile)


def writes(argument):
    return argument.alias_info is not None and argument.alias_info.is_write


def sampled_arguments(overload):
    """The arguments of each of tests/calls.py's samples of `overload`, once each, a tensor's
    place marked None: all of them (argument_templates keeps those the dtype sweeps can make)."""
    templates = {}
    for _, sampled, make_args, *_ in OPCHECK_SAMPLES:
        if sampled is overload:
            template = tuple(None if isinstance(a, torch.Tensor) else a for a in make_args())
            templates[repr(template)] = template  # repr: True and 1 are one dict key
    return list(templates.values())


@st.composite
def code_shapes(draw):
    """The shapes of a search op's two operands: codes of B bytes, (..., M, B) and (..., N, B),
    their batch dims broadcasting (mostly none); now and then a code size that differs, or
    an operand of one dim."""
    size = draw(st.sampled_from((0, 1, 5, 8, 16, 17, 32, 40, 64, 100, 128)))
    batch = draw(mostly(st.just(()), shapes().map(lambda shape: tuple(shape[:2]))))
    first = (*batch, draw(st.integers(0, 6)), size)
    second = (*draw(operand_shapes(batch)), draw(mostly(st.integers(1, 40), st.integers(0, 300))),
              draw(mostly(st.just(size), st.integers(0, 9))))
    if draw(st.integers(0, 15)) == 15:
        first = first[-1:]
    return iter((first, second))


@st.composite
def calls(draw, overload):
    """A call of `overload` (module docstring): the same derivation for every op."""
    declaration = declaration_of(overload)
    declared = declaration.dtypes
    dtypes = mostly(st.sampled_from(declared), st.sampled_from([d for d in UNDECLARED_DTYPES if d not in declared]))
    templates = sampled_arguments(overload)
    shape = draw(shapes(longest=70 if isinstance(declaration, Packing) else 5))
    searched = draw(code_shapes()) if isinstance(declaration, Search) else None
    args, out_arguments = [], []
    for index, argument in enumerate(overload._schema.arguments):
        if argument.kwarg_only and writes(argument):
            out_arguments.append(argument)
        elif isinstance(argument.type, torch.TensorType) and searched is not None:
            first = next((a for a in args if isinstance(a, torch.Tensor)), None)
            dtype = draw(dtypes if first is None else st.just(first.dtype) | dtypes)
            args.append(draw(tensors(next(searched), dtype)))
        elif isinstance(argument.type, torch.TensorType):
            first = next((a for a in args if isinstance(a, torch.Tensor)), None)
            if first is not None and draw(st.integers(0, 9)) == 9:
                args.append(first)  # an operand that is x itself
                continue
            # An in-place x mostly has the broadcast shape.
            is_x = writes(argument) and draw(st.integers(0, 7)) < 7
            # Half of the later operands take x's dtype: most mixed pairs of the unsigned dtypes are refused.
            dtype = draw(dtypes if first is None else st.just(first.dtype) | dtypes)
            args.append(draw(tensors(shape if is_x else draw(operand_shapes(shape)), dtype)))
        else:
            samples = [t[index] if index < len(t) else argument.default_value for t in templates]
            args.append(draw(value_strategy(argument, samples)))
    return Call(overload, tuple(args), {argument.name: draw(outs(overload, args, declared, index))
                                        for index, argument in enumerate(out_arguments)})


def result_of(overload, args, index=0):
    """The dtype and shape of the call's result (its `index`th: hamming_topk has two; of its
    x for a refused call)."""
    operands = [a for a in args if isinstance(a, torch.Tensor)]
    declaration = declaration_of(overload)
    try:
        if isinstance(declaration, Packing):  # its result's shape is not x's
            checked = declaration.check(op_name(overload), *args)
            return checked.dtype, checked.shape
        if isinstance(declaration, Search):
            return declaration.check(op_name(overload), *args).results[index]
        return (declaration.check(op_name(overload), *args), torch.broadcast_shapes(*(t.shape for t in operands)))
    except Exception:  # noqa: BLE001
        return operands[0].dtype, operands[0].shape


@st.composite
def outs(draw, overload, args, declared, index=0):
    """out= of every kind, for a call with these arguments (its `index`th out)."""
    operands = [a for a in args if isinstance(a, torch.Tensor)]
    dtype, shape = result_of(overload, args, index)
    kind = draw(mostly(st.just("of the result's shape"),
                       st.sampled_from(["empty", "of another shape", "of another dtype", "x itself", "overlapping x"])))
    event(f"out {kind}")
    if kind == "x itself":
        return operands[0]
    if kind == "overlapping x":
        x = operands[0]
        return x.as_strided(x.shape, x.stride(), x.storage_offset() + 1)
    if kind == "empty":
        shape = (0,)
    if kind == "of another shape":
        shape = (*[max(d, 1) for d in shape[:-1]], (shape[-1] if shape else 0) + 2)
    if kind == "of another dtype":
        dtype = draw(st.sampled_from([d for d in (*declared, *UNDECLARED_DTYPES) if d != dtype]))
    return draw(tensors(shape, dtype))


@pytest.mark.parametrize("overload", OVERLOADS, ids=str)
@profile(EXAMPLES)
@given(data=st.data())
def test_random_calls(overload, data):
    expected = assert_paths_agree(data.draw(calls(overload), label="call"), paths_or_skip(OTHER_PATHS))
    event("error: " + expected["error"][0] if "error" in expected else "returned")


@pytest.mark.parametrize("overload", OVERLOADS, ids=str)
@profile(TRITON_EXAMPLES)
@given(data=st.data())
def test_random_calls_on_triton(overload, data):
    if not _triton.available():
        pytest.skip("Triton is not installed with this torch (torch 2.14 and 2.15 bring it)")
    assert_paths_agree(data.draw(calls(overload), label="call"), paths_or_skip(TRITON_PATHS))


# --------------------------------------------------------------------------
# Every pair of layouts: the result's layout depends on how the operands' layouts and dtypes
# meet (an expanded operand converted to the result dtype beside a transposed one), a
# combination random draws reach rarely.

SWEPT_LAYOUTS = {  # of a 2-d operand: strided()'s order, steps, offset, expanded
    "contiguous": ((0, 1), (1, 1), 0, (False, False)),
    "transposed": ((1, 0), (1, 1), 0, (False, False)),
    "expanded rows": ((0, 1), (1, 1), 0, (True, False)),
    "expanded columns": ((0, 1), (1, 1), 0, (False, True)),
    "sliced": ((0, 1), (2, 2), 1, (False, False)),
}


def swept_calls(overload):
    """The overload with its first sample's arguments, its tensor operands of one shape of
    (3, 4), (3, 1), (1, 4), each in every layout of SWEPT_LAYOUTS and of either of its op's
    first two dtypes; an out= empty (resized, laid out by the op)."""
    template = argument_templates(overload)[0]
    count = template.count(None)
    dtypes = declaration_of(overload).dtypes[:2]
    for shape in ((3, 4), (3, 1), (1, 4)):
        for layouts in itertools.product(SWEPT_LAYOUTS.values(), repeat=count):
            for types in itertools.product(dtypes, repeat=count):
                operands = iter([strided(shape, dtype, 0, *layout) for layout, dtype in zip(layouts, types)])
                args = tuple(next(operands) if a is None else a for a in template)
                out = [a.name for a in overload._schema.arguments if a.kwarg_only and writes(a)]
                kwargs = {name: torch.empty(0, dtype=result_of(overload, args, index)[0])
                          for index, name in enumerate(out)}
                yield Call(overload, args, kwargs)


@pytest.mark.parametrize("overload", OVERLOADS, ids=str)
def test_every_pair_of_layouts(overload):
    paths = paths_or_skip(PATHS[1:])
    for call in swept_calls(overload):
        assert_paths_agree(call, paths)


# --------------------------------------------------------------------------
# Fixed calls, on every path: layouts once found to differ, and the catalogue of tests/calls.py


def known_layouts():
    """Broadcast operands whose result the device-generic entries once laid out otherwise
    than the CPU kernels: an expanded x with a transposed y of another dtype, a transposed
    column with an expanded y of another dtype; functional, and into an empty out=."""
    expanded_x = torch.arange(5, dtype=torch.uint8).reshape(1, 5).expand(5, 5)  # strides (0, 1)
    transposed_y = torch.arange(25, dtype=torch.int8).reshape(5, 5).t()  # strides (1, 5)
    column_x = torch.arange(5, dtype=torch.int64).reshape(1, 5).t()  # (5, 1), strides (1, 5)
    expanded_y = torch.zeros(1, 1, dtype=torch.int32).expand(5, 1)  # strides (0, 1)
    bitshift = torch.ops.torchops.bitshift
    return [
        ("expanded-x-transposed-y", Call(bitshift.default, (expanded_x, transposed_y, "LEFT", True), {})),
        ("transposed-x-expanded-y", Call(bitshift.default, (column_x, expanded_y, "RIGHT", True), {})),
        ("expanded-x-transposed-y-out-empty",
         Call(bitshift.out, (expanded_x, transposed_y, "LEFT", True), {"out": torch.empty(0, dtype=torch.int16)})),
        ("transposed-x-expanded-y-out-empty",
         Call(bitshift.out, (column_x, expanded_y, "RIGHT", True), {"out": torch.empty(0, dtype=torch.int64)})),
    ]


KNOWN_LAYOUTS = known_layouts()


@pytest.mark.parametrize("call", [call for _, call in KNOWN_LAYOUTS], ids=[name for name, _ in KNOWN_LAYOUTS])
def test_known_layouts(call):
    # A test of their own: too few to be sampled away (conftest.py) in any configuration.
    assert_paths_agree(call, paths_or_skip(PATHS[1:]))


def fixed_calls():
    cases = []
    for name, overload, make_args, *make_kwargs in OPCHECK_SAMPLES:
        cases.append((f"sample-{name}", Call(overload, make_args(), make_kwargs[0]() if make_kwargs else {})))
    for bad in BAD_CALLS:
        cases.append((f"bad-{bad.id}", Call(bad.overload, bad.inputs + bad.args, bad.out_kwargs)))
    return cases


FIXED_CALLS = fixed_calls()


@pytest.mark.parametrize("call", [call for _, call in FIXED_CALLS], ids=[name for name, _ in FIXED_CALLS])
def test_fixed_calls(call):
    assert_paths_agree(call, paths_or_skip(PATHS[1:]))
