"""TorchScript: models that call the typed API (every form of every function: tests/calls.py's
TYPED_CALLS; the shifts' other forms: TypedApi) or torch.ops.torchops.* compile with
torch.jit.script, give eager's answers, save, and load and run in a fresh process that has
only the operator library (no torchops Python package). tests/test_deploy.py loads the
scripted ShiftModel of examples/ in C++ programs."""

import importlib.util
import subprocess
import sys
from typing import Optional

import pytest
import torch
from torch import Tensor

import torchops
from torchops import ops
from torchops._contract import OVERLOADS

import model
from calls import TYPED_CALLS
from conftest import (
    ONLY_TORCHSCRIPT_DEPRECATIONS, DispatchRecorder, assert_same_tensors, every_8bit_pair, floats_from_bits, make_tensor,
    special_float_patterns,
)

pytestmark = [*ONLY_TORCHSCRIPT_DEPRECATIONS, pytest.mark.python_layers]


class TypedApi(torch.nn.Module):
    """The shifts' forms beyond TYPED_CALLS' (which every op's rows script, below): tensor and
    int counts, an int x, arguments by position and by keyword, out= by position, Paddle's
    name=, in place with out=x."""

    def forward(self, x: Tensor, y: Tensor, out: Optional[Tensor] = None):
        out_left = torch.empty_like(x)
        out_right = torch.full_like(x, 7)
        in_place = x.clone()
        torchops.bitwise_left_shift_(in_place, y)
        in_place_int = x.clone()
        returned = torchops.bitwise_right_shift_(in_place_int, 2, False, in_place_int, "paddle's name")
        results = [
            torchops.bitshift(x, y, "LEFT"),
            torchops.bitshift(x, 3, "right", False),
            torchops.bitshift(x, -1, "RIGHT"),
            torchops.bitshift(-100, y, "RIGHT", arithmetic=True),
            torchops.bitshift(x, y, "LEFT", True, out_left),
            torchops.bitwise_left_shift(x, y),
            torchops.bitwise_left_shift(x, 70, name="ignored"),
            torchops.bitwise_right_shift(x, y, is_arithmetic=False),
            torchops.bitwise_right_shift(x, 1, True, out=out_right),
            in_place,
            in_place_int,
            returned,
        ]
        if out is not None:
            results.append(torchops.bitwise_left_shift(x, 1, True, out))
        return results


@pytest.fixture(scope="module")
def scripted_typed_api():
    # Compiled once for the tests that use it (compiling takes about a second).
    return torch.jit.script(TypedApi())


def _inputs():
    x = make_tensor([-128, -100, -1, 0, 1, 64, 127, 5], torch.int8)
    y = make_tensor([1, 0, 9, -1, 7, 2, 8, 3], torch.int8)
    f = torch.tensor([-0.0, 0.0, -1.5, float("inf"), float("-inf"), float("nan"), -float("nan"), 1e-40])
    return x, y, f


def _expected(x, y):
    """What TypedApi returns, from the independent model (int8 operands, int8 results)."""
    xs, ys = x.tolist(), y.tolist()
    shift = lambda x_values, counts, direction, arithmetic=True: model.shift_model(  # noqa: E731
        x_values, counts, torch.int8, direction, arithmetic)
    in_place = shift(xs, ys, "LEFT")
    return [
        shift(xs, ys, "LEFT"), shift(xs, 3, "RIGHT", False), shift(xs, -1, "RIGHT"), shift(-100, ys, "RIGHT"),
        shift(xs, ys, "LEFT"), shift(xs, ys, "LEFT"), shift(xs, 70, "LEFT"), shift(xs, ys, "RIGHT", False),
        shift(xs, 1, "RIGHT"), in_place, shift(xs, 2, "RIGHT", False), shift(xs, 2, "RIGHT", False),
    ]


def test_typed_api_scripted_gives_the_models_answers_and_eagers(scripted_typed_api):
    x, y, _ = _inputs()
    scripted = scripted_typed_api(x, y)
    assert [r.tolist() for r in scripted] == _expected(x, y)
    assert_same_tensors(scripted, TypedApi()(x, y))
    out = torch.empty(0, dtype=torch.int8)
    assert scripted_typed_api(x, y, out)[-1] is out  # an out= the model gives comes back itself
    assert out.tolist() == model.shift_model(x.tolist(), 1, torch.int8, "LEFT")


