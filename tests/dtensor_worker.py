"""One rank of tests/test_dtensor.py: every torchops op and variant on DTensors.

    python tests/dtensor_worker.py RANK WORLD_SIZE INIT_FILE RESULTS_FILE

For each case of CASES, builds the operands on a device mesh with the case's placements,
runs the call, and checks against the same op on the plain full tensors: the result
(full_tensor(), or each rank's part of it where the result keeps an operand's split made by
DTensor.from_local) exactly equal, with the same dtype and shape; its placements (for in-place
and out=, the tensor written keeps its own); and, where the case says so, no collective
during the call (CommDebugMode). Writes one JSON line per case to RESULTS_FILE, so that
pytest shows the failing case and why, and exits 0 even then (1 only if it could not run).

CASES is plain data, so that pytest can import this file to list them without starting
torch.distributed; placements are written "S0" (Shard(0)), "R" (Replicate()), "P" (Partial()),
"T" (a plain tensor).
The unary ops' cases are made for each op whose schema is f(x) (UNARY), from its declaration.
An op of another schema writes its cases and its calls' overloads: the shift's, the
packing ops' (PACKING: x and the op's other arguments as the case's `args`, _packing_cases),
and the search ops' (SEARCH: x and y their two code operands, k in `args`, _search_cases).
overload_called names the overload each case's call reaches (tests/test_coverage.py reads it).
Imports nothing from tests/ (scripts/sanitize.sh runs the suite with PYTHONSAFEPATH=1).
"""
from __future__ import annotations

import faulthandler
import json
import os
import sys
import traceback
import zlib
from datetime import timedelta

import torch

i8, i32, i64, u8 = torch.int8, torch.int32, torch.int64, torch.uint8  # gloo has no int16 collectives
f32 = torch.float32


def case(name, call, x, y=None, *, expect, out=None, mesh="1d", comms=0, error=None, **options):
    """x, y: (shape, dtype, placements) of a tensor operand, or a Python int for y (or for x,
    with the typed API). expect: the result's placements, or a tuple of acceptable ones.
    out: placements of the out= tensor (default: expect). comms: collectives allowed in the
    call (0: none; None: not checked; ("exactly", n): n, no more, no fewer). error:
    (exception type name, message part) expected. x's placements "T": a plain tensor, not a
    DTensor. rows: y built by DTensor.from_local of these rows on ranks 0 and 1 (consecutive,
    any sizes), declaring y's shape or `declared`; x_rows, x_declared: the same for x (an out
    sharded by rows then takes x's rows too, or torch.chunk's where out_split="chunk"). A
    result that keeps from_local's split is checked rank by rank: each rank's part of it, its
    own rows' (or columns'). frozen: the outs (by position) whose storage cannot be resized;
    a case with `error` checks that the failed call left every out's geometry as it was."""
    return dict(name=name, call=call, x=x, y=y, expect=expect, out=out, mesh=mesh, comms=comms, error=error,
                options=options)


# The ops f(x, out=None) (torchops/_contract.py's UNARY_OPS, read from the registered schemas),
# whose calls are "<op>", "<op>_out", "api_<op>", "api_<op>_out": a new one joins CASES with
# the cases of _unary_cases.
from torchops._contract import UNARY_OPS as UNARY  # noqa: E402  (imports torchops, which loads the library)

# The dtypes gloo's collectives take that a unary op's cases draw from, a float first.
_GLOO_DTYPES = (f32, i32, i8, i64, u8)


def _unary_cases(op):
    """Each call of a unary op on shardings, uneven sizes, a replicated x, a resized out and a
    2-D mesh, on the dtypes its declaration takes (torchops/_contract.py), cycled."""
    from torchops._contract import DECLARATIONS

    dtypes = [d for d in _GLOO_DTYPES if d in DECLARATIONS[op].dtypes]
    assert dtypes, f"{op} takes none of gloo's dtypes {_GLOO_DTYPES}: give tests/dtensor_worker.py a case of it"
    d = [dtypes[k % len(dtypes)] for k in range(4)]
    return [
        case(f"{op}_shard1", op, ((6, 4), d[0], "S1"), expect="S1"),
        case(f"{op}_uneven", op, ((5,), d[1], "S0"), expect="S0"),
        case(f"{op}_replicate", op, ((3, 3), d[2], "R"), expect="R"),
        case(f"{op}_out_shard0", f"{op}_out", ((6, 4), d[0], "S0"), expect="S0"),
        case(f"{op}_out_shard1", f"{op}_out", ((3, 5), d[3], "S1"), expect="S1"),
        # An out of another shape is resized, as ATen resizes it (each rank its shard).
        case(f"{op}_out_resized", f"{op}_out", ((6, 4), d[1], "S1"), expect="S1", out_shape=(2, 4)),
        case(f"api_{op}", f"api_{op}", ((6, 4), d[1], "S0"), expect="S0"),
        case(f"api_{op}_out", f"api_{op}_out", ((4, 6), d[2], "S1"), expect="S1"),
        case(f"mesh2d_{op}", op, ((6, 4), d[0], "S0,R"), expect="S0,R", mesh="2x1"),
    ]


# The ops that pack or unpack along one dim (a Packing declaration), whose calls are "<op>",
# "<op>_out", "api_<op>", "api_<op>_out", with the op's arguments after x as a case's `args`.
from torchops._contract import DECLARATIONS, Packing  # noqa: E402

PACKING = tuple(op for op, declaration in DECLARATIONS.items() if isinstance(declaration, Packing))


