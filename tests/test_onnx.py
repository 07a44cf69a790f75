"""ONNX export (torchops.onnx): models exported through torch.onnx run in onnxruntime with
exactly eager torchops's results, at the lowest supported opset, torch.onnx's default and 28.

Every model is exported once per opset (functools.cache) and then run on many inputs. The
assumptions the translations rest on are tested in onnxruntime too: Cast between the signed
and unsigned type of one width keeps the bits, and onnxruntime's own BitShift-28 (an
implementation of ONNX's operator that this project did not write) agrees with torchops on
every int8 and uint8 pair. Marked `deploy`, like the other export paths (the sanitizer run
leaves them out: they test translations, not kernels).
"""
import functools
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

# The ONNX packages are optional (requirements-dev.txt's onnx group): where they are missing
# (the emulated aarch64 environment) this module is skipped, not an error of collection.
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
pytest.importorskip("onnxruntime")
ir = pytest.importorskip("onnx_ir")  # onnxscript's IR

import onnx.helper  # noqa: E402

import torchops  # noqa: E402
import torchops.onnx  # noqa: E402
from torchops._contract import op_name  # noqa: E402
from conftest import (  # noqa: E402
    FLOAT_DTYPES,
    INT_DTYPES,
    OPERATIONS,
    SIGNED_DTYPES,
    as_bits,
    assert_same_tensors,
    calls_and_inputs,
    declared_functional_calls,
    dtype_id,
    every_8bit_pair,
    floats_from_bits,
    interesting_counts,
    interesting_values,
    make_tensor,
    random_values,
    special_float_patterns,
)

pytestmark = [
    pytest.mark.deploy,
    pytest.mark.compiles,
    # torch.onnx's own code warns (PyTorch 2.13, onnxscript 0.7), not torchops.
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning"),
]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
from shift_model import ShiftModel, example_inputs  # noqa: E402

T = torch.ops.torchops
LOWEST, DEFAULT, HIGHEST = torchops.onnx.MIN_OPSET, torchops.onnx.DEFAULT_OPSET, torchops.onnx.MAX_OPSET
SHIFT_OPSETS = [LOWEST, DEFAULT, HIGHEST]


def on_every_shift_opset(test):
    """The test at each of SHIFT_OPSETS; the README's test command runs each such test at one
    of them, the next in turn through this file (tests/conftest.py), so that each opset runs."""
    return pytest.mark.quick_run_one_of("opset")(pytest.mark.parametrize("opset", SHIFT_OPSETS)(test))


# Every spelling the op takes: the three operations, plus LEFT with arithmetic=False and lower case.
SPELLINGS = OPERATIONS + [("LEFT", False), ("left", True), ("right", False)]
# Python-int counts given to the raw .Scalar overload (any int64), and through the typed API.
SCALAR_COUNTS = [-(2**63), -65, -1, 0, 1, 7, 8, 9, 15, 16, 31, 32, 63, 64, 255, 257, 2**63 - 1]
API_COUNTS = [-(2**70), 2**70]


def results_of(value):
    """A call's results as a list: hamming_topk's values and indices, another op's one tensor."""
    return list(value) if isinstance(value, (tuple, list)) else [value]


def assert_runs_like_eager(program, model, args):
    got = torchops.onnx.run(program, args)
    expected = model(*[a.clone() for a in args])  # a model may shift its inputs in place
    # torch.onnx's outputs: the model's results flattened (a hamming_topk's two tensors)
    expected = torch.utils._pytree.tree_leaves(expected)
    assert_same_tensors(got, expected, "onnxruntime")


# --------------------------------------------------------------------------
# every int8 and uint8 (x, count) pair, every overload


