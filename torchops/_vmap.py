"""torch.vmap batching rules for every torchops overload.

Without them ``torch.vmap`` runs each functional call once per example, with PyTorch's
warning ("we have not yet implemented the batching rule"), and refuses in-place and out=
calls. Here every overload gets a rule at the FuncTorchBatched key, registered at import:

* the functional and in-place overloads through the public ``torch.library.register_vmap``:
  the rule gets the physical tensors and their batch dims and calls the op once on the
  whole batch.
* the out= overloads: register_vmap refuses ops with a keyword-only tensor (``out``), so
  they get a decomposition at FuncTorchBatched (``torch.library.Library.impl``, public):
  the functional op, whose rule runs, then ``out.copy_``, which has PyTorch's own batching
  rule.

The rules are the same for every pointwise op, made from the overload's kind and its op's
declaration (torchops/_contract.py's DECLARATIONS), so an op needs no code here. A packing
op (packbits, unpackbits, pack, unpack: a ``Packing`` declaration) has one rule of its own,
for all of them: the op packs along one dim of each example, so the rule packs along that
dim of the physical tensor, past the batch dim (``_packing_rule``). The search ops
(hamming_distance, hamming_topk: a ``Search`` declaration) have one each: hamming_distance's
batch dims broadcast, so the vmapped dim is one more batch dim (``_distance_rule``);
hamming_topk takes one 2-d database, so a batch of queries is one search of all their rows,
and a batch of databases one search per example (``_topk_rule``).

The rules of docs/semantics.md hold per example although the kernel sees physical tensors:

* The result dtype: ``torch.result_type`` sees ranks, and a batched 0-d count is a 1-d
  physical tensor, which would promote ``x`` (int8 ``x`` with a batched 0-d int64 count
  must stay int8). When a batched operand is 0-d per example and the dtypes differ, the
  rule runs the op on meta tensors of the per-example shapes (the fake kernel: the dtype,
  or the op's own error), then converts both physical operands to that dtype. That is
  exact: the kernels convert both operands to the result dtype before they shift.
* Errors: a failing physical call is run again on meta stand-ins of the per-example
  shapes, so the message names those shapes, not the physical ones.
* In place with ``x`` not batched and ``y`` batched: refused with the message PyTorch's
  own in-place batching rules give (``torch.Tensor.mul_``'s).
* ``out=``: ATen refuses every out= overload under vmap; here an ``out`` of the result's
  per-example shape and dtype is written, as the per-example loop would. An ``out`` that
  would need resizing, or an unbatched ``out`` for a batched result, is refused before
  anything is written. hamming_topk.out writes its two outs (``values``, ``indices``) so.
"""
from __future__ import annotations

import torch

from torchops import _fake
from torchops._contract import OUT_FORM, OVERLOADS, Packing, Search, declaration_of, dtype_name, op_name


# --- helpers on physical tensors --------------------------------------------------------


def _logical_shape(t: torch.Tensor, bdim):
    if bdim is None:
        return tuple(t.shape)
    shape = list(t.shape)
    del shape[bdim]
    return tuple(shape)


def _to_front(t: torch.Tensor, bdim: int, ndim: int) -> torch.Tensor:
    """The batch dim first, then size-1 dims up to ``ndim`` logical dims: a view."""
    t = t.movedim(bdim, 0)
    extra = ndim - (t.dim() - 1)
    if extra > 0:
        t = t[(slice(None),) + (None,) * extra]
    return t


def _meta(t: torch.Tensor, bdim) -> torch.Tensor:
    return torch.empty(_logical_shape(t, bdim), dtype=t.dtype, device="meta")


def _logical_call(overload, args, in_dims):
    """The op on meta stand-ins of the per-example tensors: the fake kernel's logical dtype
    and shape, or the op's own error with the per-example shapes in it."""
    return overload(*(_meta(a, b) if isinstance(a, torch.Tensor) else a for a, b in zip(args, in_dims)))


def _physical_call(fn, overload, args, in_dims):
    try:
        return fn()
    except (RuntimeError, TypeError, ValueError):
        _logical_call(overload, args, in_dims)  # raises the message with logical shapes
        raise  # the logical call passed: the physical error stands as it is


def _tensors(args) -> list:
    """The positions of the tensor arguments."""
    return [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]