def _packing_cases():
    """The packing ops: sharded on a dim other than the packed one (the result keeps it, no
    collective), on the packed dim or flattened by dim=None (replicated first: a shard's end
    need not be a byte's), Partial, out= (an out of another shape resized) and a 2-D mesh.
    Dims of odd sizes, so that the packed dim's last byte is padded."""
    return [
        case("packbits_shard_other", "packbits", ((6, 13), i32, "S0"), expect="S0"),
        case("packbits_shard_packed", "packbits", ((4, 13), i8, "S1"), expect="R", comms=None),
        case("packbits_flattened", "packbits", ((6, 3), i64, "S0"), expect="R", comms=None, args=dict(dim=None)),
        case("packbits_little_dim0", "packbits", ((9, 4), u8, "S1"), expect="S1", args=dict(dim=0, bitorder="little")),
        case("packbits_partial", "packbits", ((6, 9), i32, "P"), expect=("R", "S0"), comms=None),
        case("packbits_out_shard_other", "packbits_out", ((5, 11), i32, "S0"), expect="S0"),
        case("packbits_out_shard_packed", "packbits_out", ((3, 4, 10), i64, "S2"), expect="R", comms=None),
        case("unpackbits_shard_other", "unpackbits", ((6, 3), u8, "S0"), expect="S0", args=dict(count=-5)),
        case("unpackbits_shard_packed", "unpackbits", ((5, 4), u8, "S0"), expect="R", comms=None,
             args=dict(dim=0, bitorder="little")),
        case("unpackbits_flattened", "unpackbits", ((4, 3), u8, "S1"), expect="R", comms=None,
             args=dict(dim=None, count=30)),
        case("unpackbits_out_shard_other", "unpackbits_out", ((3, 6), u8, "S1"), expect="S1", args=dict(dim=0)),
        # An out of another shape is resized, as ATen resizes it (each rank its shard).
        case("unpackbits_out_resized", "unpackbits_out", ((6, 3), u8, "S0"), expect="S0", out_shape=(6, 2)),
        case("unpackbits_out_shard_packed", "unpackbits_out", ((7,), u8, "S0"), expect="R", comms=None,
             args=dict(count=60)),
        case("pack_shard_other", "pack", ((6, 7), i64, "S0"), expect="S0", args=dict(bits=4)),
        case("pack_shard_packed", "pack", ((9, 4), i8, "S0"), expect="R", comms=None, args=dict(bits=2, dim=0)),
        case("pack_flattened", "pack", ((5, 3), i32, "S1"), expect="R", comms=None,
             args=dict(bits=4, dim=None, bitorder="little")),
        case("pack_out_shard_other", "pack_out", ((4, 6, 5), u8, "S1"), expect="S1", args=dict(bits=2, dim=2)),
        case("pack_out_shard_packed", "pack_out", ((2, 9), i32, "S1"), expect="R", comms=None, args=dict(bits=4)),
        case("unpack_shard_other", "unpack", ((4, 6), u8, "S1"), expect="S1",
             args=dict(bits=4, dim=0, count=5, signed=True)),
        case("unpack_shard_packed", "unpack", ((4, 5), u8, "S1"), expect="R", comms=None, args=dict(bits=2)),
        case("unpack_out_shard_other", "unpack_out", ((6, 5), u8, "S0"), expect="S0",
             args=dict(bits=2, count=-3, signed=True)),
        case("unpack_out_shard_packed", "unpack_out", ((3, 5), u8, "S0"), expect="R", comms=None,
             args=dict(bits=4, dim=0, bitorder="little")),
        case("api_packbits", "api_packbits", ((6, 13), i32, "S0"), expect="S0"),
        case("api_unpack_out", "api_unpack_out", ((6, 5), u8, "S0"), expect="S0", args=dict(bits=4, signed=True)),
        case("mesh2d_pack", "pack", ((6, 9), i32, "S0,R"), expect="S0,R", mesh="2x1", args=dict(bits=2)),
        case("mesh2d_unpackbits_shard_packed", "unpackbits", ((6, 5), u8, "S1,R"), expect="R,R", mesh="2x1",
             comms=None),
    ]


# The ops that compare codes (a Search declaration: hamming_distance, hamming_topk), whose calls
# are "<op>", "<op>_out", "api_<op>", "api_<op>_out", x and y their two tensors of codes (x1 and
# x2; queries and database), hamming_topk's k in `args`; "sharded_hamming_topk" calls
# torchops._sharding's function of that name.
from torchops._contract import Search  # noqa: E402

SEARCH = tuple(op for op, declaration in DECLARATIONS.items() if isinstance(declaration, Search))