class EveryOverload(torch.nn.Module):
    """Each spelling with tensor counts, a 0-d count (its value chosen at run time) and
    Python-int counts, in place and out=, and signbit of ints and bools; x8, y8 and xu, yu
    hold every pair of their dtype."""

    def forward(self, x8, y8, xu, yu, count):
        outputs = []
        for x, y in ((x8, y8), (xu, yu)):
            for direction, arithmetic in SPELLINGS:
                outputs.append(T.bitshift(x, y, direction, arithmetic))
                outputs.append(T.bitshift(x, count, direction, arithmetic))
                outputs += [T.bitshift.Scalar(x, c, direction, arithmetic) for c in SCALAR_COUNTS]
            for direction, arithmetic in OPERATIONS:
                outputs += [torchops.bitshift(x, c, direction, arithmetic) for c in API_COUNTS]
                in_place = x.clone()
                T.bitshift_(in_place, y, direction, arithmetic)
                T.bitshift_(in_place, 3, direction, arithmetic)
                out = torch.empty_like(x)
                T.bitshift(x, y, direction, arithmetic, out=out)
                out_scalar = torch.empty_like(x)
                T.bitshift(x, 5, direction, arithmetic, out=out_scalar)
                outputs += [in_place, out, out_scalar]
            signs = torch.empty(x.shape, dtype=torch.bool)
            T.signbit(x, out=signs)
            outputs += [T.signbit(x), signs, T.signbit(x > 3)]
        return tuple(outputs)


def every_pair(dtype):
    """conftest.every_8bit_pair as two tensors."""
    return tuple(make_tensor(values, dtype) for values in every_8bit_pair(dtype))


# 0-d int64 counts: the result dtype is x's, so each is converted to int8/uint8 first (257 -> 1).
RUNTIME_COUNTS = [0, 3, 7, 8, 9, -1, -8, 255, 256, 257, -(2**40), 2**40 + 2]


@functools.cache
def exported_every_overload(opset):
    model = EveryOverload()
    args = (*every_pair(torch.int8), *every_pair(torch.uint8), torch.tensor(3))
    return model, torchops.onnx.export(model, args, opset_version=opset)


@on_every_shift_opset
def test_every_int8_and_uint8_pair(opset):
    model, program = exported_every_overload(opset)
    onnx.checker.check_model(program.model_proto, full_check=True)
    assert program.model.opset_imports[""] == opset
    x8, y8, xu, yu = *every_pair(torch.int8), *every_pair(torch.uint8)
    for count in RUNTIME_COUNTS:
        assert_runs_like_eager(program, model, (x8, y8, xu, yu, torch.tensor(count)))


def test_onnxruntime_bitshift_28_agrees_with_torchops_on_every_pair():
    # onnxruntime's BitShift-28, an implementation of ONNX's operator written elsewhere.
    for dtype in (torch.int8, torch.uint8):
        x, y = every_pair(dtype)
        element = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(str(dtype_id(dtype))))
        for direction in ("LEFT", "RIGHT"):
            graph = onnx.helper.make_graph(
                [onnx.helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction)], "bitshift",
                [onnx.helper.make_tensor_value_info(name, element, [None]) for name in ("x", "y")],
                [onnx.helper.make_tensor_value_info("z", element, [None])])
            model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 28)])
            onnx.checker.check_model(model, full_check=True)
            (got,) = torchops.onnx.run(model, (x, y))
            assert_same_tensors(got, torchops.bitshift(x, y, direction), f"BitShift-28 {direction} {dtype}")


def test_onnxruntime_cast_between_signed_and_unsigned_keeps_the_bits():
    # What the decompositions below opset 28 rest on, and narrowing casts keeping the low bits.
    pairs = [(s, u) for s in SIGNED_DTYPES for u in INT_DTYPES if not u.is_signed
             and torch.iinfo(s).bits == torch.iinfo(u).bits]
    cases = pairs + [(u, s) for s, u in pairs] + [(torch.int64, torch.int8), (torch.uint64, torch.uint16)]
    for source, target in cases:
        x = make_tensor(interesting_values(source), source)
        element = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype_id(target)))
        graph = onnx.helper.make_graph(
            [onnx.helper.make_node("Cast", ["x"], ["z"], to=element)], "cast",
            [onnx.helper.make_tensor_value_info("x", onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype_id(source))), [None])],
            [onnx.helper.make_tensor_value_info("z", element, [None])])
        for opset in (LOWEST, HIGHEST):
            model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
            (got,) = torchops.onnx.run(model, (x,))
            bits = torch.iinfo(target).bits
            wrapped = [v & ((1 << bits) - 1) for v in x.tolist()]
            expected = [v - (1 << bits) if target.is_signed and v >= 1 << (bits - 1) else v for v in wrapped]
            assert got.tolist() == expected, f"Cast {source} -> {target} at opset {opset}"