def _nodes(block):
    """Every node of a graph or block, those of the blocks inside its nodes (if, loop) too."""
    for node in block.nodes():
        yield node
        for inner in node.blocks():
            yield from _nodes(inner)


def _overloads_called(graph) -> set[str]:
    """The torchops overloads a scripted graph calls, named as str(overload) names them
    ("torchops.bitshift.Scalar", "torchops.signbit.default")."""
    called = set()
    for node in _nodes(graph):
        if node.kind().startswith("torchops::"):
            op, _, overload = node.schema().partition("(")[0].partition(".")
            called.add(f"{op.replace('::', '.')}.{overload or 'default'}")
    return called


def _assert_calls_only_the_torchops_operators(graph):
    # No call back into Python: the saved model runs without the torchops package.
    seen = {node.kind() for node in _nodes(graph)}
    assert "prim::PythonOp" not in seen and "prim::CallFunction" not in seen, seen
    # The types of x and y are settled while compiling (one body per signature): no check per call.
    assert "prim::isinstance" not in seen, seen
    assert _overloads_called(graph) <= {str(overload) for overload in OVERLOADS}, seen


def test_typed_api_scripted_calls_only_the_torchops_operators(scripted_typed_api):
    _assert_calls_only_the_torchops_operators(scripted_typed_api.inlined_graph)