def _search_cases():
    """hamming_distance sharded on a batch dim, on either operand's rows (the result keeps the
    shard, no collective) or on the bytes (a Partial("sum") result, exact once reduced);
    hamming_topk with the queries sharded by rows (no collective), and the database sharded by
    rows: each rank's search of its shard and one merge of the candidates (two all-gathers of
    (Q, k)), exactly the single-process values and indices, ties (codes of few patterns: the
    smaller index first) and uneven shards, a shard with fewer than k rows or none included:
    torch.chunk's split (distribute_tensor), and any other (DTensor.from_local of each rank's
    rows), whose shape must be the shards' rows in all; and queries of any split, gathered
    with their counts beside a database sharded by rows (each rank's results its own rows'),
    kept sharded beside a replicated one. hamming_distance keeps from_local's split. A
    database sharded on its bytes is gathered. out= (a write that fails leaves the outs as
    they were), the typed API, a 2-D mesh."""
    ties = dict(codes="ties")
    # A database sharded by rows is searched shard by shard: the call's collectives are the
    # two all-gathers of the candidates (values, indices), exactly (gathering the database,
    # which would give the same answer, is one), and one more where the queries are gathered.
    # Queries split otherwise, a rank holding more rows than torch.chunk's split would give it:
    # one more, the gather again, padded to the most rows a rank holds.
    MERGE, MERGE_AND_QUERIES, MERGE_AND_UNEVEN_QUERIES = ("exactly", 2), ("exactly", 3), ("exactly", 4)
    return [
        case("hamming_distance_shard_x1_rows", "hamming_distance", ((6, 16), u8, "S0"), ((5, 16), u8, "R"),
             expect="S0"),
        case("hamming_distance_shard_x2_rows", "hamming_distance", ((3, 8), i8, "R"), ((7, 8), u8, "S0"), expect="S1"),
        case("hamming_distance_shard_batch", "hamming_distance", ((4, 3, 8), i8, "S0"), ((4, 5, 8), u8, "S0"),
             expect="S0"),
        case("hamming_distance_shard_batch_broadcast", "hamming_distance", ((4, 1, 3, 8), u8, "S0"),
             ((2, 5, 8), u8, "R"), expect="S0"),
        case("hamming_distance_shard_bytes", "hamming_distance", ((6, 16), u8, "S1"), ((5, 16), u8, "S1"), expect="P"),
        case("hamming_distance_shard_bytes_uneven", "hamming_distance", ((2, 3, 7), u8, "S2"), ((2, 4, 7), i8, "S2"),
             expect="P"),
        case("hamming_distance_shard_bytes_one_operand", "hamming_distance", ((3, 9), u8, "S1"), ((4, 9), u8, "R"),
             expect=("P", "R", "S0", "S1"), comms=None),
        # A Partial operand is reduced first (codes whose sum is the code, wrapping in uint8).
        case("hamming_distance_partial_x1", "hamming_distance", ((4, 8), u8, "P"), ((3, 8), u8, "R"),
             expect=("R", "S0", "S1"), comms=None),
        case("hamming_distance_out_shard_rows", "hamming_distance_out", ((6, 8), u8, "S0"), ((5, 8), u8, "R"),
             expect="S0"),
        case("hamming_distance_out_resized", "hamming_distance_out", ((3, 8), u8, "R"), ((6, 8), u8, "S0"),
             expect="S1", out_shape=(2, 2)),
        case("hamming_distance_out_replicated_from_bytes", "hamming_distance_out", ((4, 12), u8, "S1"),
             ((5, 12), u8, "S1"), expect="R", comms=None),
        case("hamming_distance_out_wrong_dtype", "hamming_distance_out", ((4, 8), u8, "S0"), ((5, 8), u8, "R"),
             expect="S0", out_dtype=i64, error=("RuntimeError", "out has dtype int64 but the result has dtype int32")),
        case("api_hamming_distance", "api_hamming_distance", ((6, 8), u8, "S0"), ((4, 8), u8, "R"), expect="S0"),
        case("api_hamming_distance_out", "api_hamming_distance_out", ((3, 8), u8, "R"), ((6, 8), u8, "S0"),
             expect="S1"),
        case("mesh2d_hamming_distance", "hamming_distance", ((6, 8), u8, "S0,S1"), ((5, 8), u8, "R,S1"),
             expect="S0,P", mesh="2x1"),
        case("hamming_topk_replicated", "hamming_topk", ((4, 8), u8, "R"), ((9, 8), u8, "R"), expect="R",
             args=dict(k=3)),
        case("hamming_topk_shard_queries", "hamming_topk", ((6, 8), u8, "S0"), ((9, 8), u8, "R"), expect="S0",
             args=dict(k=4)),
        case("hamming_topk_shard_database", "hamming_topk", ((5, 16), u8, "R"), ((20, 16), u8, "S0"), expect="R",
             comms=MERGE, args=dict(k=4)),
        case("hamming_topk_shard_database_ties", "hamming_topk", ((4, 2), u8, "R"), ((11, 2), u8, "S0"), expect="R",
             comms=MERGE, args=dict(k=7), **ties),
        case("hamming_topk_shard_database_k_all", "hamming_topk", ((3, 4), i8, "R"), ((9, 4), u8, "S0"), expect="R",
             comms=MERGE, args=dict(k=9), **ties),
        case("hamming_topk_shard_database_k_past_a_shard", "hamming_topk", ((3, 3), u8, "R"), ((7, 3), u8, "S0"),
             expect="R", comms=MERGE, args=dict(k=5), **ties),
        case("hamming_topk_shard_database_empty_shard", "hamming_topk", ((3, 8), u8, "R"), ((1, 8), u8, "S0"),
             expect="R", comms=MERGE, args=dict(k=1)),
        case("hamming_topk_shard_database_k0", "hamming_topk", ((3, 8), u8, "R"), ((6, 8), u8, "S0"), expect="R",
             args=dict(k=0)),
        case("hamming_topk_shard_database_no_queries", "hamming_topk", ((0, 8), u8, "R"), ((6, 8), u8, "S0"),
             expect="R", args=dict(k=2)),
        # Both sharded by rows: the queries gathered, each rank keeps its rows of the results.
        case("hamming_topk_shard_both", "hamming_topk", ((6, 8), u8, "S0"), ((10, 8), u8, "S0"), expect="S0",
             comms=MERGE_AND_QUERIES, args=dict(k=3), **ties),
        case("hamming_topk_shard_database_bytes", "hamming_topk", ((4, 8), u8, "R"), ((10, 8), u8, "S1"), expect="R",
             comms=None, args=dict(k=3)),
        case("hamming_topk_partial_queries", "hamming_topk", ((4, 8), u8, "P"), ((10, 8), u8, "S0"), expect="R",
             comms=None, args=dict(k=3)),
        case("hamming_topk_out_shard_database", "hamming_topk_out", ((4, 8), u8, "R"), ((12, 8), u8, "S0"),
             expect="R", comms=MERGE, args=dict(k=5), **ties),
        case("hamming_topk_out_shard_both", "hamming_topk_out", ((6, 8), u8, "S0"), ((10, 8), u8, "S0"),
             expect="S0", comms=MERGE_AND_QUERIES, args=dict(k=2)),
        case("hamming_topk_out_shard_queries", "hamming_topk_out", ((6, 8), u8, "S0"), ((10, 8), u8, "R"),
             expect="S0", args=dict(k=2)),
        # An out of another shape is resized, as ATen resizes it (each rank its shard).
        case("hamming_topk_out_resized", "hamming_topk_out", ((5, 8), u8, "S0"), ((9, 8), u8, "S0"), expect="S0",
             comms=None, out_shape=(2, 7), args=dict(k=3)),
        case("hamming_topk_out_wrong_dtype", "hamming_topk_out", ((4, 8), u8, "R"), ((9, 8), u8, "S0"), expect="R",
             out_dtype=i64, comms=0, args=dict(k=3), error=("TypeError", "values must be an int32 tensor, got int64")),
        case("hamming_topk_k_too_large", "hamming_topk", ((4, 8), u8, "R"), ((9, 8), u8, "S0"), expect="R", comms=0,
             args=dict(k=10), error=("IndexError", "k 10 is out of range for a database of 9 codes")),
        # A database of the rows each rank loaded itself (DTensor.from_local, `rows` a rank,
        # not torch.chunk's split): each shard's first row is the rows the shards before it
        # hold, an empty shard and shards of fewer than k rows included; the same collectives.
        case("hamming_topk_uneven_250_50", "hamming_topk", ((6, 4), u8, "R"), ((300, 4), u8, "S0"), expect="R",
             comms=MERGE, args=dict(k=60), rows=(250, 50), **ties),
        case("hamming_topk_uneven_1_299", "hamming_topk", ((5, 4), u8, "R"), ((300, 4), u8, "S0"), expect="R",
             comms=MERGE, args=dict(k=5), rows=(1, 299), **ties),
        case("hamming_topk_uneven_empty_first", "hamming_topk", ((6, 4), u8, "S0"), ((300, 4), u8, "S0"),
             expect="S0", comms=MERGE_AND_QUERIES, args=dict(k=7), rows=(0, 300), **ties),
        case("hamming_topk_uneven_299_1_k_all", "hamming_topk", ((6, 4), u8, "S0"), ((300, 4), u8, "S0"), expect="S0",
             comms=MERGE_AND_QUERIES, args=dict(k=300), rows=(299, 1), **ties),
        case("hamming_topk_uneven_empty_last_k_all", "hamming_topk", ((3, 2), u8, "R"), ((9, 2), u8, "S0"),
             expect="R", comms=MERGE, args=dict(k=9), rows=(9, 0), **ties),
        case("hamming_topk_uneven_no_queries_k_past_a_shard", "hamming_topk", ((0, 2), u8, "R"), ((9, 2), u8, "S0"),
             expect="R", args=dict(k=5), rows=(1, 8)),
        case("hamming_topk_uneven_k0", "hamming_topk", ((3, 2), u8, "R"), ((7, 2), u8, "S0"), expect="R",
             args=dict(k=0), rows=(7, 0)),
        case("hamming_topk_out_uneven", "hamming_topk_out", ((4, 4), u8, "R"), ((12, 4), u8, "S0"), expect="R",
             comms=MERGE, args=dict(k=5), rows=(2, 10), **ties),
        case("sharded_hamming_topk_uneven_plain_queries", "sharded_hamming_topk", ((5, 4), u8, "T"),
             ((300, 4), u8, "S0"), expect="R", comms=MERGE, args=dict(k=60), rows=(50, 250), **ties),
        case("mesh2d_hamming_topk_uneven", "hamming_topk", ((5, 4), u8, "R,R"), ((13, 4), u8, "S0,R"),
             expect="R,R", mesh="2x1", comms=MERGE, args=dict(k=6), rows=(10, 3), **ties),
        case("mesh2d_hamming_topk_uneven_nested_shards", "hamming_topk", ((6, 4), u8, "S0,R"), ((13, 4), u8, "S0,S0"),
             expect="S0,R", mesh="2x1", comms=None, args=dict(k=5), rows=(3, 10), **ties),
        # A global shape other than the shards' rows: refused, on every rank, after the merge.
        case("hamming_topk_uneven_shape_too_large", "hamming_topk", ((4, 4), u8, "R"), ((8, 4), u8, "S0"),
             expect="R", comms=None, args=dict(k=3), rows=(5, 3), declared=(10, 4),
             error=("RuntimeError", "hamming_topk: database's shards must hold the 10 rows of the global shape "
                                    "[10, 4], got 5 + 3 = 8 rows")),
        case("hamming_topk_uneven_shape_too_small", "sharded_hamming_topk", ((4, 4), u8, "T"), ((10, 4), u8, "S0"),
             expect="R", comms=None, args=dict(k=3), rows=(6, 4), declared=(8, 4),
             error=("RuntimeError", "hamming_topk: database's shards must hold the 8 rows of the global shape "
                                    "[8, 4], got 6 + 4 = 10 rows")),
        # hamming_distance keeps the uneven shards: each rank's columns, its rows' distances.
        case("hamming_distance_uneven_x2_rows", "hamming_distance", ((3, 4), u8, "R"), ((9, 4), u8, "S0"),
             expect="S1", rows=(7, 2)),
        # Queries of the rows each rank holds (x_rows, from_local), beside a database sharded by
        # rows (evenly or not): gathered with their counts, each rank's results its own rows'.
        # A rank with no more rows than torch.chunk's split gives it costs one gather (3 + 4),
        # one with more two (5 + 2, 0 + 7, 7 + 0), as each rank sees in the counts.
        case("hamming_topk_uneven_queries_5_2", "hamming_topk", ((7, 4), u8, "S0"), ((12, 4), u8, "S0"),
             expect="S0", comms=MERGE_AND_UNEVEN_QUERIES, args=dict(k=4), x_rows=(5, 2), **ties),
        case("hamming_topk_uneven_queries_0_7", "hamming_topk", ((7, 4), u8, "S0"), ((12, 4), u8, "S0"),
             expect="S0", comms=MERGE_AND_UNEVEN_QUERIES, args=dict(k=5), x_rows=(0, 7), rows=(3, 9), **ties),
        case("hamming_topk_uneven_queries_7_0", "hamming_topk", ((7, 4), u8, "S0"), ((12, 4), u8, "S0"),
             expect="S0", comms=MERGE_AND_UNEVEN_QUERIES, args=dict(k=6), x_rows=(7, 0), rows=(12, 0), **ties),
        case("hamming_topk_uneven_queries_3_4", "hamming_topk", ((7, 4), u8, "S0"), ((12, 4), u8, "S0"),
             expect="S0", comms=MERGE_AND_QUERIES, args=dict(k=4), x_rows=(3, 4), rows=(10, 2), **ties),
        case("hamming_topk_uneven_queries_5_2_k_all", "hamming_topk", ((7, 4), u8, "S0"), ((9, 4), u8, "S0"),
             expect="S0", comms=MERGE_AND_UNEVEN_QUERIES, args=dict(k=9), x_rows=(5, 2), rows=(1, 8), **ties),
        case("hamming_topk_uneven_queries_k0", "hamming_topk", ((7, 4), u8, "S0"), ((12, 4), u8, "S0"),
             expect="S0", args=dict(k=0), x_rows=(5, 2)),
        # Beside a replicated database the queries stay sharded: each rank's rows, no collective.
        case("hamming_topk_uneven_queries_5_2_database_replicated", "hamming_topk", ((7, 4), u8, "S0"),
             ((12, 4), u8, "R"), expect="S0", args=dict(k=4), x_rows=(5, 2), **ties),
        case("hamming_topk_uneven_queries_0_7_database_replicated", "hamming_topk", ((7, 4), u8, "S0"),
             ((12, 4), u8, "R"), expect="S0", args=dict(k=3), x_rows=(0, 7), **ties),
        case("hamming_topk_uneven_queries_7_0_database_replicated", "hamming_topk", ((7, 4), u8, "S0"),
             ((12, 4), u8, "R"), expect="S0", args=dict(k=3), x_rows=(7, 0), **ties),
        # out=: an out of the queries' rows is written as it is; a replicated one gets the rows
        # gathered with their counts (both results in one gather: two for 5 + 2, one for 3 + 4);
        # one of torch.chunk's split is resized to the queries' rows.
        case("hamming_topk_out_uneven_queries", "hamming_topk_out", ((7, 4), u8, "S0"), ((12, 4), u8, "S0"),
             expect="S0", comms=MERGE_AND_UNEVEN_QUERIES, args=dict(k=4), x_rows=(5, 2), rows=(4, 8), **ties),
        case("hamming_topk_out_uneven_queries_database_replicated", "hamming_topk_out", ((7, 4), u8, "S0"),
             ((12, 4), u8, "R"), expect="S0", comms=0, args=dict(k=4), x_rows=(0, 7), **ties),
        case("hamming_topk_out_replicated_uneven_queries", "hamming_topk_out", ((7, 4), u8, "S0"),
             ((12, 4), u8, "R"), expect="R", comms=("exactly", 2), args=dict(k=4), x_rows=(5, 2), **ties),
        case("hamming_topk_out_replicated_uneven_queries_3_4", "hamming_topk_out", ((7, 4), u8, "S0"),
             ((12, 4), u8, "S0"), expect="R", comms=("exactly", 4), args=dict(k=4), x_rows=(3, 4), **ties),
        case("hamming_topk_out_chunk_split_uneven_queries", "hamming_topk_out", ((7, 4), u8, "S0"),
             ((12, 4), u8, "S0"), expect="S0", comms=MERGE_AND_UNEVEN_QUERIES, args=dict(k=4), x_rows=(0, 7),
             out_split="chunk", **ties),
        case("sharded_hamming_topk_uneven_queries", "sharded_hamming_topk", ((5, 4), u8, "S0"), ((10, 4), u8, "S0"),
             expect="S0", comms=MERGE_AND_UNEVEN_QUERIES, args=dict(k=3), x_rows=(0, 5), rows=(4, 6), **ties),
        # (two gathers of the queries, and the merge's two on each mesh dim the database is sharded on)
        case("mesh2d_hamming_topk_uneven_queries", "hamming_topk", ((7, 4), u8, "S0,R"), ((13, 4), u8, "S0,S0"),
             expect="S0,R", mesh="2x1", comms=("exactly", 6), args=dict(k=5), x_rows=(2, 5), rows=(3, 10), **ties),
        # A global shape other than the queries' rows: refused where the counts of all are known.
        case("hamming_topk_uneven_queries_shape_wrong", "hamming_topk", ((8, 4), u8, "S0"), ((10, 4), u8, "S0"),
             expect="S0", comms=None, args=dict(k=3), x_rows=(5, 3), x_declared=(7, 4),
             error=("RuntimeError", "hamming_topk: queries' shards must hold the 7 rows of the global shape "
                                    "[7, 4], got 5 + 3 = 8 rows")),
        case("hamming_topk_out_uneven_queries_shape_wrong", "hamming_topk_out", ((8, 4), u8, "S0"),
             ((10, 4), u8, "R"), expect="R", comms=None, args=dict(k=3), x_rows=(5, 3), x_declared=(9, 4),
             error=("RuntimeError", "hamming_topk: the results' shards (each rank's queries' rows) must hold the 9 "
                                    "rows of the global shape [9, 3], got 5 + 3 = 8 rows")),
        # A write that fails (indices' storage cannot grow) leaves both outs as they were.
        case("hamming_topk_out_write_fails", "hamming_topk_out", ((4, 4), u8, "R"), ((9, 4), u8, "S0"),
             expect="R", comms=None, args=dict(k=3), out_shape=(1, 2), frozen=(1,),
             error=("RuntimeError", "Trying to resize storage that is not resizable")),
        case("api_hamming_topk", "api_hamming_topk", ((5, 8), u8, "R"), ((13, 8), u8, "S0"), expect="R", comms=MERGE,
             args=dict(k=6), **ties),
        case("api_hamming_topk_out", "api_hamming_topk_out", ((6, 8), u8, "S0"), ((13, 8), u8, "S0"), expect="S0",
             comms=MERGE_AND_QUERIES, args=dict(k=4)),
        case("sharded_hamming_topk", "sharded_hamming_topk", ((5, 8), u8, "R"), ((15, 8), u8, "S0"), expect="R",
             comms=MERGE, args=dict(k=6), **ties),
        case("mesh2d_hamming_topk", "hamming_topk", ((5, 8), u8, "R,R"), ((13, 8), u8, "S0,R"), expect="R,R",
             mesh="2x1", comms=MERGE, args=dict(k=4), **ties),
        case("mesh2d_hamming_topk_nested_shards", "hamming_topk", ((6, 8), u8, "S0,R"), ((13, 8), u8, "S0,S0"),
             expect="S0,R", mesh="2x1", comms=None, args=dict(k=4), **ties),
    ]