def _needs_logical_dtype(overload, args, in_dims) -> bool:
    """Whether physical promotion may differ from logical: an op whose result dtype is
    promoted from its operands', a batched operand that is 0-d per example (1-d
    physically), dtypes that differ, and all of them dtypes the op takes (otherwise the op
    refuses a dtype, physically as logically)."""
    declaration = declaration_of(overload)
    tensors = [(args[i], in_dims[i]) for i in _tensors(args)]
    zero_d = any(b is not None and t.dim() == 1 for t, b in tensors)
    dtypes = {t.dtype for t, _ in tensors}
    return declaration.promotes and zero_d and len(dtypes) > 1 and dtypes <= set(declaration.dtypes)


def _incompatible_inplace(op: str) -> RuntimeError:
    # PyTorch's vmapIncompatibleInplaceError (aten/src/ATen/functorch), with the op's name.
    return RuntimeError(
        f"vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
        "that has more elements than `self`. This happened due to `other` being vmapped over but `self` not "
        f"being vmapped over in a vmap. Please try to use out-of-place operators instead of {op}."
    )


# --- the rules (register_vmap: info, in_dims, *physical args) ----------------------------


def _functional_rule(overload):
    def rule(info, in_dims, *args):
        tensors = _tensors(args)
        if len(tensors) == 1:  # pointwise on one tensor: the result keeps its layout, batch dim included
            return overload(*args), in_dims[tensors[0]]
        ndim = max(args[i].dim() - (in_dims[i] is not None) for i in tensors)
        physical = [_to_front(a, b, ndim) if isinstance(a, torch.Tensor) and b is not None else a
                    for a, b in zip(args, in_dims)]
        if _needs_logical_dtype(overload, args, in_dims):
            dtype = _logical_call(overload, args, in_dims).dtype
            physical = [a.to(dtype) if isinstance(a, torch.Tensor) else a for a in physical]
        return _physical_call(lambda: overload(*physical), overload, args, in_dims), 0

    return rule


def _inplace_rule(overload):
    def rule(info, in_dims, x, *rest):
        args = (x, *rest)
        if in_dims[0] is None:  # only another operand is batched: a batch of results for one x
            raise _incompatible_inplace(op_name(overload))
        physical = [x.movedim(in_dims[0], 0)]
        x_ndim = x.dim() - 1
        for a, b in zip(rest, in_dims[1:]):
            if isinstance(a, torch.Tensor):
                if a.dim() - (b is not None) > x_ndim:  # the result would be bigger than x per example
                    _logical_call(overload, args, in_dims)  # the op's own error
                if b is not None:
                    a = _to_front(a, b, x_ndim)
            physical.append(a)
        if _needs_logical_dtype(overload, args, in_dims):
            _logical_call(overload, args, in_dims)  # refuses a result dtype other than x's
            physical = [physical[0]] + [a.to(x.dtype) if isinstance(a, torch.Tensor) else a for a in physical[1:]]
        _physical_call(lambda: overload(*physical), overload, args, in_dims)
        # x itself (unwrapped), which register_vmap maps back to the caller's x: the op returns x.
        return x, in_dims[0]

    return rule


def _packing_rule(overload):
    """A packing op's rule: x is its one tensor. The op's checks run first on a meta stand-in
    of one example (its messages name the example's dims and sizes), which also give the
    packed dim. Along a dim, the physical call packs that dim past the batch dim, which stays
    where it is (every other dim keeps its size). dim=None packs each example flattened, and
    a 0-d example is one element: the batch dim first, each example one row of a 2-d tensor,
    packed along its rows (dim -1), which gives each example its result of 1 dim."""
    op, declaration = op_name(overload), declaration_of(overload)
    dim_index = _fake.argument_names(overload).index("dim")

    def rule(info, in_dims, x, *rest):
        values = _fake.bind(overload, (x, *rest), {})
        bdim = in_dims[0]
        example = _meta(x, bdim)
        call = declaration.check(op, example, *values[1:])
        if call.dim is None or example.dim() == 0:
            # (B, numel), not (B, -1): an example may have no elements
            values[0], values[dim_index] = x.movedim(bdim, 0).reshape(x.shape[bdim], example.numel()), -1
            return overload(*values), 0
        values[dim_index] = call.dim + (call.dim >= bdim)
        return overload(*values), bdim

    return rule


