"""DTensor support: the sharding rules of every torchops op, for torch.distributed.tensor.DTensor.

The ops are pointwise, so a shard of the output needs only the matching shard of each
operand, and nothing else: a DTensor sharded (or replicated) on any dims is shifted on
each rank, without communication, and the result keeps the sharding. `_operand_placement`
states the rule once; everything else here feeds it to DTensor:

- the functional and in-place overloads through the public
  `torch.distributed.tensor.experimental.register_sharding`;
- the out= overloads through `torch.library.register_torch_dispatch`, because DTensor
  cannot dispatch them: for an out-variant op, DTensor returns the out tensor, but ours
  return `()`, and PyTorch refuses that ("Expected __torch_dispatch__ for
  torchops::bitshift.out to return None but it returned something else instead"), after
  having set the out DTensor's spec to None. `_out_variant` runs them itself, by the same rule.

Importing torch.distributed.tensor takes about half a second, 50 times torchops' own import,
so it is not imported here: the rules are registered as soon as torch.distributed.tensor is
imported (by whoever imports it first, before any DTensor can exist), or right away if it
already is (torchops/_on_import.py). Without torch.distributed (`torch.distributed.is_available()` is False) nothing
is registered.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from torchops import _contract, _on_import

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


def _single_mesh_dim_strategies(out_shape, operands, *, with_output: bool):
    """Every accepted (output placements, operand placements) for one mesh dim: all
    replicated, or the output sharded on any one of its dims. `operands` lists the
    schema's tensor arguments in order (the out= tensor too), as objects with a `.shape`.
    DTensor takes every combination of these over the mesh dims, drops those that shard a
    dim shorter than the mesh dim, and picks the cheapest for the inputs' placements (when
    they are Shard or Replicate: the one that needs no redistribution)."""
    from torch.distributed.tensor import Replicate, Shard

    strategies = []
    for out_dim in [None, *range(len(out_shape))]:
        output = [Replicate() if out_dim is None else Shard(out_dim)] if with_output else []
        strategies.append((output, [_operand_placement(t.shape, out_shape, out_dim) for t in operands]))
    return strategies


# ----------------------------------------------------------------------------------------
# Functional and in-place overloads: DTensor's sharding propagation, fed by the rule.
# The arguments come as DTensor's specs (with .shape) for tensors, values for the rest.
def _bitshift(x, y, direction=None, arithmetic=True):
    return _single_mesh_dim_strategies(torch.broadcast_shapes(x.shape, y.shape), [x, y], with_output=True)


def _bitshift_scalar(x, y, direction=None, arithmetic=True):
    return _single_mesh_dim_strategies(x.shape, [x], with_output=True)


def _bitshift_inplace(x, y, direction=None, arithmetic=True):
    # No output entry: the op returns (). DTensor keeps only the strategies that leave x's
    # placements as they are (x cannot be redistributed in place).
    return _single_mesh_dim_strategies(x.shape, [x, y], with_output=False)


def _bitshift_scalar_inplace(x, y, direction=None, arithmetic=True):
    return _single_mesh_dim_strategies(x.shape, [x], with_output=False)


def _signbit(x):
    return _single_mesh_dim_strategies(x.shape, [x], with_output=True)


# ----------------------------------------------------------------------------------------
# out= overloads: run by hand with the same rule. The out DTensor keeps its placements:
# the operands are redistributed to the placements the rule gives for them (none, when
# they already match), and the op runs on the local shards, out= the local shard of out.
def _out_variant(cls, func, types, args, kwargs):
    from torch.distributed.tensor import DTensor, Shard

    from torchops import _fake

    out = kwargs["out"]
    op = "torchops." + func._schema.name.removeprefix("torchops::")
    operands = [arg for arg in args if isinstance(arg, torch.Tensor)]
    if not isinstance(out, DTensor):
        raise RuntimeError(f"{func}: out must be a DTensor when an operand is a DTensor, got a torch.Tensor")
    mesh, placements = out.device_mesh, out.placements
    if len(operands) == 2:  # bitshift.out: the kernel's message when x and y do not broadcast
        out_shape = _fake._broadcast_shape(op, *operands)
    else:
        out_shape = operands[0].shape
    if out.shape != out_shape:
        raise RuntimeError(
            f"{op}: out is a DTensor of shape {list(out.shape)} but the result has shape {list(out_shape)}; "
            "a DTensor out= is not resized, pass an out of the result's shape"
        )
    if not all(p.is_replicate() or isinstance(p, Shard) for p in placements):
        raise RuntimeError(
            f"{op}: out has placements {tuple(placements)}; a DTensor out= must be sharded (Shard) or replicated"
        )

    local_args = []
    for arg in args:
        if isinstance(arg, DTensor):
            needed = [_operand_placement(arg.shape, out_shape, p.dim if p.is_shard() else None) for p in placements]
            arg = arg.redistribute(mesh, needed).to_local()
        elif isinstance(arg, torch.Tensor) and arg.numel() != 1:
            # As DTensor's own dispatch: a one-element tensor counts as replicated, others are refused.
            raise RuntimeError(
                f"{func}: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor "
                "before calling distributed operators!"
            )
        local_args.append(arg)
    func(*local_args, out=out.to_local())


# ----------------------------------------------------------------------------------------
# Registration
_registered = False


def _register() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor.experimental import register_sharding

    ops = torch.ops.torchops
    rules = [
        (ops.bitshift.default, _bitshift),
        (ops.bitshift.Scalar, _bitshift_scalar),
        (ops.bitshift_.default, _bitshift_inplace),
        (ops.bitshift_.Scalar, _bitshift_scalar_inplace),
        (ops.signbit.default, _signbit),
    ]
    out_variants = (ops.bitshift.out, ops.bitshift.Scalar_out, ops.signbit.out)
    assert {o for o, _ in rules} | set(out_variants) == set(_contract.OVERLOADS), "a sharding rule for each overload"
    for overload, rule in rules:
        register_sharding(overload)(rule)
    for overload in out_variants:
        torch.library.register_torch_dispatch(overload, DTensor, _out_variant)


def install() -> None:
    """Registers the rules now if torch.distributed.tensor is loaded, else when it is."""
    if torch.distributed.is_available():
        _on_import.call_when_imported(_DTENSOR_MODULE, _register, "the DTensor sharding rules")


install()