CASES = [
    # torch.ops.torchops.bitshift, tensor count: shardings, uneven sizes, broadcasting.
    case("shard0", "op", ((6, 4), i32, "S0"), ((6, 4), i32, "S0"), expect="S0"),
    case("shard1_2d", "op", ((4, 6), i32, "S1"), ((4, 6), i32, "S1"), expect="S1", direction="RIGHT"),
    case("shard1_3d_lower_rank_count", "op", ((2, 6, 4), i64, "S1"), ((4,), i64, "R"), expect="S1"),
    case("shard2_3d_count_sharded_on_aligned_dim", "op", ((2, 3, 6), i32, "S2"), ((6,), i32, "S0"), expect="S2",
         direction="RIGHT", arithmetic=False),
    case("replicate", "op", ((6, 4), i32, "R"), ((6, 4), i32, "R"), expect="R"),
    case("uneven_1d", "op", ((7,), i64, "S0"), ((7,), i64, "S0"), expect="S0"),
    case("uneven_2d_shard1", "op", ((3, 5), i32, "S1"), ((5,), i32, "R"), expect="S1", direction="RIGHT"),
    case("count_size1_dim_replicated", "op", ((6, 4), i32, "S0"), ((1, 4), i32, "R"), expect="S0"),
    case("count_size1_on_shard_dim", "op", ((4, 6), i32, "S1"), ((4, 1), i32, "R"), expect="S1", direction="RIGHT"),
    case("count_size1_other_dim_sharded", "op", ((6, 4), i32, "S0"), ((6, 1), i32, "S0"), expect="S0"),
    case("count_sharded_x_replicated", "op", ((6, 4), i32, "R"), ((6, 4), i32, "S0"), expect="S0"),
    case("x_lower_rank_than_count", "op", ((4,), i32, "R"), ((6, 4), i32, "S0"), expect="S0"),
    case("both_sharded_other_dims", "op", ((6, 4), i32, "S0"), ((6, 4), i32, "S1"), expect=("S0", "S1"), comms=None),
    case("count_0d", "op", ((5, 3), i32, "S0"), ((), i32, "R"), expect="S0"),
    case("int8_x_int64_count", "op", ((6, 4), i8, "S0"), ((6, 4), i64, "S0"), expect="S0"),
    case("int8_x_int64_count_broadcast", "op", ((5, 4), i8, "S0"), ((4,), i64, "R"), expect="S0", direction="RIGHT"),
    case("uint8", "op", ((6, 4), u8, "S1"), ((4,), u8, "R"), expect="S1", direction="RIGHT"),
    # Partial operands are reduced first (a shift of a sum is not the sum of shifts).
    case("partial_x", "op", ((6, 4), i32, "P"), ((4,), i32, "R"), expect=("R", "S0"), comms=None),
    # torch.ops.torchops.bitshift, Python-int count (bitshift.Scalar).
    case("scalar_shard0", "op", ((5, 4), i32, "S0"), 3, expect="S0"),
    case("scalar_shard1_out_of_range", "op", ((4, 5), u8, "S1"), 70, expect="S1", direction="RIGHT"),
    case("scalar_replicate", "op", ((4, 5), i8, "R"), -1, expect="R", direction="RIGHT"),
    # In place (bitshift_, bitshift_.Scalar): x keeps its placements.
    case("inplace_shard0", "inplace", ((6, 4), i32, "S0"), ((4,), i32, "R"), expect="S0"),
    case("inplace_shard1_uneven", "inplace", ((4, 5), i32, "S1"), ((4, 5), i32, "S1"), expect="S1",
         direction="RIGHT"),
    case("inplace_int64_x_int8_count", "inplace", ((6, 4), i64, "S0"), ((6, 4), i8, "S0"), expect="S0"),
    case("inplace_replicate", "inplace", ((6, 4), i32, "R"), ((6, 4), i32, "R"), expect="R"),
    case("inplace_replicated_x_gathers_sharded_count", "inplace", ((6, 4), i32, "R"), ((6, 4), i32, "S0"),
         expect="R", comms=None),
    case("inplace_scalar", "inplace", ((5, 3), i32, "S0"), 2, expect="S0", direction="RIGHT", arithmetic=False),
    case("inplace_partial_refused", "inplace", ((6, 4), i32, "P"), 2, expect="P", comms=None,
         error=("RuntimeError", "in-place operations that require placement changes are not supported")),
    # out= (bitshift.out, bitshift.Scalar_out): the out tensor keeps its placements.
    case("out_shard0", "out", ((6, 4), i32, "S0"), ((6, 4), i32, "S0"), expect="S0"),
    case("out_shard1_broadcast", "out", ((3, 5), i32, "S1"), ((5,), i32, "R"), expect="S1", direction="RIGHT"),
    case("out_count_sharded_x_replicated", "out", ((6, 4), i32, "R"), ((6, 4), i32, "S0"), expect="S0"),
    case("out_replicated_from_sharded_x", "out", ((6, 4), i32, "S0"), ((4,), i32, "R"), expect="R", comms=None),
    case("out_mixed_dtypes", "out", ((6, 4), i8, "S0"), ((4,), i64, "R"), expect="S0"),
    case("out_wrong_dtype", "out", ((6, 4), i32, "S0"), ((4,), i32, "R"), expect="S0", out_dtype=i64,
         error=("RuntimeError", "out has dtype int64 but the result has dtype int32")),
    # An out of another shape is resized, as ATen resizes it (each rank its shard).
    case("out_resized", "out", ((6, 4), i32, "S0"), ((4,), i32, "R"), expect="S0", out_shape=(6, 5)),
    case("scalar_out_resized", "out", ((6, 4), i32, "S1"), 2, expect="S1", out_shape=(6, 2)),
    case("scalar_out_shard0", "out", ((7,), i32, "S0"), 1, expect="S0", direction="RIGHT"),
    case("scalar_out_shard1", "out", ((3, 6), i64, "S1"), 5, expect="S1"),
    # The typed API (torchops.*), which calls the ops above.
    case("api_bitshift", "api_bitshift", ((6, 4), i32, "S0"), ((6, 4), i32, "S0"), expect="S0",
         direction="RIGHT", arithmetic=False),
    case("api_bitshift_int_x", "api_bitshift", 5, ((6, 4), i32, "S1"), expect="S1"),
    case("api_left_scalar", "api_left", ((5, 4), i8, "S0"), 3, expect="S0"),
    case("api_right_logical", "api_right", ((4, 6), i32, "S1"), ((6,), i32, "R"), expect="S1", arithmetic=False),
    case("api_left_inplace", "api_left_", ((6, 4), i32, "S0"), ((4,), i32, "R"), expect="S0"),
    case("api_right_inplace_scalar", "api_right_", ((4, 5), i8, "S1"), 2, expect="S1"),
    case("api_bitshift_out", "api_bitshift_out", ((6, 4), i32, "S0"), ((4,), i32, "R"), expect="S0"),
    case("api_right_scalar_out", "api_right_out", ((7,), i64, "S0"), 4, expect="S0", arithmetic=False),
    # A 2-D mesh (2 x 1): placements on each mesh dim.
    case("mesh2d_shard0_replicate", "op", ((6, 4), i32, "S0,R"), ((6, 4), i32, "S0,R"), expect="S0,R", mesh="2x1"),
    case("mesh2d_replicate_shard1", "op", ((4, 6), i32, "R,S1"), ((6,), i32, "R,R"), expect="R,S1", mesh="2x1",
         direction="RIGHT"),
    case("mesh2d_shard0_shard1", "op", ((6, 4), i32, "S0,S1"), ((4,), i32, "R,R"), expect="S0,S1", mesh="2x1"),
    case("mesh2d_inplace", "inplace", ((6, 4), i32, "S0,R"), 3, expect="S0,R", mesh="2x1"),
    case("mesh2d_out", "out", ((4, 6), i32, "R,S1"), ((4, 6), i32, "R,S1"), expect="R,S1", mesh="2x1"),
] + [c for op in UNARY for c in _unary_cases(op)] + _packing_cases() + _search_cases()

