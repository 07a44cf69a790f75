"""torch.vmap batching rules for every torchops overload.

Without them ``torch.vmap`` runs each functional call once per example, with PyTorch's
warning ("we have not yet implemented the batching rule"), and refuses in-place and out=
calls. Here every overload gets a rule at the FuncTorchBatched key, registered at import:

* ``bitshift``, ``bitshift.Scalar``, ``bitshift_``, ``bitshift_.Scalar`` and ``signbit``
  through the public ``torch.library.register_vmap``: the rule gets the physical tensors
  and their batch dims and calls the op once on the whole batch.
* ``bitshift.out``, ``bitshift.Scalar_out`` and ``signbit.out``: register_vmap refuses ops
  with a keyword-only tensor (``out``), so they get a decomposition at FuncTorchBatched
  (``torch.library.Library.impl``, public): the functional op, whose rule runs, then
  ``out.copy_``, which has PyTorch's own batching rule.

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
  anything is written.
"""
from __future__ import annotations

import torch

from torchops import _fake
from torchops._contract import BITSHIFT_INPLACE, OUT_FORM, SHIFT_DTYPES

_op = torch.ops.torchops


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


def _logical_call(overload, x, xb, y, yb, rest):
    """The op on meta stand-ins of the per-example tensors: the fake kernel's logical dtype
    and shape, or the op's own error with the per-example shapes in it."""
    my = _meta(y, yb) if isinstance(y, torch.Tensor) else y
    return overload(_meta(x, xb), my, *rest)


def _physical_call(fn, overload, x, xb, y, yb, rest):
    try:
        return fn()
    except (RuntimeError, TypeError, ValueError):
        _logical_call(overload, x, xb, y, yb, rest)  # raises the message with logical shapes
        raise  # the logical call passed: the physical error stands as it is


def _needs_logical_dtype(x, xb, y, yb) -> bool:
    """Whether physical promotion may differ from logical: a batched operand that is 0-d
    per example (1-d physically), dtypes that differ, and both of them shift dtypes
    (otherwise the op refuses a dtype, physically as logically)."""
    zero_d = (xb is not None and x.dim() == 1) or (yb is not None and y.dim() == 1)
    return zero_d and x.dtype != y.dtype and x.dtype in SHIFT_DTYPES and y.dtype in SHIFT_DTYPES


def _incompatible_inplace(op: str) -> RuntimeError:
    # PyTorch's vmapIncompatibleInplaceError (aten/src/ATen/functorch), with the op's name.
    return RuntimeError(
        f"vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
        "that has more elements than `self`. This happened due to `other` being vmapped over but `self` not "
        f"being vmapped over in a vmap. Please try to use out-of-place operators instead of {op}."
    )


# --- the rules (register_vmap: info, in_dims, *physical args) ----------------------------


def _bitshift_rule(info, in_dims, x, y, *rest):
    xb, yb = in_dims[0], in_dims[1]
    ndim = max(x.dim() - (xb is not None), y.dim() - (yb is not None))
    px = _to_front(x, xb, ndim) if xb is not None else x
    py = _to_front(y, yb, ndim) if yb is not None else y
    if _needs_logical_dtype(x, xb, y, yb):
        dtype = _logical_call(_op.bitshift.default, x, xb, y, yb, rest).dtype
        px, py = px.to(dtype), py.to(dtype)
    out = _physical_call(lambda: _op.bitshift.default(px, py, *rest), _op.bitshift.default, x, xb, y, yb, rest)
    return out, 0


def _bitshift_scalar_rule(info, in_dims, x, y, *rest):
    return _op.bitshift.Scalar(x, y, *rest), in_dims[0]


def _signbit_rule(info, in_dims, x):
    return _op.signbit.default(x), in_dims[0]


def _make_inplace_rule(overload):
    tensor_count = overload is _op.bitshift_.default

    def rule(info, in_dims, x, y, *rest):
        xb = in_dims[0]
        yb = in_dims[1] if tensor_count else None
        if xb is None:  # only y is batched here: a batch of results for one x
            raise _incompatible_inplace(BITSHIFT_INPLACE)
        px = x.movedim(xb, 0)
        py = y
        if tensor_count:
            xl, yl = x.dim() - 1, y.dim() - (yb is not None)
            if yl > xl:  # the result would be bigger than x per example: the op's own error
                _logical_call(overload, x, xb, y, yb, rest)
            if yb is not None:
                py = _to_front(y, yb, xl)
            if _needs_logical_dtype(x, xb, y, yb):
                _logical_call(overload, x, xb, y, yb, rest)  # refuses a result dtype other than x's
                py = py.to(x.dtype)
        _physical_call(lambda: overload(px, py, *rest), overload, x, xb, y, yb, rest)
        # x itself (unwrapped), which register_vmap maps back to the caller's x: the op returns x.
        return x, xb

    return rule


# --- out=: a decomposition at FuncTorchBatched (the tensors are still batched here) ---------


def _write_out(op: str, result: torch.Tensor, out: torch.Tensor, x: torch.Tensor) -> None:
    _fake._check_device(op, x, out=out)
    _fake._check_out_dtype(op, out, result.dtype)
    torch._check(
        out.shape == result.shape,
        lambda: f"{op}: under torch.vmap, out= cannot be resized: out has shape {list(out.shape)} per example "
        f"but the result has shape {list(result.shape)}; pass an out of the result's shape",
    )
    try:
        out.copy_(result)  # PyTorch's batching rule for copy_
    except RuntimeError as error:
        if not str(error).startswith("vmap: "):
            raise
        raise RuntimeError(
            f"vmap: {op}(..., out=out) is not possible because the result is vmapped over but `out` is not "
            "(one out cannot hold a result per example). Pass an out with a batch dimension, or use the "
            f"out-of-place {op}."
        ) from None


def _make_out_kernel(functional, op_name: str):
    def kernel(*args, **kwargs):
        out = kwargs.pop("out")
        result = functional(*args, **kwargs)
        _write_out(op_name, result, out, args[0])
        return out

    return kernel


_library: torch.library.Library | None = None


def register() -> None:
    """Registers the batching rules of every overload (once per process)."""
    global _library
    if _library is not None:
        return
    library = torch.library.Library("torchops", "IMPL")
    rules = {
        _op.bitshift.default: _bitshift_rule,
        _op.bitshift.Scalar: _bitshift_scalar_rule,
        _op.bitshift_.default: _make_inplace_rule(_op.bitshift_.default),
        _op.bitshift_.Scalar: _make_inplace_rule(_op.bitshift_.Scalar),
        _op.signbit.default: _signbit_rule,
    }
    for overload, rule in rules.items():
        torch.library.register_vmap(overload, rule, lib=library)
    # The out= overloads: the functional overload they write the result of, named as the op's
    # messages name it ("torchops.bitshift").
    for functional, overload in OUT_FORM.items():
        library.impl(overload, _make_out_kernel(functional, str(functional.overloadpacket)), "FuncTorchBatched")
    _library = library


def unregister() -> None:
    """Takes the rules out again (tests and benchmarks that compare with the fallback)."""
    global _library
    if _library is not None:
        _library._destroy()
        _library = None


register()