def _run_in_fresh_process(module_path, inputs_path, outputs_path):
    """Loads the saved module and runs it with only the operator library loaded."""
    script = (
        "import sys, torch\n"
        "torch.ops.load_library(sys.argv[1])\n"
        "assert 'torchops' not in sys.modules\n"
        "module = torch.jit.load(sys.argv[2])\n"
        "torch.save(module(*torch.load(sys.argv[3])), sys.argv[4])\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script, torchops.library_path(), str(module_path), str(inputs_path), str(outputs_path)],
        capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    return torch.load(str(outputs_path))


def test_typed_api_scripted_saves_and_loads_in_a_fresh_process(scripted_typed_api, tmp_path):
    x, y, _ = _inputs()
    torch.jit.save(scripted_typed_api, str(tmp_path / "typed_api.pt"))
    torch.save((x, y), str(tmp_path / "inputs.pt"))
    loaded = _run_in_fresh_process(tmp_path / "typed_api.pt", tmp_path / "inputs.pt", tmp_path / "outputs.pt")
    assert [r.tolist() for r in loaded] == _expected(x, y)


# --------------------------------------------------------------------------
# Every form of every typed function scripted: tests/calls.py's TYPED_CALLS, written from
# their source texts into a module (TorchScript compiles no lambda, and reads a class's
# source from its module's file) with one submodule per row, so a new op's rows need no
# line here.
# The typed functions that TYPED_CALLS must reach (tests/test_binding.py's): all but the kernel-level query.
TYPED_FUNCTIONS = [name for name in ops.__all__ if name != "cpu_capability"]


def _result_count(overload) -> int:
    """How many tensors a row's call gives: its overload's returns (hamming_topk's two)."""
    return len(overload._schema.returns)


def _flat(results) -> list:
    """Every row's result as one list of tensors, a tuple's (hamming_topk's) in order."""
    return [tensor for result in results for tensor in (result if isinstance(result, tuple) else (result,))]


def _write_typed_calls_module(path) -> None:
    """Writes the module: a class ``Row<i>`` per row, whose forward is the row's call (its
    result's type left to TorchScript: a Tensor, or hamming_topk's HammingTopk), and
    ``TypedCalls``, which holds them as ``row_<i>`` and returns every row's tensors, in one
    list (a tuple result's in order)."""
    rows = "".join(f"""

class Row{i}(torch.nn.Module):
    # {name}
    def forward(self, x: Tensor, c: Tensor, f: Tensor):
        return {call.source}
""" for i, (name, call, _) in enumerate(TYPED_CALLS))
    members = "".join(f"\n        self.row_{i} = Row{i}()" for i in range(len(TYPED_CALLS)))
    calls = "".join(f"\n        r{i} = self.row_{i}(x, c, f)" for i in range(len(TYPED_CALLS)))
    results = ", ".join(f"r{i}" if _result_count(overload) == 1 else
                        ", ".join(f"r{i}[{j}]" for j in range(_result_count(overload)))
                        for i, (_, _, overload) in enumerate(TYPED_CALLS))
    path.write_text(f"""\
# Generated by tests/test_torchscript.py from tests/calls.py's TYPED_CALLS.
from typing import List

import torch
from torch import Tensor

import torchops
{rows}

class TypedCalls(torch.nn.Module):
    def __init__(self):
        super().__init__(){members}

    def forward(self, x: Tensor, c: Tensor, f: Tensor) -> List[Tensor]:{calls}
        return [{results}]
""")


@pytest.fixture(scope="module")
def scripted_typed_calls(tmp_path_factory):
    """TYPED_CALLS' module, scripted (its rows: ``row_<i>``)."""
    path = tmp_path_factory.mktemp("typed_calls") / "typed_calls_module.py"
    _write_typed_calls_module(path)
    spec = importlib.util.spec_from_file_location("typed_calls_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # where inspect, and so TorchScript, finds a class's file
    try:
        spec.loader.exec_module(module)
        yield torch.jit.script(module.TypedCalls())
    finally:
        sys.modules.pop(spec.name, None)


def _reached(scripted_row) -> list[str]:
    """What a scripted row calls: the typed function ("torchops.signbit"), read from its graph,
    and the overloads it dispatches when it runs (its graph holds every overload the function's
    body may call: a unary function's, both of the op's)."""
    functions = []
    for node in scripted_row.graph.nodes():
        # A call of a scripted function: prim::CallFunction of a constant of its type,
        # __torch__.torchops.ops[.___torch_mangle_<n>].<name>.
        type_name = str(node.output().type()) if node.kind() == "prim::Constant" and node.outputsSize() == 1 else ""
        if type_name.startswith("__torch__.torchops.ops."):
            functions.append("torchops." + type_name.rpartition(".")[2])
    with DispatchRecorder() as recorder:
        scripted_row(*_inputs())
    return functions + [str(overload) for overload in recorder.seen]


def _unreached(reached_by_rows) -> list[str]:
    """The overloads and typed functions that no row reaches."""
    reached = {name for row in reached_by_rows for name in row}
    return ([str(overload) for overload in OVERLOADS if str(overload) not in reached]
            + [f"torchops.{name}" for name in TYPED_FUNCTIONS if f"torchops.{name}" not in reached])


def _rows_reached(scripted_typed_calls) -> list[list[str]]:
    return [_reached(getattr(scripted_typed_calls, f"row_{i}")) for i in range(len(TYPED_CALLS))]


def test_every_typed_call_scripted_reaches_its_overload_and_together_every_one(scripted_typed_calls):
    _assert_calls_only_the_torchops_operators(scripted_typed_calls.inlined_graph)
    reached = _rows_reached(scripted_typed_calls)
    for (name, call, overload), row in zip(TYPED_CALLS, reached):
        # One typed function, which dispatches the row's overload once.
        assert row == [call.source.partition("(")[0], str(overload)], \
            f"tests/calls.py's TYPED_CALLS row {name!r}, scripted, calls {row}"
    unreached = _unreached(reached)
    assert not unreached, (f"tests/calls.py: no row of TYPED_CALLS reaches {', '.join(unreached)} under TorchScript: "
                           "add one")


def test_the_scripted_coverage_check_names_what_a_missing_row_leaves_out(scripted_typed_calls):
    # The check above can fail: without signbit's rows, it names signbit's function and overloads.
    reached = [row for (name, _, _), row in zip(TYPED_CALLS, _rows_reached(scripted_typed_calls))
               if not name.startswith("signbit")]
    assert sorted(_unreached(reached)) == ["torchops.signbit", "torchops.signbit.default", "torchops.signbit.out"]


def test_every_typed_call_scripted_gives_eagers_answers(scripted_typed_calls):
    x, c, f = _inputs()
    assert_same_tensors(scripted_typed_calls(x, c, f), _flat(call(x, c, f) for _, call, _ in TYPED_CALLS))


def _kind(result) -> tuple:
    """What a result is: a tensor, or a named tuple's name and fields (hamming_topk's HammingTopk).
    TorchScript keeps a NamedTuple's type, and gives it to Python as a namedtuple of its own
    making (torch._jit_internal._create_named_tuple), of that name and those fields."""
    if isinstance(result, Tensor):
        return (Tensor,)
    return type(result).__name__, getattr(type(result), "_fields", None)


def test_a_typed_call_scripted_gives_eagers_kind_of_result(scripted_typed_calls):
    kinds = []
    for i, (name, call, _) in enumerate(TYPED_CALLS):
        eager, scripted = call(*_inputs()), getattr(scripted_typed_calls, f"row_{i}")(*_inputs())
        assert _kind(scripted) == _kind(eager), f"{name}: scripted {_kind(scripted)}, eagerly {_kind(eager)}"
        kinds.append(_kind(eager))
    assert ("HammingTopk", ("values", "indices")) in kinds


def test_every_typed_call_scripted_saves_and_loads_in_a_fresh_process(scripted_typed_calls, tmp_path):
    x, c, f = _inputs()
    torch.jit.save(scripted_typed_calls, str(tmp_path / "typed_calls.pt"))
    torch.save((x, c, f), str(tmp_path / "inputs.pt"))
    loaded = _run_in_fresh_process(tmp_path / "typed_calls.pt", tmp_path / "inputs.pt", tmp_path / "outputs.pt")
    assert_same_tensors(loaded, _flat(call(x, c, f) for _, call, _ in TYPED_CALLS))


def _shifts(x: Tensor, y: Tensor):
    return (torchops.bitwise_left_shift(x, y), torchops.bitwise_right_shift(x, y),
            torchops.bitwise_right_shift(x, y, False))


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8], ids=str)
def test_typed_api_scripted_on_every_8bit_pair(dtype):
    scripted = torch.jit.script(_shifts)
    xs, counts = every_8bit_pair(dtype)
    results = scripted(make_tensor(xs, dtype), make_tensor(counts, dtype))
    for result, (direction, arithmetic) in zip(results, [("LEFT", True), ("RIGHT", True), ("RIGHT", False)]):
        assert result.tolist() == model.shift_model(xs, counts, dtype, direction, arithmetic), (direction, arithmetic)