CASE_NAMES = [c["name"] for c in CASES]
assert len(set(CASE_NAMES)) == len(CASE_NAMES), "case names must be unique"

# The shift's calls of torch.ops.torchops, by the case's call and whether its count is a Python int.
_BITSHIFT_OVERLOADS = {
    ("op", False): "bitshift.default", ("op", True): "bitshift.Scalar",
    ("inplace", False): "bitshift_.default", ("inplace", True): "bitshift_.Scalar",
    ("out", False): "bitshift.out", ("out", True): "bitshift.Scalar_out",
}


def overload_called(c):
    """The overload of torch.ops.torchops that case `c` calls ("bitshift.Scalar_out"), or None
    for a case of the typed API. run_case calls the overload named here, so that
    tests/test_coverage.py can tell from CASES alone that every overload has a case."""
    call = c["call"]
    if call in UNARY or call in PACKING or call in SEARCH:
        return f"{call}.default"
    if call.removesuffix("_out") in UNARY + PACKING + SEARCH:
        return f"{call.removesuffix('_out')}.out"
    return _BITSHIFT_OVERLOADS.get((call, not isinstance(c["y"], tuple)))

# Float values for signbit: both zeros, infinities, NaNs of either sign.
_FLOATS = [-0.0, 0.0, -1.5, 2.0, float("inf"), float("-inf"), float("nan"), -float("nan"), -3e-40, 7.0]