def _distance_rule(overload):
    """hamming_distance's rule: x1 (..., M, B) and x2 (..., N, B) per example, their batch dims
    broadcast, so the vmapped dim is one more batch dim, in front of every other. The op's
    checks run first on meta stand-ins of the examples (a 1-d example is 2-d physically and
    would pass them; the messages name the example's shapes). A batched operand's batch dim
    goes first, followed by size-1 dims up to the larger example's rank (so that broadcasting,
    which aligns shapes on the right, lines the other operand's batch dims up with the
    example's, not with the vmapped dim); an operand without a batch dim is passed as it is,
    its dims broadcast against the batched one's."""

    def rule(info, in_dims, x1, x2):
        args = (x1, x2)
        _logical_call(overload, args, in_dims)  # the op's checks on the examples (raises)
        ndim = max(a.dim() - (b is not None) for a, b in zip(args, in_dims))
        physical = [a if b is None else _to_front(a, b, ndim) for a, b in zip(args, in_dims)]
        return overload(*physical), 0

    return rule


def _topk_rule(overload):
    """hamming_topk's rule: queries (Q, B) and database (N, B) per example, exactly 2-d (the
    op has no batch dims). The op's checks run first on meta stand-ins of the examples.

    * Only the queries batched: every example searches the same database, and a query's
      result does not depend on the other queries, so the batch is one search of b * Q
      queries (the batch dim first, then flattened), its results viewed as (b, Q, k).
    * The database batched: each example searches a database of its own, and the op searches
      one database per call, so the rule calls it once per example and stacks the results.
      That is a loop over the batch, on purpose: each call is a whole search (Q x N
      distances, split across the threads), which dwarfs a call's overhead; the other way,
      hamming_distance on the batch and a stable sort of each row, would make the (b, Q, N)
      matrix of distances that the op exists not to make (docs/semantics.md, section 16), and
      its ties would have to be ordered by another code path than the op's."""

    def rule(info, in_dims, queries, database, k):
        args = (queries, database, k)
        values, _ = _logical_call(overload, args, in_dims)  # the op's checks on the examples (raises)
        qd, dd = in_dims[0], in_dims[1]
        if dd is None:
            q = queries.movedim(qd, 0)
            b, rows, width = q.shape
            # (b * Q, B), not (-1, B): an example may have no queries
            flat_values, flat_indices = overload(q.reshape(b * rows, width), database, k)
            return (flat_values.view(b, rows, k), flat_indices.view(b, rows, k)), (0, 0)
        database = database.movedim(dd, 0)
        queries = queries if qd is None else queries.movedim(qd, 0)
        b = database.shape[0]
        if b == 0:  # nothing to stack: empty results of the examples' shape
            return (torch.empty((0, *values.shape), dtype=torch.int32, device=database.device),
                    torch.empty((0, *values.shape), dtype=torch.int64, device=database.device)), (0, 0)
        results = [overload(queries if qd is None else queries[i], database[i], k) for i in range(b)]
        return (torch.stack([r[0] for r in results]), torch.stack([r[1] for r in results])), (0, 0)

    return rule


#: Each search op's rule: an op of that kind takes operands of its own shapes.
_SEARCH_RULES = {"hamming_distance": _distance_rule, "hamming_topk": _topk_rule}


def _rule_for(overload):
    """The batching rule of a functional or in-place overload, from its kind and declaration."""
    declaration = declaration_of(overload)
    if isinstance(declaration, Packing):
        return _packing_rule(overload)
    if isinstance(declaration, Search):
        name = overload._schema.name.removeprefix("torchops::")
        if name not in _SEARCH_RULES:
            raise KeyError(f"torchops.{name} is a search op without a batching rule: add it to torchops/_vmap.py's "
                           "_SEARCH_RULES")
        return _SEARCH_RULES[name](overload)
    return _inplace_rule(overload) if _fake.kind_of(overload) == "inplace" else _functional_rule(overload)


# --- out=: a decomposition at FuncTorchBatched (the tensors are still batched here) ---------