# --------------------------------------------------------------------------
# the wider dtypes: edges and random values, every count kind


class Sweep(torch.nn.Module):
    def forward(self, *pairs):
        outputs = []
        for i in range(0, len(pairs), 2):
            x, y = pairs[i], pairs[i + 1]
            bits = torch.iinfo(x.dtype).bits
            for direction, arithmetic in OPERATIONS:
                outputs.append(T.bitshift(x, y, direction, arithmetic))
                outputs.append(T.bitshift(x, y[0], direction, arithmetic))  # a 0-d count of x's dtype
                for c in (-1, 0, 1, bits // 2, bits - 1, bits, bits + 1, 2**63 - 1, -(2**63)):
                    outputs.append(T.bitshift.Scalar(x, c, direction, arithmetic))
            outputs.append(T.signbit(x))
        return tuple(outputs)


SWEEP_DTYPES = [d for d in INT_DTYPES if torch.iinfo(d).bits > 8]


def sweep_inputs(seed):
    rng = np.random.default_rng(seed)
    args = []
    for dtype in SWEEP_DTYPES:
        values = interesting_values(dtype) + random_values(dtype, 64, rng)
        counts = interesting_counts(dtype) + [int(c) for c in rng.integers(0, torch.iinfo(dtype).bits, 16)]
        x, y = np.meshgrid(np.array(values, dtype=object), np.array(counts, dtype=object), indexing="ij")
        args += [make_tensor(x.reshape(-1).tolist(), dtype), make_tensor(y.reshape(-1).tolist(), dtype)]
    return tuple(args)


@functools.cache
def exported_sweep(opset):
    return torchops.onnx.export(Sweep(), sweep_inputs(0), opset_version=opset)


@on_every_shift_opset
def test_wider_dtypes_edges_and_random_values(opset):
    program = exported_sweep(opset)
    for seed in (1, 2):
        assert_runs_like_eager(program, Sweep(), sweep_inputs(seed))


# --------------------------------------------------------------------------
# promotion, broadcasting, Python ints as x, a dynamic batch


class Promotions(torch.nn.Module):
    def forward(self, u8, i8, i32, i64, u16, u32):
        return (
            torchops.bitshift(u8, i8, "LEFT"),                       # uint8 with int8: int16
            torchops.bitwise_right_shift(i8, i64, False),            # int8 (batch, 1, 5) with int64 (3, 1): int64
            torchops.bitwise_right_shift(i32, torch.tensor(35)),     # a 0-d int64 count: int32
            torchops.bitshift(u16, torch.tensor(-1), "RIGHT"),       # ... converted to uint16 first
            torchops.bitwise_right_shift(u32, u32[:, :1], False),    # broadcast within uint32
            torchops.bitwise_left_shift(-3, i8),                     # a Python int as x: int8
            torchops.bitshift(i64, u8.to(torch.int64), "RIGHT"),
        )


def promotion_inputs(batch, seed):
    g = torch.Generator().manual_seed(seed)

    def ints(dtype, *shape, low=None, high=None):
        info = torch.iinfo(dtype)
        return torch.randint(info.min if low is None else low, (info.max if high is None else high) + 1, shape,
                             generator=g, dtype=torch.int64 if dtype != torch.uint64 else dtype).to(dtype)

    return (ints(torch.uint8, batch, 1, 5, high=70), ints(torch.int8, batch, 1, 5), ints(torch.int32, batch, 4),
            ints(torch.int64, 3, 1, low=-70, high=70), ints(torch.uint16, batch, 4), ints(torch.uint32, batch, 4, high=2**31))


@pytest.mark.parametrize("opset", [DEFAULT, HIGHEST])
def test_promotion_broadcasting_and_a_dynamic_batch(opset):
    batch = torch.export.Dim("batch", min=2)
    shapes = ({0: batch}, {0: batch}, {0: batch}, None, {0: batch}, {0: batch})
    program = torchops.onnx.export(Promotions(), promotion_inputs(4, 0), opset_version=opset, dynamic_shapes=shapes)
    assert program.model.graph.inputs[0].shape[0] == "batch"
    for size, seed in ((2, 1), (7, 2), (100, 3)):
        assert_runs_like_eager(program, Promotions(), promotion_inputs(size, seed))


@pytest.mark.parametrize("opset", [DEFAULT, HIGHEST])
def test_the_deploy_model_with_a_dynamic_batch_and_the_plain_exporter(opset, tmp_path):
    # ShiftModel (docs/deploy.md) through torchops.onnx.export, saved and reloaded, at three batch sizes.
    path = tmp_path / "shift_model.onnx"
    torchops.onnx.export(ShiftModel(), example_inputs(4), path, opset_version=opset, dynamic_shapes=({0: "batch"}, None))
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    for batch in (1, 6, 100):
        assert_runs_like_eager(str(path), ShiftModel(), example_inputs(batch))


class Functional(torch.nn.Module):
    def forward(self, x, y):
        return (T.bitshift(x, y, "LEFT"), T.bitshift(x, y, "RIGHT"), T.bitshift(x, y, "RIGHT", False),
                T.bitshift(x, 40, "right"), T.signbit(x))


@pytest.mark.parametrize("opset", [None, HIGHEST])
def test_the_table_alone_with_torch_onnx_export(opset):
    # The functional overloads need nothing but the table.
    x, y = make_tensor(interesting_values(torch.int32), torch.int32), torch.arange(-40, 40, dtype=torch.int32)[:, None]
    program = torch.onnx.export(Functional(), (x, y), dynamo=True, opset_version=opset,
                                custom_translation_table=torchops.onnx.translation_table(opset))
    assert program.model.opset_imports[""] == (opset or DEFAULT)
    assert_runs_like_eager(program, Functional(), (x, y))


# --------------------------------------------------------------------------
# the graphs


def op_types(program):
    return [node.op_type for node in program.model.graph]


def test_at_opset_28_a_left_or_arithmetic_right_shift_is_one_bitshift():
    x, y = make_tensor(interesting_values(torch.int16), torch.int16), torch.tensor([3], dtype=torch.int16)

    class LeftAndRight(torch.nn.Module):
        def forward(self, x, y):
            return T.bitshift(x, y, "LEFT"), T.bitshift(x, y, "RIGHT")

    program = torchops.onnx.export(LeftAndRight(), (x, y), opset_version=28)
    assert op_types(program) == ["BitShift", "BitShift"]
    assert [node.attributes["direction"].as_string() for node in program.model.graph] == ["LEFT", "RIGHT"]
    assert_runs_like_eager(program, LeftAndRight(), (x, y))


@pytest.mark.parametrize("opset", [LOWEST, DEFAULT])
def test_below_opset_28_every_bitshift_count_is_in_range(opset):
    # onnxruntime's BitShift-11 gives 0 for counts >= n, which the spec leaves undefined, so
    # the results cannot show a missing range mask: the graph must. Each count is a
    # constant in [0, n) or the product of the count with (count < n).
    _, program = exported_every_overload(opset)
    shifts = [node for node in program.model.graph if node.op_type == "BitShift"]
    assert shifts and all(node.version is None or node.version < 28 for node in shifts)
    for node in shifts:
        count = node.inputs[1]
        bits = count.dtype.bitwidth
        if count.const_value is not None:
            assert 0 <= int(count.const_value.numpy().max()) < bits and int(count.const_value.numpy().min()) >= 0
            continue
        product = count.producer()
        assert product.op_type == "Mul", f"{node.name}: a count from {product.op_type}"
        masks = [value.producer() for value in product.inputs if value.producer() is not None]
        assert any(m.op_type == "Cast" and getattr(m.inputs[0].producer(), "op_type", None) == "Less"
                   for m in masks), node.name


# --------------------------------------------------------------------------
# every functional overload on every dtype its op declares


@on_every_shift_opset
def test_every_functional_overload_on_every_declared_dtype_is_exact(opset):
    # A call that the translation refuses at this opset (NotImplementedError, naming the op
    # and the dtype: float signbit below 26) is taken out, and the rest exported; at the
    # highest opset every call must be translated.
    calls, refused = list(declared_functional_calls()), []
    while True:
        model, inputs = calls_and_inputs(calls)
        try:
            program = torchops.onnx.export(model, inputs, opset_version=opset)
            break
        except NotImplementedError as error:
            named = {(op_name(o), d) for o, d, _ in calls
                     if str(error).startswith(op_name(o) + ":") and re.search(rf"\b{dtype_id(d)}\b", str(error))}
            assert len(named) == 1, f"a refusal that names no one op and dtype of the calls: {error}"
            refused += named
            calls = [(o, d, t) for o, d, t in calls if (op_name(o), d) not in named]
    assert opset != HIGHEST or not refused, f"refused at opset {opset}: {refused}"
    onnx.checker.check_model(program.model_proto, full_check=True)
    # A call of several results (hamming_topk's values and indices) is as many model outputs.
    expected = []
    for (overload, dtype, template), results in zip(calls, map(results_of, model(*inputs))):
        for i, e in enumerate(results):
            which = "" if len(results) == 1 else f" result {i}"
            expected.append((f"{overload}{template}{which} on {dtype_id(dtype)} at opset {opset}", e))
    got = torchops.onnx.run(program, inputs)
    assert len(got) == len(expected) >= len(calls)
    for g, (what, e) in zip(got, expected):
        assert (g.dtype, g.shape) == (e.dtype, e.shape), \
            f"{what}: {g.dtype} {list(g.shape)}, eager {e.dtype} {list(e.shape)}"
        g, e = g.flatten(), e.flatten()  # a search's results are 2-d: positions in the flattened result
        differ = (as_bits(g) != as_bits(e)).nonzero().flatten()[:5]  # as_bits: a NaN result is its bits
        assert not len(differ), (f"{what}: onnxruntime differs from eager at {differ.tolist()}: "
                                 f"{g[differ].tolist()} against {e[differ].tolist()}")


# the packing ops beyond the 1-d sweep: every dim of a 3-d x and None, a 0-d x, counts that
# keep, drop and append fields, a dynamic dim, out=


class Packing(torch.nn.Module):
    def forward(self, x, flags, packed, scalar, byte):
        outputs = []
        for dim in (0, 1, -1, None):
            for bitorder in ("big", "little"):
                outputs.append(T.packbits(x, dim, bitorder))
                outputs.append(T.packbits(flags, dim, bitorder))
                outputs += [T.pack(x, bits, dim, bitorder) for bits in (1, 2, 4)]
                outputs.append(T.unpackbits(packed, dim, None, bitorder))
                for bits, count, signed in ((1, 11, True), (2, -3, False), (4, 100, True), (4, None, True),
                                            (2, 0, False)):
                    outputs.append(T.unpack(packed, bits, dim, count, bitorder, signed))
        outputs += [T.packbits(scalar), T.pack(scalar, 4, 0, "little"), T.pack(flags[0, 0, 0], 2, None),
                    T.unpack(byte, 2, None, 3), T.unpackbits(byte, -1, -2, "little"),
                    T.unpack(byte, 4, 0, None, "big", True)]
        return tuple(outputs)


def packing_inputs(batch, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-(2**15), 2**15, (batch, 5, 11), generator=g).to(torch.int16)
    x[:, ::2] = 0  # zeros among the elements: packbits's rule
    flags = torch.randint(0, 2, (batch, 5, 11), generator=g).to(torch.bool)
    packed = torch.randint(0, 256, (batch, 3, 7), generator=g).to(torch.uint8)
    return x, flags, packed, torch.tensor(-7, dtype=torch.int64), torch.tensor(0x9C, dtype=torch.uint8)


@on_every_shift_opset
def test_packing_along_every_dim_with_a_dynamic_batch(opset):
    # From 9: a batch packed along dim 0 is more than one byte (export specializes a size of 1).
    batch = torch.export.Dim("batch", min=9)
    program = torchops.onnx.export(Packing(), packing_inputs(11, 0), opset_version=opset,
                                   dynamic_shapes=({0: batch}, {0: batch}, {0: batch}, None, None))
    onnx.checker.check_model(program.model_proto, full_check=True)
    for size, seed in ((11, 1), (9, 2), (16, 3), (23, 4)):
        assert_runs_like_eager(program, Packing(), packing_inputs(size, seed))


class PackingInto(torch.nn.Module):
    def forward(self, x, packed, into):
        made = torch.empty(0, dtype=torch.int8)
        torchops.pack(x, 4, 0, out=into)  # an input of the result's shape
        torchops.unpack(packed, 2, -1, 5, "little", True, out=made)  # a buffer of the model, resized
        return into + 1, made


def test_packing_out_into_an_input_and_a_resized_buffer():
    x = torch.arange(-12, 12, dtype=torch.int32).reshape(6, 4)
    packed = torch.arange(24, dtype=torch.uint8).reshape(4, 6)
    args = (x, packed, torch.zeros(3, 4, dtype=torch.uint8))
    program = torchops.onnx.export(PackingInto(), tuple(a.clone() for a in args), verify=True)
    assert_runs_like_eager(program, PackingInto(), tuple(a.clone() for a in args))


# the search ops beyond the sweep: batch dims that broadcast, odd and empty code sizes, ties
# (TopK orders distinct keys, distance * N + index: its own order among equal values, which
# ONNX leaves open, never shows), every k from none to all, dynamic sizes, out= with two outs


class Searches(torch.nn.Module):
    def forward(self, x1, x2, queries, database):
        outputs = [T.hamming_distance(x1, x2), T.hamming_distance(x1[..., :0], x2[..., :0]),
                   T.hamming_distance(x2[0], x1[0, 0]), T.hamming_distance(queries, database)]
        for k in (0, 1, 4, 12):
            outputs += T.hamming_topk(queries, database, k)
        outputs += T.hamming_topk(queries, database, database.shape[0])  # every code: k = N (a SymInt)
        outputs += T.hamming_topk(queries[:0], database, 2)
        return tuple(outputs)


def search_inputs(m, n, q, size, seed):
    """x1 (2, 1, m, 13) and x2 (3, n, 13), of random bytes; queries (q, 9) and database (size, 9)
    of bytes in [0, 4): many equal distances."""
    rng = np.random.default_rng(seed)

    def codes(shape, dtype, values=256):
        return torch.from_numpy(rng.integers(0, values, size=shape, dtype=np.uint8)).view(dtype)

    return (codes((2, 1, m, 13), torch.uint8), codes((3, n, 13), torch.int8), codes((q, 9), torch.uint8, 4),
            codes((size, 9), torch.int8, 4))


@on_every_shift_opset
def test_hamming_distance_and_topk_with_ties_and_dynamic_sizes(opset):
    dims = [torch.export.Dim(name, min=low) for name, low in (("m", 2), ("n", 2), ("q", 2), ("size", 12))]
    shapes = ({2: dims[0]}, {1: dims[1]}, {0: dims[2]}, {0: dims[3]})
    program = torchops.onnx.export(Searches(), search_inputs(5, 7, 6, 40, 0), opset_version=opset,
                                   dynamic_shapes=shapes)
    onnx.checker.check_model(program.model_proto, full_check=True)
    # TopK takes the int64 keys, never the distances themselves
    topks = [node for node in program.model.graph if node.op_type == "TopK"]
    assert topks and all(node.inputs[0].dtype == ir.DataType.INT64 for node in topks)
    for args in (search_inputs(5, 7, 6, 40, 1), search_inputs(2, 9, 3, 12, 2), search_inputs(17, 2, 33, 300, 3)):
        assert_runs_like_eager(program, Searches(), args)


class SearchesInto(torch.nn.Module):
    def forward(self, queries, database, values, indices):
        made = torch.empty(0, dtype=torch.int32), torch.empty(0, dtype=torch.int64)
        distances = torch.empty(0, dtype=torch.int32)
        torchops.hamming_topk(queries, database, 3, out=(values, indices))  # inputs of the result's shape
        nearest = T.hamming_topk.out(queries, database, 5, values=made[0], indices=made[1])  # buffers, resized
        T.hamming_distance.out(queries, database, out=distances)
        return values + 1, indices, nearest[1], made[0], distances


def test_hamming_out_into_inputs_and_resized_buffers():
    queries, database = search_inputs(2, 2, 4, 11, 4)[2:]
    args = (queries, database, torch.zeros(4, 3, dtype=torch.int32), torch.zeros(4, 3, dtype=torch.int64))
    program = torchops.onnx.export(SearchesInto(), tuple(a.clone() for a in args), verify=True)
    assert_runs_like_eager(program, SearchesInto(), tuple(a.clone() for a in args))


def test_hamming_topk_of_other_dtypes_is_refused_by_name():
    class Topk(torch.nn.Module):
        def forward(self, queries, database):
            return T.hamming_topk(queries, database, 1)

    table = torchops.onnx.translation_table()
    with pytest.raises(Exception, match=r"torchops\.hamming_topk: queries must be a uint8 or int8 tensor"):
        torch.onnx.export(Topk(), (torch.zeros(2, 3, dtype=torch.int16), torch.zeros(4, 3, dtype=torch.uint8)),
                          dynamo=True, custom_translation_table=table)


# signbit of floats: exact at opset 26 and up, refused below


def float_patterns(dtype, seed):
    """conftest's special patterns (±0, ±inf, quiet and signalling NaNs of both signs,
    subnormals, ...) and 997 random bit patterns."""
    bits = torch.finfo(dtype).bits
    random = np.random.default_rng(seed).integers(0, 1 << bits, size=997, dtype=np.uint64).tolist()
    return floats_from_bits([pattern for _, pattern, _ in special_float_patterns(dtype)] + random, dtype)


class FloatSigns(torch.nn.Module):
    def forward(self, half, bfloat, single, double):
        out = torch.empty(single.shape, dtype=torch.bool)
        torchops.signbit(single, out=out)
        return T.signbit(half), torchops.signbit(bfloat), out, T.signbit(double)


@pytest.mark.parametrize("opset", [torchops.onnx.BITCAST_OPSET, HIGHEST])
def test_float_signbit_reads_the_sign_bit(opset):
    args = tuple(float_patterns(dtype, 0) for dtype in FLOAT_DTYPES)
    program = torchops.onnx.export(FloatSigns(), args, opset_version=opset, verify=True)
    onnx.checker.check_model(program.model_proto, full_check=True)
    assert "BitCast" in op_types(program) and list(program.model.opset_imports) == [""]
    got = torchops.onnx.run(program, args)
    assert_runs_like_eager(program, FloatSigns(), args)
    # and against the bits themselves
    for values, signs in zip(args, got):
        bits = {16: torch.int16, 32: torch.int32, 64: torch.int64}[torch.finfo(values.dtype).bits]
        assert torch.equal(signs, values.view(bits) < 0)


@pytest.mark.parametrize("opset", [LOWEST, DEFAULT, torchops.onnx.BITCAST_OPSET - 1])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_float_signbit_below_opset_26_is_refused_by_name(opset, dtype):
    class Signs(torch.nn.Module):
        def forward(self, x):
            return T.signbit(x)

    message = rf"torchops\.signbit: .*{dtype_id(dtype)} .*opset_version >= 26.*got opset_version={opset}"
    with pytest.raises(NotImplementedError, match=message):
        torchops.onnx.export(Signs(), (float_patterns(dtype, 0),), opset_version=opset)


def test_float_signbit_through_the_plain_exporter_names_torchops_onnx_export():
    class Signs(torch.nn.Module):
        def forward(self, x):
            return T.signbit(x)

    with pytest.raises(Exception, match=r"torchops\.onnx\.export\(\.\.\.\) instead of torch\.onnx\.export"):
        torch.onnx.export(Signs(), (float_patterns(torch.float32, 0),), dynamo=True, opset_version=28,
                          custom_translation_table=torchops.onnx.translation_table(28))


# --------------------------------------------------------------------------
# in place and out= beyond the model's own buffers


class MutatesItsInput(torch.nn.Module):
    def forward(self, x, y):
        torchops.bitwise_left_shift_(x, y)
        return x + 1


class OutIntoAnInput(torch.nn.Module):
    def forward(self, x, y, out):
        torchops.bitwise_right_shift(x, y, False, out=out)
        return out * 2


class ResizedOut(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty(0, dtype=torch.int16)
        result = torchops.bitshift(x, y, "RIGHT", False, out=out)
        return out, result


def test_in_place_and_out_into_inputs_and_a_resized_out():
    # ONNX has no mutation: the results are the outputs (a mutated input is not one).
    x, y = make_tensor([-5, 7, 100, -32768], torch.int16), make_tensor([1, 2, 20, 15], torch.int16)
    for model, args in [(MutatesItsInput(), (x, y)), (OutIntoAnInput(), (x, y, torch.zeros(4, dtype=torch.int16))),
                        (ResizedOut(), (x, y))]:
        program = torchops.onnx.export(model, tuple(a.clone() for a in args), verify=True)
        assert_runs_like_eager(program, model, tuple(a.clone() for a in args))


def test_an_out_input_that_the_op_would_resize_is_refused():
    x, y = make_tensor([-5, 7], torch.int16), make_tensor([1, 2], torch.int16)
    with pytest.raises(NotImplementedError, match=r"resizes its out= tensor, which is an input of the model"):
        torchops.onnx.export(OutIntoAnInput(), (x, y, torch.zeros(0, dtype=torch.int16)))


# --------------------------------------------------------------------------
# arguments and errors


@pytest.mark.parametrize("opset", [LOWEST - 1, HIGHEST + 1, 20.0, "20", True])
def test_opsets_outside_the_supported_range_are_refused(opset):
    message = rf"opset_version must be an int from {LOWEST} to {HIGHEST} .*got {opset!r}"
    with pytest.raises(ValueError, match=message.replace("'", ".")):
        torchops.onnx.translation_table(opset)
    with pytest.raises(ValueError, match=message.replace("'", ".")):
        torchops.onnx.export(Functional(), (torch.ones(2, dtype=torch.int8),) * 2, opset_version=opset)


def test_export_refuses_what_is_not_the_dynamo_exporters():
    args = (torch.ones(2, dtype=torch.int8),) * 2
    with pytest.raises(TypeError, match="dynamic_axes="):
        torchops.onnx.export(Functional(), args, dynamic_axes={"x": [0]})
    with pytest.raises(TypeError, match="model must be a torch.nn.Module or a torch.export.ExportedProgram"):
        torchops.onnx.export(torch.jit.script(Functional()), args)


def test_verify_catches_a_translation_that_is_not_exact():
    # The caller's translation of an op wins; this one shifts int8 right without the sign fill.
    from onnxscript import opset18 as op

    def zero_filling(x, y, direction, arithmetic=True):
        unsigned = [op.Cast(v, to=onnx.TensorProto.UINT8) for v in (x, y)]
        return op.Cast(op.BitShift(*unsigned, direction=direction.upper()), to=onnx.TensorProto.INT8)

    class Right(torch.nn.Module):
        def forward(self, x, y):
            return T.bitshift(x, y, "RIGHT")

    with pytest.raises(AssertionError, match=r"output 0 of the ONNX model differs from eager: .* elements differ"):
        torchops.onnx.export(Right(), every_pair(torch.int8), verify=True,
                             custom_translation_table={T.bitshift.default: zero_filling})


def test_an_exported_program_is_taken_as_is_and_left_unchanged():
    x, y = example_inputs(3)
    program = torch.export.export(ShiftModel(), (x, y))
    before = str(program.graph)
    onnx_program = torchops.onnx.export(program, (x, y), opset_version=28, verify=True)
    assert str(program.graph) == before
    assert_runs_like_eager(onnx_program, ShiftModel(), (x, y))


def python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_import_torchops_needs_no_onnx_package_and_reaches_torchops_onnx_on_use():
    result = python(
        "import sys, torchops\n"
        "assert not {'onnx', 'onnxscript', 'onnxruntime'} & set(sys.modules), 'imported by torchops'\n"
        "assert torchops.onnx.translation_table is not None\n"
    )
    assert result.returncode == 0, result.stderr


def test_without_onnxscript_the_error_says_what_to_install():
    result = python("import sys; sys.modules['onnxscript'] = None\nimport torchops.onnx\n")
    assert result.returncode != 0 and "pip install torchops[onnx]" in result.stderr, result.stderr