def _signbits(x: Tensor):
    return torchops.signbit(x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_typed_api_scripted_signbit_reads_the_sign_bit(dtype):
    patterns = special_float_patterns(dtype)
    x = floats_from_bits([bits for _, bits, _ in patterns], dtype)
    assert torch.jit.script(_signbits)(x).tolist() == [sign for _, _, sign in patterns]


class Packing(torch.nn.Module):
    """The packing functions' forms beyond TYPED_CALLS': dim and count as ints and None, both
    bit orders, signed, out= by position and by keyword."""

    def forward(self, mask: Tensor, x: Tensor, dim: Optional[int], count: Optional[int]):
        packed = torchops.packbits(mask, dim, "little")
        nibbles = torch.empty(0, dtype=torch.uint8)
        torchops.pack(x, 4, dim, "big", nibbles)
        fields = torch.empty(0, dtype=torch.int8)
        return [
            packed,
            torchops.packbits(mask, bitorder="big", dim=None),
            torchops.unpackbits(packed, dim, count, "little"),
            torchops.unpackbits(packed, count=count, dim=dim, bitorder="little", out=torch.empty(0, dtype=torch.uint8)),
            nibbles,
            torchops.pack(x, 2, bitorder="little"),
            torchops.unpack(nibbles, 4, dim, count, "big", True),
            torchops.unpack(nibbles, 4, dim, count, "big", True, fields),
            torchops.unpack(nibbles, bits=4, signed=False),
        ]


@pytest.mark.parametrize("dim, count", [(-1, None), (0, 3), (None, -2), (1, 0)], ids=str)
def test_the_packing_functions_scripted_give_eagers_answers(dim, count):
    mask = torch.tensor([1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0], dtype=torch.bool).reshape(3, 4)
    x = make_tensor([-8, 7, -1, 3, 0, 5, -2, 6, 1, -4, 2, -3], torch.int8).reshape(3, 4)
    scripted = torch.jit.script(Packing())
    _assert_calls_only_the_torchops_operators(scripted.inlined_graph)
    assert_same_tensors(scripted(mask, x, dim, count), Packing()(mask, x, dim, count))


class Search(torch.nn.Module):
    """The search functions' forms beyond TYPED_CALLS': k an int argument, the result's fields
    by name and by unpacking, out= by position (the outs come back themselves), broadcast batch
    dims, uint8 codes against int8 ones (the same bits: `.to(torch.int8)` wraps)."""

    def forward(self, queries: Tensor, database: Tensor, k: int, values: Tensor, indices: Tensor):
        nearest = torchops.hamming_topk(queries, database, k)
        found_values, found_indices = torchops.hamming_topk(queries.to(torch.int8), database, k)
        written = torchops.hamming_topk(queries, database, k, (values, indices))
        distances = torch.empty(0, dtype=torch.int32)
        torchops.hamming_distance(queries, database, distances)
        return [
            nearest.values,
            nearest.indices,
            found_values,
            found_indices,
            written[0],
            written[1],
            distances,
            torchops.hamming_distance(queries.unsqueeze(0), database.to(torch.int8).unsqueeze(1)),
            torchops.hamming_distance(x2=database, x1=queries),
        ]


def _codes(rows: int, seed: int) -> Tensor:
    return torch.randint(0, 256, (rows, 5), dtype=torch.uint8, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("k", [0, 3, 7])
def test_the_search_functions_scripted_give_eagers_answers(k):
    queries, database = _codes(4, 1), torch.cat([_codes(5, 2), _codes(2, 1)])  # ties: database rows 0, 1 of queries
    scripted = torch.jit.script(Search())
    _assert_calls_only_the_torchops_operators(scripted.inlined_graph)
    values, indices = torch.empty(0, dtype=torch.int32), torch.empty(0, dtype=torch.int64)
    results = scripted(queries, database, k, values, indices)
    assert results[4] is values and results[5] is indices  # out= comes back itself
    assert_same_tensors(results, Search()(queries, database, k, torch.empty(0, dtype=torch.int32),
                                          torch.empty(0, dtype=torch.int64)))
    # nearest first, the smaller index first among equal distances
    distances = results[6].tolist()
    expected = [sorted(range(len(row)), key=lambda j: (row[j], j))[:k] for row in distances]
    assert results[1].tolist() == expected


def _topk(queries: Tensor, database: Tensor, k: int):
    return torchops.hamming_topk(queries, database, k)


def test_the_search_functions_scripted_refuse_as_the_op():
    # The op's error, which names the op (here, also the function called).
    with pytest.raises((torch.jit.Error, RuntimeError), match=r"torchops\.hamming_topk: k 8 is out of range"):
        torch.jit.script(_topk)(_codes(2, 1), _codes(7, 2), 8)


def test_the_search_functions_scripted_save_and_load_in_a_fresh_process(tmp_path):
    # The saved model carries HammingTopk's type: it runs where only the operator library is.
    scripted = torch.jit.script(Search())
    # outs of the result's shape: a loaded tensor's storage is not resizable
    inputs = (_codes(4, 1), _codes(6, 2), 2, torch.empty(4, 2, dtype=torch.int32), torch.empty(4, 2, dtype=torch.int64))
    torch.jit.save(scripted, str(tmp_path / "search.pt"))
    torch.save(inputs, str(tmp_path / "inputs.pt"))
    loaded = _run_in_fresh_process(tmp_path / "search.pt", tmp_path / "inputs.pt", tmp_path / "outputs.pt")
    assert_same_tensors(loaded, Search()(*inputs))


# --------------------------------------------------------------------------
# Errors under TorchScript: the typed API's own checks name the function called; an op's
# error names the op (TorchScript has no try/except in which to say it again).
def _int_x_left(x: int, y: Tensor):
    return torchops.bitwise_left_shift(x, y)


def _two_ints(x: int, y: int):
    return torchops.bitshift(x, y, "LEFT")


def test_typed_api_scripted_refuses_two_ints_while_compiling():
    # No signature takes two ints (TorchScript checks the types while compiling).
    with pytest.raises(RuntimeError, match=r"(?s)bitshift.*Expected a value of type 'Tensor' for argument 'x'"):
        torch.jit.script(_two_ints)


def _in_place_into_another(x: Tensor, other: Tensor):
    return torchops.bitwise_right_shift_(x, 1, True, other)


def _float_count(x: Tensor, y: Tensor):
    return torchops.bitwise_right_shift(x, y)


@pytest.mark.parametrize("call, args, message", [
    (_int_x_left, (300, torch.tensor([1], dtype=torch.int8)), r"torchops\.bitwise_left_shift: x = 300 does not fit"),
    (_int_x_left, (-1, torch.tensor([1], dtype=torch.uint8)), r"torchops\.bitwise_left_shift: x = -1 does not fit"),
    (_int_x_left, (256, torch.tensor([1], dtype=torch.uint8)), r"torchops\.bitwise_left_shift: x = 256 does not fit"),
    (_in_place_into_another, (torch.ones(2, dtype=torch.int8), torch.ones(2, dtype=torch.int8)),
     r"torchops\.bitwise_right_shift_: out must be None or x itself"),
    (_float_count, (torch.ones(2, dtype=torch.int8), torch.ones(2)), r"torchops\.bitshift: y must be an integer tensor"),
], ids=["300 int8", "-1 uint8", "256 uint8", "in place into another", "float count"])
def test_typed_api_scripted_errors(call, args, message):
    tensors = [a.clone() for a in args if isinstance(a, Tensor)]
    with pytest.raises((torch.jit.Error, RuntimeError), match=message):
        torch.jit.script(call)(*args)
    assert all(torch.equal(a, b) for a, b in zip([a for a in args if isinstance(a, Tensor)], tensors))


@pytest.mark.parametrize("x, dtype", [(-128, torch.int8), (127, torch.int8), (255, torch.uint8), (0, torch.uint8),
                                      (-2**63, torch.int64), (2**31 - 1, torch.int32)], ids=str)
def test_typed_api_scripted_int_x_at_the_edges_of_y_dtype(x, dtype):
    y = torch.zeros(1, dtype=dtype)
    assert torch.jit.script(_int_x_left)(x, y).tolist() == [x]


# --------------------------------------------------------------------------
# torch.ops.torchops.* under TorchScript
class ScriptedOps(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, f: torch.Tensor):
        return (
            torch.ops.torchops.bitshift(x, y, "LEFT", True),
            torch.ops.torchops.bitshift(x, y, "RIGHT", False),
            torch.ops.torchops.bitshift(x, 257, "right", True),
            torch.ops.torchops.signbit(f),
            torch.ops.torchops.signbit(x),
        )


def test_torch_ops_scripted_saves_and_loads_in_a_fresh_process(tmp_path):
    scripted = torch.jit.script(ScriptedOps())
    x = make_tensor([-128, -3, 0, 5, 127, 64], torch.int8).reshape(2, 3).t()
    y = make_tensor([1, 9, -1, 0, 7, 3], torch.int8).reshape(3, 2)
    f = torch.tensor([-0.0, 0.0, -1.5, float("inf"), float("-inf"), float("nan")])
    eager = ScriptedOps()(x, y, f)
    assert_same_tensors(scripted(x, y, f), eager)
    xs, ys = x.tolist(), y.tolist()
    assert eager[0].tolist() == model.shift_model(xs, ys, torch.int8, "LEFT")
    assert eager[1].tolist() == model.shift_model(xs, ys, torch.int8, "RIGHT", False)
    assert eager[2].tolist() == model.shift_model(xs, 257, torch.int8, "RIGHT")
    assert eager[3].tolist() == [True, False, True, False, True, False]

    torch.jit.save(scripted, str(tmp_path / "ops.pt"))
    torch.save((x, y, f), str(tmp_path / "inputs.pt"))
    assert_same_tensors(_run_in_fresh_process(tmp_path / "ops.pt", tmp_path / "inputs.pt", tmp_path / "outputs.pt"),
                        eager)