def _check_out(op: str, result: torch.Tensor, out: torch.Tensor, first: torch.Tensor, first_name: str = "x",
               out_name: str = "out", several: bool = False) -> None:
    """The op's checks of one out (``out``; hamming_topk's ``values`` or ``indices``) for its
    result, as its messages word them: the device (against the op's first tensor, named
    ``first_name``) and the dtype (an op with several outs names the out)."""
    _fake._check_device(op, first, first_name, **{out_name: out})
    if several:  # the words of csrc/ops/hamming.cpp (and the fake kernel) for one of several outs
        torch._check_type(out.dtype == result.dtype,
                          lambda: f"{op}: {out_name} must be an {dtype_name(result.dtype)} tensor, "
                                  f"got {dtype_name(out.dtype)}")
    else:
        _fake._check_out_dtype(op, out, result.dtype)


def _check_out_shape(op: str, result: torch.Tensor, out: torch.Tensor, out_name: str = "out") -> None:
    """An out of the result's per-example shape: under vmap an out is not resized."""
    torch._check(
        out.shape == result.shape,
        lambda: f"{op}: under torch.vmap, out= cannot be resized: {out_name} has shape {list(out.shape)} per example "
        f"but the result has shape {list(result.shape)}; pass {_an(out_name)} of the result's shape",
    )


def _an(out_name: str) -> str:
    """An out as a message names it: "an out"; hamming_topk's "`values`", "`indices`"."""
    return "an out" if out_name == "out" else f"`{out_name}`"


def _unbatched_out(op: str, out_name: str = "out") -> RuntimeError:
    one = "one out" if out_name == "out" else f"one `{out_name}`"
    return RuntimeError(
        f"vmap: {op}(..., {out_name}={out_name}) is not possible because the result is vmapped over but "
        f"`{out_name}` is not ({one} cannot hold a result per example). Pass {_an(out_name)} with a batch "
        f"dimension, or use the out-of-place {op}."
    )


def _batched_deeper(result: torch.Tensor, out: torch.Tensor) -> bool:
    """Whether result is batched at a vmap level that out is not (copy_ would refuse)."""
    level = torch._C._functorch.maybe_get_level(result)
    return level != -1 and torch._C._functorch.maybe_get_level(out) < level


def _copy_out(op: str, result: torch.Tensor, out: torch.Tensor, out_name: str = "out") -> None:
    try:
        out.copy_(result)  # PyTorch's batching rule for copy_
    except RuntimeError as error:
        if not str(error).startswith("vmap: "):
            raise
        raise _unbatched_out(op, out_name) from None


def _make_out_kernel(functional, op_name: str, overload):
    """The FuncTorchBatched kernel of an out= overload: its functional overload (whose rule
    runs), then each result written into its out (the schema's outs, in order: ``out``, or
    hamming_topk's ``values`` and ``indices``). Every out is checked before any is written."""
    outs = [a.name for a in overload._schema.arguments if a.is_out]
    first_name = _fake.argument_names(overload)[0]
    several = len(outs) > 1

    def kernel(*args, **kwargs):
        targets = [kwargs.pop(name) for name in outs]
        result = functional(*args, **kwargs)
        results = result if several else (result,)
        first = args[0] if args else kwargs.get(first_name)
        # As the op checks its outs: every out's device and dtype, then their shapes.
        for name, out, r in zip(outs, targets, results):
            _check_out(op_name, r, out, first, first_name, name, several)
        for name, out, r in zip(outs, targets, results):
            _check_out_shape(op_name, r, out, name)
            if several and _batched_deeper(r, out):  # refused before the other out is written
                raise _unbatched_out(op_name, name)
        for name, out, r in zip(outs, targets, results):
            _copy_out(op_name, r, out, name)
        return tuple(targets) if several else targets[0]

    return kernel


_library: torch.library.Library | None = None


def register() -> None:
    """Registers the batching rules of every overload (once per process)."""
    global _library
    if _library is not None:
        return
    library = torch.library.Library("torchops", "IMPL")
    for overload in OVERLOADS:
        if _fake.kind_of(overload) != "out":
            torch.library.register_vmap(overload, _rule_for(overload), lib=library)
    # The out= overloads: the functional overload they write the result of, named as the op's
    # messages name it ("torchops.bitshift").
    for functional, overload in OUT_FORM.items():
        library.impl(overload, _make_out_kernel(functional, str(functional.overloadpacket), overload),
                     "FuncTorchBatched")
    _library = library


def unregister() -> None:
    """Takes the rules out again (tests and benchmarks that compare with the fallback)."""
    global _library
    if _library is not None:
        _library._destroy()
        _library = None


register()
