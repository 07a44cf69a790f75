"""DTensor support: the sharding rules of every torchops op, for torch.distributed.tensor.DTensor.

The pointwise ops need, for a shard of the output, only the matching shard of each operand,
and nothing else: a DTensor sharded (or replicated) on any dims is shifted on each rank,
without communication, and the result keeps the sharding. `_operand_placement` states the
rule once. The packing ops (packbits, unpackbits, pack, unpack: a `Packing` declaration)
work along one dim: sharded on any other, the same holds; sharded on that one (or flattened
by dim=None), x is redistributed first (`_packing_strategies` says why). `_rule_of` feeds the rules to DTensor through the
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


def _into_out(strategies):
    """The strategies of an out= overload: the out tensor (its last tensor argument) takes
    the output's placements. DTensor keeps those that leave out's placements as they are,
    and an out of another shape is resized on each rank, as ATen resizes it, into the
    output's global shape."""
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


def _rule_of(overload):
    if isinstance(_contract.declaration_of(overload), _contract.Packing):
        return _packing_rule_of(overload)
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


def _decide_by_out(overloads) -> None:
    """Makes DTensor's cached sharding decision for an out= overload depend on the out
    tensor's placements too, as it does for PyTorch's own out= ops (their
    ``static_kwargkey=["out"]``). register_sharding keys the decision on the positional
    tensors and the int arguments only, so a call would reuse the decision made for an out
    of other placements and redistribute its out. This reaches into DTensor's sharding
    propagator, its one internal use here; a release without it keeps register_sharding's key."""
    import dataclasses

    from torch.distributed.tensor import DTensor

    dispatcher = getattr(DTensor, "_op_dispatcher", None)
    schema_infos = getattr(getattr(dispatcher, "sharding_propagator", None), "op_to_schema_info", None)
    if not isinstance(schema_infos, dict):
        return
    for overload in overloads:
        info = schema_infos.get(overload)
        if info is not None and "out" not in (info.static_kwargkey or ()):
            schema_infos[overload] = dataclasses.replace(info, static_kwargkey=[*(info.static_kwargkey or ()), "out"])


def install() -> None:
    """Registers the rules now if torch.distributed.tensor is loaded, else when it is."""
    if torch.distributed.is_available():
        _on_import.call_when_imported(_DTENSOR_MODULE, _register, "the DTensor sharding rules")


install()