def _values(shape, dtype, generator):
    if dtype.is_floating_point:
        index = torch.randint(0, len(_FLOATS), shape, generator=generator)
        return torch.tensor(_FLOATS, dtype=dtype)[index]
    # Random bit patterns, wrapped into the dtype.
    return torch.randint(-(2**62), 2**62, shape, generator=generator, dtype=torch.int64).to(dtype)


def _few_values(shape, dtype, generator):
    """Zeros among other values, negative ones too: what packbits and pack tell apart."""
    return torch.randint(-2, 4, shape, generator=generator, dtype=torch.int64).to(dtype)


def _tied_codes(shape, dtype, generator):
    """Codes of few bit patterns (0x00, 0x11, 0x22 a byte): many equal distances, which a
    search orders by index."""
    return (torch.randint(0, 3, shape, generator=generator, dtype=torch.int64) * 0x11).to(dtype)


def _counts(shape, dtype, generator):
    bits = torch.iinfo(dtype).bits
    low = 0 if not dtype.is_signed else -2
    return torch.randint(low, bits + 3, shape, generator=generator, dtype=torch.int64).to(dtype)


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def run_case(c, meshes, rank):
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.debug import CommDebugMode

    import torchops

    ops = torch.ops.torchops
    mesh = meshes[c["mesh"]]
    generator = torch.Generator().manual_seed(zlib.crc32(c["name"].encode()))

    def placements(text):
        return tuple(
            Replicate() if p == "R" else Partial() if p == "P" else Shard(int(p[1:])) for p in text.split(",")
        )

    def operand(spec, make, rows=None, declared=None):
        """(plain full tensor, DTensor) for a (shape, dtype, placements) spec; ints stay ints,
        and "T" placements a plain tensor. rows: each rank's rows of the full tensor (rank r's
        follow rank r - 1's), given to DTensor.from_local with the shape `declared` or the full
        tensor's: the shards of a database (or of queries) each host loaded itself, torch.chunk's split or not."""
        if not isinstance(spec, tuple):
            return spec, spec
        shape, dtype, text = spec
        full = make(shape, dtype, generator)
        if text == "T":
            return full, full
        if rows is not None:
            assert sum(rows) == shape[0], (rows, shape)
            shape = torch.Size(declared or shape)
            local = full[sum(rows[:rank]):sum(rows[:rank + 1])]
            return full, DTensor.from_local(local, mesh, placements(text), run_check=False, shape=shape,
                                            stride=torch.empty(shape, device="meta").stride())
        if text.startswith("P"):  # Partial: the ranks' local tensors sum to full.
            part = _values(shape, dtype, generator)
            local = part if rank == 0 else full - part
            return full, DTensor.from_local(local, mesh, placements(text), run_check=False)
        return full, distribute_tensor(full, mesh, placements(text))

    options = dict(c["options"])
    out_dtype, out_shape = options.pop("out_dtype", None), options.pop("out_shape", None)
    packing_args = options.pop("args", {})  # a packing op's arguments after x (a search op's k)
    direction, arithmetic = options.pop("direction", "LEFT"), options.pop("arithmetic", True)
    codes = _tied_codes if options.pop("codes", None) == "ties" else _values  # a search op's operands
    rows, declared = options.pop("rows", None), options.pop("declared", None)  # y's uneven shards
    x_rows, x_declared = options.pop("x_rows", None), options.pop("x_declared", None)  # x's
    out_split, frozen = options.pop("out_split", None), options.pop("frozen", ())
    call = c["call"]
    if call.startswith(("api_left", "api_right")):  # Paddle's functions: the direction is in the name
        direction = "LEFT" if call.startswith("api_left") else "RIGHT"
    assert not options, options
    unary = call.removeprefix("api_").removesuffix("_out")  # signbit, packbits, ...: f(x, ..., out=None)
    search = unary.removeprefix("sharded_") if unary.removeprefix("sharded_") in SEARCH else None
    x, dx = operand(c["x"], _few_values if unary in ("packbits", "pack") else codes if search else _values, x_rows,
                    x_declared)
    y, dy = operand(c["y"], codes if search else _counts, rows, declared)

    # The answer, from plain tensors.
    if unary in UNARY:
        want = getattr(ops, unary)(x)
    elif unary in PACKING:
        want = getattr(ops, unary)(x, **packing_args)
    elif search and c["error"] is not None and c["error"][0] == "IndexError":
        want = None  # a k the op refuses: no answer (the call must refuse it too)
    elif search:
        want = getattr(ops, search)(x, y, **packing_args)
    else:
        if not isinstance(x, torch.Tensor):
            x = torch.tensor(x, dtype=y.dtype)
        want = ops.bitshift(x, y, direction, arithmetic)

    # The out= tensor (its values are all overwritten); hamming_topk's two, values and indices
    # (out_dtype: values').
    dout = None
    if "out" in call:
        out_text = c["out"] or (c["expect"] if isinstance(c["expect"], str) else c["expect"][0])
        wanted = want if isinstance(want, tuple) else (want,)
        # An out sharded by rows beside queries of from_local's rows: the same rows (as its
        # user would make it), or torch.chunk's split where out_split="chunk" (then resized).
        own_rows = x_rows is not None and "S0" in out_text and out_shape is None and out_split != "chunk"

        def make_out(i, w):
            full = torch.full(out_shape or w.shape, 99, dtype=(out_dtype if i == 0 else None) or w.dtype)
            if own_rows:
                local = full[sum(x_rows[:rank]):sum(x_rows[:rank + 1])]
                return DTensor.from_local(local, mesh, placements(out_text), run_check=False, shape=w.shape,
                                          stride=w.stride())
            out = distribute_tensor(full, mesh, placements(out_text))
            if i in frozen:  # the same, in a storage that cannot be resized (a view of a bytearray's)
                local = out.to_local()
                buffer = torch.frombuffer(bytearray(local.numel() * local.element_size()), dtype=local.dtype)
                out = DTensor.from_local(buffer.view(local.shape).copy_(local), mesh, out.placements,
                                         run_check=False, shape=out.shape, stride=out.stride())
            return out

        dout = tuple(make_out(i, w) for i, w in enumerate(wanted))
        dout = dout if isinstance(want, tuple) else dout[0]
    # Each out's global shape and local sizes, strides and offset: what a failed call leaves.
    outs_before = [(list(o.shape), o.to_local().shape, o.to_local().stride(), o.to_local().storage_offset())
                   for o in (dout if isinstance(dout, tuple) else (dout,) if dout is not None else ())]

    def run():
        called = overload_called(c)
        if called is not None:
            op, name = called.split(".")
            overload = getattr(getattr(ops, op), name)
            if op in UNARY or op in PACKING:
                args = (dx,)
            else:
                args = (dx, dy) if op in SEARCH else (dx, dy, direction, arithmetic)
            if name.endswith("out") and isinstance(dout, tuple):  # hamming_topk.out
                returned = overload(*args, **packing_args, values=dout[0], indices=dout[1])
                check(isinstance(returned, tuple) and returned[0] is dout[0] and returned[1] is dout[1],
                      f"{overload} did not return (values, indices)")
                return dout
            if name.endswith("out"):
                check(overload(*args, **packing_args, out=dout) is dout, f"{overload} did not return out")
                return dout
            returned = overload(*args, **packing_args)
            check(not op.endswith("_") or returned is dx, f"{overload} did not return x")
            return returned
        if call.startswith("api"):
            # The typed API is the compiled binding, which leaves DTensors to its torch.ops twin.
            check(torchops.call_path() == "binding", f"the typed API's call path is {torchops.call_path()}")
        if call == "api_bitshift":
            return torchops.bitshift(dx, dy, direction, arithmetic)
        if call in ("api_left", "api_right"):
            fn = torchops.bitwise_left_shift if call == "api_left" else torchops.bitwise_right_shift
            return fn(dx, dy, is_arithmetic=arithmetic)
        if call in ("api_left_", "api_right_"):
            fn = torchops.bitwise_left_shift_ if call == "api_left_" else torchops.bitwise_right_shift_
            returned = fn(dx, dy, is_arithmetic=arithmetic)
            check(returned is dx, "the in-place function did not return x")
            return dx
        if call in ("api_bitshift_out", "api_right_out"):
            if call == "api_bitshift_out":
                returned = torchops.bitshift(dx, dy, direction, arithmetic, out=dout)
            else:
                returned = torchops.bitwise_right_shift(dx, dy, is_arithmetic=arithmetic, out=dout)
            check(returned is dout, "the out= function did not return out")
            return dout
        if call == "sharded_hamming_topk":
            from torchops._sharding import sharded_hamming_topk

            return sharded_hamming_topk(dx, dy, **packing_args)
        if search and call.endswith("_out"):
            returned = getattr(torchops, search)(dx, dy, **packing_args, out=dout)
            outs = dout if isinstance(dout, tuple) else (dout,)
            check(returned is dout or (isinstance(returned, tuple) and len(returned) == len(outs)
                                        and all(r is o for r, o in zip(returned, outs))),
                  f"{search}(out=) did not return out")
            return dout
        if search:
            return getattr(torchops, search)(dx, dy, **packing_args)
        if call.removeprefix("api_") in UNARY or call.removeprefix("api_") in PACKING:
            return getattr(torchops, unary)(dx, **packing_args)
        if call.startswith("api_") and (unary in UNARY or unary in PACKING):
            check(getattr(torchops, unary)(dx, **packing_args, out=dout) is dout, f"{unary}(out=) did not return out")
            return dout
        raise AssertionError(call)

    with CommDebugMode() as comm:
        if c["error"] is None:
            got = run()
        else:
            kind, words = c["error"]
            try:
                run()
            except Exception as error:
                check(type(error).__name__ == kind and words in str(error),
                      f"expected {kind} with {words!r}, got {type(error).__name__}: {error}")
                outs_after = [(list(o.shape), o.to_local().shape, o.to_local().stride(),
                               o.to_local().storage_offset())
                              for o in (dout if isinstance(dout, tuple) else (dout,) if dout is not None else ())]
                check(outs_after == outs_before, f"the failed call changed its outs' geometry (global shape, local "
                                                 f"sizes, strides, offset): {outs_before} -> {outs_after}")
                return
            raise Failure(f"expected {kind} with {words!r}, got no error")
    counts = {str(op): n for op, n in comm.get_comm_counts().items()}

    # Each result (hamming_topk's values and indices: both sharded as `expect` says).
    gots, wants = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    check(isinstance(gots, tuple) and len(gots) == len(wants), f"{len(wants)} results expected, got {got!r}")
    def own_part(one):
        """The part of the answer this rank holds where a result keeps from_local's split of an
        operand (full_tensor() would take the shards for torch.chunk's), else None (all of it):
        hamming_distance of a database of uneven shards, each rank's columns its own rows'
        distances; hamming_topk of queries of uneven shards, sharded by rows, each rank's rows
        its own queries' nearest."""
        if rows is not None and search == "hamming_distance":
            return (..., slice(sum(rows[:rank]), sum(rows[:rank + 1])))
        if x_rows is not None and any(p.is_shard(0) for p in one.placements):
            return slice(sum(x_rows[:rank]), sum(x_rows[:rank + 1]))
        return None

    fulls, parts = [], []
    for one in gots:
        check(isinstance(one, DTensor), f"the result is a {type(one).__name__}, not a DTensor")
        parts.append(own_part(one))
        # full_tensor() is a collective: every rank gets here before any check can fail.
        fulls.append(one.full_tensor() if parts[-1] is None else one.to_local())
    for one, want, part in zip(gots, wants, parts):  # (full_tensor() checks the others')
        check(part is None or list(one.shape) == list(want.shape),
              f"global shape {list(one.shape)}, expected {list(want.shape)}")
    wants = tuple(w if part is None else w[part] for w, part in zip(wants, parts))
    expect = (c["expect"],) if isinstance(c["expect"], str) else c["expect"]
    for one, full, want in zip(gots, fulls, wants):
        text = ",".join("R" if p.is_replicate() else "P" if p.is_partial() else f"S{p.dim}" for p in one.placements)
        check(text in expect, f"placements {one.placements}, expected {' or '.join(expect)}")
        check(full.dtype == want.dtype, f"dtype {full.dtype}, expected {want.dtype}")
        check(full.shape == want.shape, f"shape {list(full.shape)}, expected {list(want.shape)}")
        if not torch.equal(full, want):
            where = (full != want).nonzero()[:5].tolist()
            raise Failure(f"values differ at {where}: got {full.flatten()[:12].tolist()}, "
                          f"want {want.flatten()[:12].tolist()}")
    if isinstance(c["comms"], tuple):
        check(sum(counts.values()) == c["comms"][1], f"collectives during the call: {counts}")
    elif c["comms"] is not None:
        check(sum(counts.values()) <= c["comms"], f"collectives during the call: {counts}")


def main(argv):
    rank, world_size, init_file, results_file = int(argv[1]), int(argv[2]), argv[3], argv[4]
    import torch.distributed as dist
    from torch.distributed.tensor import init_device_mesh

    faulthandler.enable()  # a crash (SIGABRT, SIGSEGV) shows the Python stack in the test's report
    torch.set_num_threads(1)
    # A hung collective fails the run within this timeout instead of hanging the test.
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=60))
    try:
        meshes = {"1d": init_device_mesh("cpu", (world_size,)), "2x1": init_device_mesh("cpu", (world_size, 1))}
        with open(results_file, "w") as results:
            for c in CASES:
                try:
                    run_case(c, meshes, rank)
                    outcome = {"case": c["name"], "ok": True}
                except Failure as failure:
                    outcome = {"case": c["name"], "ok": False, "error": str(failure)}
                except Exception:
                    outcome = {"case": c["name"], "ok": False, "error": traceback.format_exc()}
                results.write(json.dumps(outcome) + "\n")
                results.flush()
        dist.barrier()  # no rank leaves while another still needs it
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    code = main(sys.argv)
    # Without Python's shutdown, as examples/dtensor_demo.py ends (see docs/deploy.md): a gloo
    # thread still letting go of tensors would abort the process during it.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
