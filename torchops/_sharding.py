"""DTensor support: the sharding rules of every torchops op, for torch.distributed.tensor.DTensor.

The pointwise ops need, for a shard of the output, only the matching shard of each operand,
and nothing else: a DTensor sharded (or replicated) on any dims is shifted on each rank,
without communication, and the result keeps the sharding. `_operand_placement` states the
rule once. The packing ops (packbits, unpackbits, pack, unpack: a `Packing` declaration)
work along one dim: sharded on any other, the same holds; sharded on that one (or flattened
by dim=None), x is redistributed first (`_packing_strategies` says why). The search ops (a
`Search` declaration): hamming_distance keeps a shard of a batch dim or of either operand's
rows, and gives a `Partial("sum")` result for operands sharded on their bytes
(`_distance_strategies`); hamming_topk keeps a shard of the queries' rows, and searches a
database sharded by rows shard by shard, merging the shards' candidates exactly, for any
split of either's rows (`_topk_handler`, `sharded_hamming_topk`). `_rule_of` feeds the rules to DTensor through the
public `torch.distributed.tensor.experimental.register_sharding`, for every overload of
every op (an op needs no code here): in-place and out= ones too, which DTensor runs like its
own (they return the tensor they wrote, as ATen's do), keeping the written tensor's placements.

Importing torch.distributed.tensor takes about half a second, 50 times torchops' own import,
so it is not imported here: the rules are registered as soon as torch.distributed.tensor is
imported (by whoever imports it first, before any DTensor can exist), or right away if it
already is (torchops/_on_import.py). Without torch.distributed (`torch.distributed.is_available()` is False) nothing
is registered.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from torchops import _contract, _fake, _on_import

_DTENSOR_MODULE = "torch.distributed.tensor"


# ----------------------------------------------------------------------------------------
# The rule
def _operand_placement(shape: Sequence[int], out_shape: Sequence[int], out_dim: int | None):
    """The placement an operand of `shape` must have on one mesh dim, for the output (of the
    broadcast shape `out_shape`) to be Shard(out_dim) on that mesh dim, or Replicate() if
    out_dim is None.

    Why these are valid: output element i reads the operand element that broadcasting maps
    it to. Align the shapes on the right, as broadcasting does: output dim d is operand dim
    k = d - (len(out_shape) - len(shape)).
    - If the operand has dim k with the output's size, the map is the identity along it, and
      Shard(k) splits it at the same points as Shard(d) splits the output (equal sizes,
      equal chunks, uneven ones included): each rank holds what its output shard reads.
    - If the operand lacks dim k, or has size 1 there (broadcast), every output index along
      d reads the same operand elements, so each rank needs them all: Replicate.
    - A replicated output needs replicated operands.
    Partial operands are never accepted (a shift of a sum is not the sum of the shifts):
    DTensor reduces them first.
    """
    from torch.distributed.tensor import Replicate, Shard

    if out_dim is None:
        return Replicate()
    k = out_dim - (len(out_shape) - len(shape))
    if k >= 0 and shape[k] == out_shape[out_dim]:
        return Shard(k)
    return Replicate()


def _single_mesh_dim_strategies(out_shape, operands):
    """Every accepted (output placements, operand placements) for one mesh dim: all
    replicated, or the output sharded on any one of its dims. `operands` lists the
    schema's tensor arguments in order, as objects with a `.shape`.
    DTensor takes every combination of these over the mesh dims, drops those that shard a
    dim shorter than the mesh dim, and picks the cheapest for the inputs' placements (when
    they are Shard or Replicate: the one that needs no redistribution). The x an in-place
    overload writes cannot be redistributed: DTensor keeps the strategies that leave its
    placements as they are."""
    from torch.distributed.tensor import Replicate, Shard

    strategies = []
    for out_dim in [None, *range(len(out_shape))]:
        output = [Replicate() if out_dim is None else Shard(out_dim)]
        strategies.append((output, [_operand_placement(t.shape, out_shape, out_dim) for t in operands]))
    return strategies


def _packing_strategies(shape: Sequence[int], packed_dim: int | None):
    """Every accepted (output placements, x placements) of a packing op for one mesh dim,
    x of `shape` packed (or unpacked) along `packed_dim` (None: x flattened first): all
    replicated, or x and the output sharded on the same dim, any but the packed one (the
    output has x's dims, only the packed one's size differs).

    Never sharded on the packed dim, nor at all for dim=None (the output is x flattened, of
    one dim, and the same holds of its pieces): a shard boundary need not fall on a byte
    boundary (per_byte = 8 // bits elements), and NumPy's padding of the last byte is only at
    the end of the whole dim, so packing each shard on its own would pad in the middle.
    Unpacking splits at byte boundaries, but the output's shards are not the input's times
    per_byte (DTensor's uneven shards of n * per_byte elements are not per_byte times those
    of n), and ``count`` trims or pads at the end of the whole dim only. So an x sharded there
    is redistributed, to the accepted strategy DTensor's cost model finds cheapest: replicated
    (an all-gather) for small tensors, sharded on another dim (an all-to-all) for large ones.
    A Partial x is reduced first, as for every op here.
    """
    from torch.distributed.tensor import Replicate, Shard

    strategies = [([Replicate()], [Replicate()])]
    if packed_dim is not None:  # (dim=None: the output has one dim, none of x's)
        strategies += [([Shard(dim)], [Shard(dim)]) for dim in range(len(shape)) if dim != packed_dim]
    return strategies


def _distance_strategies(shape1: Sequence[int], shape2: Sequence[int]):
    """Every accepted (output placements, (x1, x2) placements) of hamming_distance for one mesh
    dim, x1 of `shape1` (..., M, B) and x2 of `shape2` (..., N, B), the output (..., M, N) of
    the broadcast batch shape:

    - all replicated;
    - the output sharded on a batch dim: each operand as `_operand_placement` says of its
      batch dims (sharded on the same dim where it has the output's size there, replicated
      where it broadcasts), as a pointwise op's operands;
    - the output sharded on its rows (M): x1 sharded on its rows, x2 replicated (a row of the
      output is one code of x1 against all of x2), and on its columns (N) the other way round;
    - `Partial("sum")`: x1 and x2 both sharded on their bytes (B, equal in both, so the same
      bytes of every code on each rank). A distance is the sum over the bytes of the bits that
      differ, so each rank's distances over its bytes sum to the distance: exactly, in int32,
      which every backend's all-reduce takes. An operand sharded on its bytes beside a
      replicated one is sliced to the same bytes at no cost, and the result reduced when
      DTensor needs it whole (as for a matmul sharded on its contracted dim); where the
      output must be replicated (a replicated out=), the operands are gathered instead.

    A Partial operand is reduced first, as for every op here (the sum of codes is not a code)."""
    from torch.distributed.tensor import Partial, Replicate, Shard

    batch1, batch2 = tuple(shape1[:-2]), tuple(shape2[:-2])
    batch = tuple(torch.broadcast_shapes(batch1, batch2))
    rows = len(batch)
    strategies = [([Replicate()], [Replicate(), Replicate()])]
    strategies += [([Shard(d)], [_operand_placement(batch1, batch, d), _operand_placement(batch2, batch, d)])
                   for d in range(rows)]
    strategies += [
        ([Shard(rows)], [Shard(len(shape1) - 2), Replicate()]),
        ([Shard(rows + 1)], [Replicate(), Shard(len(shape2) - 2)]),
        ([Partial("sum")], [Shard(len(shape1) - 1), Shard(len(shape2) - 1)]),
    ]
    return strategies


def _topk_strategies():
    """Every accepted ((values, indices) placements, (queries, database) placements) of
    hamming_topk for one mesh dim: all replicated, or the queries sharded on their rows and
    the results with them (a query's k nearest do not depend on the other queries).

    The database is never sharded here: a search of one shard of the database finds that
    shard's k nearest, and the k nearest of the whole database are a merge of every shard's
    (by distance, then index, the indices made global), which no placement of the results
    expresses (it is neither a shard nor a Partial sum of them). So through these strategies
    a database sharded by rows would be gathered (exact, at the cost of the database on every
    rank); `_topk_handler` takes those calls instead and merges the shards' candidates. These
    strategies stay the op's sharding rule: what DTensor's sharding propagation (and a torch
    without the handler's extension point) applies."""
    from torch.distributed.tensor import Replicate, Shard

    return [
        ([Replicate(), Replicate()], [Replicate(), Replicate()]),
        ([Shard(0), Shard(0)], [Shard(0), Replicate()]),
    ]


def _into_out(strategies):
    """The strategies of an out= overload: the out tensors (its last tensor arguments: `out`,
    or hamming_topk's `values` and `indices`) take the outputs' placements. DTensor keeps
    those that leave the outs' placements as they are, and an out of another shape is resized
    on each rank, as ATen resizes it, into the output's global shape."""
    return [(output, operands + output) for output, operands in strategies]


# ----------------------------------------------------------------------------------------
# The rule of an overload, from its kind and its op's declaration (the same for every
# pointwise op, and for every packing op). The arguments come as DTensor's specs (with
# .shape and .tensor_meta) for tensors, values for the rest; a call's arguments have passed
# the fake kernel, which DTensor runs first on the global shapes.
def _packing_rule_of(overload):
    kind = _fake.kind_of(overload)
    op = _contract.op_name(overload)
    declaration = _contract.declaration_of(overload)

    def rule(*args, **kwargs):
        values = _fake.bind(overload, args, kwargs)
        x = values[0]
        # The declaration's check says which dim of x is packed (made non-negative, None).
        example = torch.empty(x.shape, dtype=x.tensor_meta.dtype, device="meta")
        strategies = _packing_strategies(x.shape, declaration.check(op, example, *values[1:]).dim)
        return _into_out(strategies) if kind == "out" else strategies

    return rule


#: Each search op's strategies, from the shapes of its two tensors of codes.
_SEARCH_STRATEGIES = {
    "hamming_distance": _distance_strategies,
    "hamming_topk": lambda queries_shape, database_shape: _topk_strategies(),
}


def _search_rule_of(overload):
    kind = _fake.kind_of(overload)
    name = overload._schema.name.removeprefix("torchops::")
    if name not in _SEARCH_STRATEGIES:
        raise KeyError(f"torchops.{name} is a search op without a sharding rule: add it to torchops/_sharding.py's "
                       "_SEARCH_STRATEGIES")
    strategies_of = _SEARCH_STRATEGIES[name]

    def rule(*args, **kwargs):
        first, second = _fake.bind(overload, args, kwargs)[:2]
        strategies = strategies_of(first.shape, second.shape)
        return _into_out(strategies) if kind == "out" else strategies

    return rule


def _rule_of(overload):
    if isinstance(_contract.declaration_of(overload), _contract.Packing):
        return _packing_rule_of(overload)
    if isinstance(_contract.declaration_of(overload), _contract.Search):
        return _search_rule_of(overload)
    kind = _fake.kind_of(overload)
    op = _contract.op_name(overload)
    names = _fake.argument_names(overload)

    def rule(*args, **kwargs):
        operands = {name: a for name, a in zip(names, args) if hasattr(a, "shape")}
        shape = operands["x"].shape if kind == "inplace" else _fake.broadcast_shape(op, operands)
        strategies = _single_mesh_dim_strategies(shape, list(operands.values()))
        return _into_out(strategies) if kind == "out" else strategies

    return rule


# ----------------------------------------------------------------------------------------
# hamming_topk on a database sharded by rows: each shard's search, then one exact merge.
def _is_row_shard(placement) -> bool:
    """Shard(0) itself (not a _StridedShard, whose rows on a rank are not one range)."""
    from torch.distributed.tensor import Shard

    return type(placement) is Shard and placement.dim == 0


def _as_dtensor(op_call, tensor, mesh, implicit: bool):
    """A plain tensor beside DTensors: replicated where DTensor's own dispatch would take it
    so (implicit replication, or `implicit`), else DTensor's own refusal."""
    from torch.distributed.tensor import DTensor, Replicate

    if isinstance(tensor, DTensor):
        return tensor
    if implicit or DTensor._op_dispatcher._allow_implicit_replication:
        return DTensor.from_local(tensor, mesh, [Replicate()] * mesh.ndim, run_check=False)
    raise RuntimeError(
        f"{op_call}: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before calling "
        "distributed operators! Please see https://docs.pytorch.org/docs/main/distributed.tensor.html"
        "#mixed-tensor-and-dtensor-operations for more details."
    )


def _largest_shard(rows: int, mesh, mesh_dims) -> int:
    """The most rows a rank holds of `rows` split by torch.chunk along `mesh_dims` (nested,
    as DTensor splits a dim sharded on several mesh dims): the first chunk at each level."""
    for mesh_dim in mesh_dims:
        rows = -(-rows // mesh.size(mesh_dim))
    return rows


def _block_of_rank(mesh, mesh_dims) -> int:
    """This rank's place among the ranks along `mesh_dims`, in the order of their coordinates
    on those mesh dims, the first mesh dim outermost (DTensor's order of a dim sharded on
    several): the order of `_gather_rows`' blocks and of `_merge_candidates`'."""
    position = 0
    for mesh_dim in mesh_dims:
        position = position * mesh.size(mesh_dim) + mesh.get_local_rank(mesh_dim)
    return position


def _all_gather(tensor, dim: int, mesh, mesh_dim: int):
    """The ranks' `tensor`s along `mesh_dim`, concatenated along `dim` (the functional
    collective: all_gather_single where the release has it, all_gather_tensor before)."""
    import torch.distributed._functional_collectives as funcol

    gather = getattr(funcol, "all_gather_single", None) or funcol.all_gather_tensor
    return gather(tensor, dim, (mesh, mesh_dim))


def _gather_rows(tensors, mesh, mesh_dims, largest: int):
    """Every rank's rows of `tensors` (2-D, the same number of rows in each on a rank, any
    number on each rank) along `mesh_dims`, concatenated in `_block_of_rank`'s order; and the
    ranks' row counts, in that order.

    DTensor's own gather (redistribute from Shard(0)) takes the shards to be torch.chunk's
    split of the global shape, which from_local's need not be. Here each rank's rows travel
    with their count: the rows as bytes (a row of each tensor side by side), cut or padded to
    `largest` rows (the largest shard of torch.chunk's split, `_largest_shard`), and the
    count in 8 more bytes; one all-gather per mesh dim, the last first, so that the blocks
    come in the order of the coordinates. The padding is dropped by the counts. Where a rank
    holds more than `largest` rows (a split other than torch.chunk's), every rank of the
    gather sees it in the counts, and all gather again, padded to the largest count: one
    all-gather per mesh dim more, only for such splits."""
    rows = tensors[0].shape[0]
    parts = [t.contiguous().view(torch.uint8) for t in tensors]  # (rows, bytes of a row) each
    widths = [part.shape[1] for part in parts]
    data = torch.cat(parts, 1)
    width = data.shape[1]
    count = torch.tensor([rows], dtype=torch.int64, device=data.device).view(torch.uint8)

    def gather(padded):
        block = torch.cat([data[:padded].flatten(), data.new_zeros(max(padded - rows, 0) * width), count])
        for mesh_dim in reversed(mesh_dims):
            block = _all_gather(block, 0, mesh, mesh_dim)
        blocks = block.reshape(-1, padded * width + 8)
        return blocks, _bytes_as(blocks[:, padded * width:], torch.int64).flatten().tolist()

    blocks, counts = gather(largest)
    if max(counts) > largest:
        largest = max(counts)
        blocks, counts = gather(largest)
    held = torch.arange(largest, device=data.device) < torch.tensor(counts, device=data.device)[:, None]
    data = blocks[:, :largest * width].reshape(len(counts), largest, width)[held]
    gathered, start = [], 0
    for tensor, part_width in zip(tensors, widths):
        gathered.append(_bytes_as(data[:, start:start + part_width], tensor.dtype))
        start += part_width
    return gathered, counts


def _bytes_as(data, dtype):
    """Rows of bytes as rows of `dtype`, in a copy of their own (view takes a wider dtype only
    at an offset and strides its elements divide, which a slice of a row need not have)."""
    if data.shape[1] == 0:
        return torch.empty((data.shape[0], 0), dtype=dtype, device=data.device)
    return data.clone(memory_format=torch.contiguous_format).view(dtype)


def _check_shard_rows(op: str, shards: str, shape, counts) -> None:
    """Refuses `shards` ("database's shards") whose rows are not the global shape's (from_local's
    shape= says one thing, the ranks hold another): on every rank of the gather alike, as all
    hold the same counts."""
    torch._check(sum(counts) == shape[0],
                 lambda: f"{op}: {shards} must hold the {shape[0]} rows of the global shape {list(shape)}, "
                         f"got {' + '.join(map(str, counts))} = {sum(counts)} rows (give DTensor.from_local the "
                         "shape of the rows the ranks hold)")


def _merge_candidates(values, indices, rows: int, k: int, mesh, mesh_dims):
    """The k nearest of every rank's candidates along `mesh_dims`, nearest first and the
    smaller index first among equal distances, as the op orders them; and the rows of each
    rank's shard, in the database's order (None where nothing is merged).

    Each rank holds its shard's min(k, rows) nearest of each of its Q queries, their indices
    local to its shard of `rows` codes; the ranks along `mesh_dims` hold the same queries and
    consecutive ranges of the database's rows, in the order of their coordinates on those
    mesh dims, the first mesh dim outermost (DTensor's order of a dim sharded on several).
    The ranges may have any sizes (from_local does not hold its shards to torch.chunk's), so
    each rank's row count travels with its candidates, one more column of the indices, and a
    shard's first row is the sum of the counts before it: exact for any split, with no
    collective of its own. The (Q, k) candidates are gathered (one all-gather of the values
    and one of the indices per mesh dim, Q * (k * 12 + 8) bytes a rank), the last mesh dim
    first, so that the gathered blocks come in the database's order; then sorted by index,
    then stably by distance: the order (distance, index). Every one of the k nearest of the
    whole database is among its shard's k nearest (a shard's order is the whole order
    restricted to its codes), so the first k are exact, as long as the shards hold k codes
    in all (the caller checks their counts)."""
    queries, found = values.shape
    if queries == 0 or k == 0:  # nothing to merge (every rank of a gather has the same Q and k)
        return values.new_empty((queries, k)), indices.new_empty((queries, k)), None  # (not (Q, found))
    values = torch.cat([values, values.new_zeros((queries, k - found))], 1)
    indices = torch.cat([indices, indices.new_zeros((queries, k - found)), indices.new_full((queries, 1), rows)], 1)
    for mesh_dim in reversed(mesh_dims):
        values = _all_gather(values.contiguous(), 1, mesh, mesh_dim)
        indices = _all_gather(indices.contiguous(), 1, mesh, mesh_dim)
    values, indices = values.reshape(queries, -1, k), indices.reshape(queries, -1, k + 1)
    counts = indices[0, :, k]
    # The columns past a shard's codes (it has fewer than k) take a distance and an index no code has: they sort last.
    found = torch.arange(k, device=counts.device) < counts.clamp(max=k)[:, None]
    values = values.where(found, torch.iinfo(values.dtype).max).flatten(1)
    indices = (indices[:, :, :k] + (counts.cumsum(0) - counts)[:, None]).where(found, torch.iinfo(indices.dtype).max)
    indices = indices.flatten(1)
    order = indices.argsort(dim=1, stable=True)
    values, indices = values.gather(1, order), indices.gather(1, order)
    order = values.argsort(dim=1, stable=True)[:, :k]
    return values.gather(1, order), indices.gather(1, order), counts.tolist()


def _write_outs(op: str, outs, results, inputs) -> None:
    """Writes each result into its out on each rank, as the op writes an out: no out may
    overlap an input or the other out, an out of another shape is resized (with ATen's
    warning when it had elements), one of the result's shape keeps its strides.

    An out keeps its own placements, as for every out= overload here. An out of the results'
    placements takes each rank's rows as they are (the queries' split, any). Otherwise the
    results are made replicated first: their rows gathered with their counts
    (`_gather_rows`: one all-gather per mesh dim they are sharded by rows on, for both
    results together; exact for any split, where DTensor's redistribute would take the rows
    for torch.chunk's split), then DTensor takes each rank's part of the out's placements
    from them (a local slice, no collective). A failure while writing (the allocation of a
    resize, the copy) leaves every out with the sizes, strides and offset it had, and its
    global shape, before it is raised."""
    import warnings

    from torch.distributed.tensor import DTensor, Replicate

    written = [t.to_local() if isinstance(t, DTensor) else t for t in inputs]
    for out in outs:
        local = out._local_tensor
        for tensor in written:
            _fake._check_no_overlap(op, local, tensor)
        written.append(local)
    moved = [i for i, (out, result) in enumerate(zip(outs, results))
             if tuple(out.placements) != tuple(result.placements)]
    if moved:
        mesh = results[0].device_mesh
        shape = results[0].shape
        row_dims = [d for d, p in enumerate(results[0].placements) if _is_row_shard(p)]
        locals_ = [results[i].to_local() for i in moved]
        if row_dims:
            locals_, counts = _gather_rows(locals_, mesh, row_dims, _largest_shard(shape[0], mesh, row_dims))
            _check_shard_rows(op, "the results' shards (each rank's queries' rows)", shape, counts)
        results = list(results)
        for i, local in zip(moved, locals_):
            replicated = DTensor.from_local(local, mesh, [Replicate()] * mesh.ndim, run_check=False, shape=shape,
                                            stride=results[i].stride())
            results[i] = replicated.redistribute(outs[i].device_mesh, outs[i].placements)
    geometry = []  # each out's local sizes, strides and offset before the writes
    try:
        for out, result in zip(outs, results):
            local, value = out._local_tensor, result.to_local()
            geometry.append((local, local.size(), local.stride(), local.storage_offset()))
            if local.shape != value.shape:
                if local.numel():
                    warnings.warn(  # ATen's resize_output's, which the op gives on one process
                        f"An output with one or more elements was resized since it had shape {list(local.shape)}, "
                        f"which does not match the required output shape {list(value.shape)}. This behavior is "
                        "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                        "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                        "elements with t.resize_(0).",
                        stacklevel=4,
                    )
                # resize_ sets the new sizes before it allocates: a failed allocation leaves them.
                local.resize_(value.shape)
        for out, result in zip(outs, results):
            out._local_tensor.copy_(result.to_local())
    except BaseException:
        for local, size, stride, offset in geometry:
            local.as_strided_(size, stride, offset)
        raise
    for out, result in zip(outs, results):
        if tuple(out._spec.shape) != tuple(result._spec.shape):
            out._spec = result._spec  # the out's global shape is the result's (as DTensor's own out= path does)


def _topk_handler(op_call, args, kwargs, implicit: bool = False):
    """hamming_topk (and its out=) on DTensors, in place of DTensor's sharding propagation.

    1. The op's checks, on meta stand-ins of the global tensors: the op's errors, before any
       collective.
    2. On each mesh dim: the database stays sharded where it is sharded by rows (Shard(0)),
       and is replicated elsewhere (a shard of its bytes, or a Partial); the queries stay
       sharded by rows where they are, and are replicated elsewhere, by DTensor's
       redistribute (its all-gather of the bytes, or all-reduce of a Partial, moves what each
       rank holds of the same rows: exact for any split of the rows).
    3. Where both are sharded by rows, each rank needs every query against its shard: the
       queries, small beside a database, are gathered with their row counts
       (`_gather_rows`: one all-gather per such mesh dim, one more where a rank holds more
       rows than torch.chunk's split gives it), so any split of them is exact; a global shape
       that disagrees with their rows is refused where every shard's count is known.
    4. Each rank searches its shard for min(k, its rows) nearest codes (the op itself, on the
       local tensors).
    5. Where the database is sharded, the candidates are merged (`_merge_candidates`), each
       shard's indices made global by the rows the shards before it hold: any split of the
       rows, uneven or empty shards included, and a global shape that disagrees with the
       shards' rows refused (where there are candidates: no queries or k = 0 merge nothing).
    6. The results are sharded as the queries were (Shard(0) where they were, replicated
       elsewhere), each rank's local results its own queries' (where they were gathered in
       3., its rows of the merged results, by the counts: no collective), the global shape
       (the queries' rows, k).

    Without a database sharded by rows, that is the strategies of `_topk_strategies`, with
    no merge. The result is the single-process one: the same values and indices, exactly,
    for any split of the queries' and the database's rows. Registered in DTensor's table of
    custom op handlers (`_register`), the extension point through which torch's own argmax,
    argmin, min.dim and max.dim merge their shards' answers
    (torch/distributed/tensor/_nonlinear_redux.py); `implicit`: plain tensors are replicated
    (`sharded_hamming_topk`)."""
    from torch.distributed.tensor import DTensor, Replicate, Shard

    op = _contract.op_name(op_call)
    queries, database, k = _fake.bind(op_call, args, kwargs)
    out_names = [a.name for a in op_call._schema.arguments if a.is_out]
    outs = [kwargs[name] for name in out_names]
    mesh = next(t.device_mesh for t in (queries, database, *outs) if isinstance(t, DTensor))
    queries, database = (_as_dtensor(op_call, t, mesh, implicit) for t in (queries, database))
    outs = [_as_dtensor(op_call, t, mesh, implicit) for t in outs]
    torch._check(all(t.device_mesh == mesh for t in (queries, database, *outs)),
                 lambda: f"{op}: all the DTensors must be on one device mesh")
    torch._check(not any(p.is_partial() for out in outs for p in out.placements),
                 lambda: f"{op}: an out cannot be Partial (the results are not a sum of the ranks' parts); pass outs "
                         "sharded or replicated")

    def meta(t):
        return torch.empty(t.shape, dtype=t.dtype, device="meta")

    call_k = int(k)
    op_call(meta(queries), meta(database), call_k, **{name: meta(t) for name, t in zip(out_names, outs)})

    row_dims = [d for d, p in enumerate(database.placements) if _is_row_shard(p)]
    query_rows = [d for d, p in enumerate(queries.placements) if _is_row_shard(p)]
    gathered = [d for d in query_rows if d in row_dims]
    final = [Shard(0) if d in query_rows else Replicate() for d in range(mesh.ndim)]
    inputs = (queries, database)
    queries = queries.redistribute(mesh, final)
    database = database.redistribute(mesh, [Shard(0) if d in row_dims else Replicate() for d in range(mesh.ndim)])
    local_queries, local_database = queries.to_local(), database.to_local()
    own_rows = None  # where the queries are gathered: this rank's rows of them
    if gathered and call_k:  # (k = 0: every rank's results are its own queries' empty rows)
        (local_queries,), counts = _gather_rows([local_queries], mesh, gathered,
                                                _largest_shard(queries.shape[0], mesh, query_rows))
        if gathered == query_rows:  # every shard's count is here
            _check_shard_rows(op, "queries' shards", queries.shape, counts)
        start = sum(counts[:_block_of_rank(mesh, gathered)])
        own_rows = slice(start, start + queries.to_local().shape[0])
    values, indices = torch.ops.torchops.hamming_topk.default(
        local_queries, local_database, min(call_k, local_database.shape[0]))
    if row_dims:
        values, indices, counts = _merge_candidates(values, indices, local_database.shape[0], call_k, mesh, row_dims)
        # The shards' rows are what the indices count, so a global shape that says otherwise
        # (from_local's shape=) is refused.
        if counts is not None:
            _check_shard_rows(op, "database's shards", database.shape, counts)
    if own_rows is not None:  # (a copy: the view would hold every rank's rows)
        values, indices = values[own_rows].clone(), indices[own_rows].clone()
    shape = (queries.shape[0], call_k)
    results = [DTensor.from_local(t, mesh, final, run_check=False, shape=shape, stride=(call_k, 1))
               for t in (values, indices)]
    if not outs:
        return tuple(results)
    _write_outs(op, outs, results, inputs)
    return tuple(outs)


def sharded_hamming_topk(queries, database, k: int):
    """``torchops.hamming_topk(queries, database, k)`` of a database sharded by rows, exactly
    the single-process result, without gathering the database: each rank searches its shard
    (``to_local()``), the ranks' ``(Q, k)`` candidates are all-gathered with their shards'
    row counts, made global by the rows of the shards before them, and merged by (distance,
    index). The shards may hold any number of rows (``DTensor.from_local`` of the rows each
    rank loaded, ``shape=`` their total); a global shape that disagrees is refused.

    ``database``: a DTensor, any placements (Shard(0) on a mesh dim is searched shard by shard,
    anything else is replicated first). ``queries``: a DTensor on the same mesh, or a plain
    tensor of the same value on every rank (taken as replicated); sharded by rows, any split
    of them (``DTensor.from_local`` of each rank's queries, as for the database). Returns
    ``(values, indices)`` as DTensors, sharded as the queries are by rows (each rank's rows
    its own queries'), replicated otherwise.

    It is what ``torch.ops.torchops.hamming_topk`` (and ``torchops.hamming_topk``) do to
    DTensors already, where DTensor has its table of custom op handlers (torch 2.13 has it);
    on a torch without it, the op's sharding rule gathers the database first (exact too, at
    the cost of the whole database on every rank), and this function is the sharded search."""
    return _topk_handler(torch.ops.torchops.hamming_topk.default, (queries, database, k), {}, implicit=True)


# ----------------------------------------------------------------------------------------
# Registration
_registered = False


def _register() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    from torch.distributed.tensor.experimental import register_sharding

    for overload in _contract.OVERLOADS:
        register_sharding(overload)(_rule_of(overload))
    _decide_by_out([overload for overload in _contract.OVERLOADS if torch.Tag.out in overload.tags])
    _handle_topk([overload for overload in _contract.OVERLOADS
                  if overload.overloadpacket is torch.ops.torchops.hamming_topk])


def _handle_topk(overloads) -> None:
    """Puts `_topk_handler` in DTensor's table of custom op handlers for hamming_topk's
    overloads: DTensor calls it instead of propagating the sharding rule (torch's own
    argmax, min.dim, ... are there, and loss_parallel and context parallel add theirs to it).
    The table is DTensor's internal (as is what the handler uses of a DTensor beside its
    public API: for out=, the local tensor and spec that DTensor's own out= path sets); on a
    release without the table the sharding rule (`_topk_strategies`: the database gathered)
    applies, and `sharded_hamming_topk` searches a sharded database."""
    from torch.distributed.tensor import DTensor

    handlers = getattr(getattr(DTensor, "_op_dispatcher", None), "_custom_op_handlers", None)
    if isinstance(handlers, dict):
        for overload in overloads:
            handlers[overload] = _topk_handler


def _decide_by_out(overloads) -> None:
    """Makes DTensor's cached sharding decision for an out= overload depend on the out
    tensors' placements too (``out``; hamming_topk's ``values`` and ``indices``), as it does
    for PyTorch's own out= ops (their ``static_kwargkey=["out"]``). register_sharding keys
    the decision on the positional tensors and the int arguments only, so a call would reuse
    the decision made for an out of other placements and redistribute its out. This reaches
    into DTensor's sharding propagator (DTensor's internals: this, and hamming_topk's handler,
    `_handle_topk`); a release without it keeps register_sharding's key."""
    import dataclasses

    from torch.distributed.tensor import DTensor

    dispatcher = getattr(DTensor, "_op_dispatcher", None)
    schema_infos = getattr(getattr(dispatcher, "sharding_propagator", None), "op_to_schema_info", None)
    if not isinstance(schema_infos, dict):
        return
    for overload in overloads:
        info = schema_infos.get(overload)
        outs = [a.name for a in overload._schema.arguments if a.is_out]
        missing = [name for name in outs if name not in (info.static_kwargkey or ())] if info is not None else []
        if missing:
            static = [*(info.static_kwargkey or ()), *missing]
            schema_infos[overload] = dataclasses.replace(info, static_kwargkey=static)


def install() -> None:
    """Registers the rules now if torch.distributed.tensor is loaded, else when it is."""
    if torch.distributed.is_available():
        _on_import.call_when_imported(_DTENSOR_MODULE, _register, "the DTensor sharding rules")


install()
