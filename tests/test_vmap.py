"""torch.vmap over every torchops overload (torchops/_vmap.py's batching rules), against the
per-example loop of the same op, which the other suites hold to the contract.

Any use of PyTorch's per-example fallback fails a test: the fallback is switched off (it
then raises instead of looping), warnings are errors, and stderr (where the fallback's C++
warning goes when the op is called through torch.ops) is checked.
"""
import re
import warnings

import pytest
import torch

import torchops
from calls import OPCHECK_SAMPLES, TYPED_CALLS

op = torch.ops.torchops
B = 5
FUNCTIONAL_SAMPLES = [sample for sample in OPCHECK_SAMPLES if not sample[1]._schema.is_mutable]
DTYPES = [torch.int8, torch.int32, torch.int64, torch.uint8]
SHIFTS = [("left", True), ("right", True), ("right", False)]


@pytest.fixture(autouse=True)
def no_fallback(capfd):
    torch._C._functorch._set_vmap_fallback_enabled(False)
    torch._C._functorch._set_vmap_fallback_warning_enabled(True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
    torch._C._functorch._set_vmap_fallback_enabled(True)
    err = capfd.readouterr().err
    assert "performance drop" not in err and "batching rule" not in err.lower(), err


def rand(shape, dtype, gen, lo=None, hi=None):
    if lo is None and hi is None:  # any bit pattern of the dtype
        bits = torch.randint(-2**62, 2**62, shape, dtype=torch.int64, generator=gen) * 2
        bits += torch.randint(0, 2, shape, dtype=torch.int64, generator=gen)
        return bits.to(dtype)
    return torch.randint(lo, hi + 1, shape, dtype=torch.int64, generator=gen).to(dtype)


def select(arg, bdim, i):
    return arg.select(bdim, i) if bdim is not None else arg


def loop(fn, args, in_dims):
    """The per-example calls, stacked; an op of several results (hamming_topk's values and
    indices) gives a tuple of stacks."""
    results = [fn(*[select(a, d, i) for a, d in zip(args, in_dims)]) for i in range(B)]
    if isinstance(results[0], tuple):
        return tuple(torch.stack(parts) for parts in zip(*results))
    return torch.stack(results)


def check(fn, args, in_dims):
    got = torch.vmap(fn, in_dims=in_dims)(*args)
    check_same(fn, got, loop(fn, args, in_dims))
    return got


def check_same(name, got, want):
    """vmap's results (a tuple for hamming_topk) equal the loop's, dtypes included."""
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        assert g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w), name


def counts(shape, dtype, gen):
    # in range, out of range and negative counts
    return rand(shape, dtype, gen, lo=max(torch.iinfo(dtype).min, -3), hi=min(torch.iinfo(dtype).max, 70))


# (x per-example shape, x in_dim, y per-example shape, y in_dim)
CASES = [
    ((4,), 0, (4,), 0),
    ((3, 4), 1, (4,), 0),
    ((3, 4), None, (3, 4), 2),
    ((3, 4), 0, (4,), None),
    ((4,), 1, (3, 4), 0),      # y of higher rank than x
    ((2, 1, 4), 2, (3, 1), 1),  # two-way broadcast, batch dims inside
    ((3, 4), -1, (), 0),        # 0-d batched count
    ((), 0, (3,), None),        # 0-d batched x
    ((), 0, (), 0),
    ((), 0, (), None),          # 0-d per example both, only x batched
]


@pytest.mark.parametrize("xdtype", DTYPES)
@pytest.mark.parametrize("ydtype", DTYPES)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("direction,arith", SHIFTS)
def test_bitshift(xdtype, ydtype, case, direction, arith):
    gen = torch.Generator().manual_seed(0)
    xs, xd, ys, yd = case
    x = rand(xs if xd is None else _with_batch(xs, xd), xdtype, gen)
    y = counts(ys if yd is None else _with_batch(ys, yd), ydtype, gen)
    check(lambda a, b: op.bitshift(a, b, direction, arith), (x, y), (xd, yd))


def _with_batch(shape, bdim):
    shape = list(shape)
    shape.insert(bdim if bdim >= 0 else len(shape) + 1 + bdim, B)
    return shape


@pytest.mark.parametrize("xdtype,ydtype,xshape,want", [
    (torch.int8, torch.int64, (3,), torch.int8),     # a batched 0-d count does not promote x
    (torch.uint8, torch.int8, (3,), torch.uint8),    # physically uint8 with int8 is int16
    (torch.int64, torch.int8, (), torch.int64),      # both 0-d per example: promoted
    (torch.uint8, torch.int8, (), torch.int16),
])
def test_zero_d_batched_count_dtype(xdtype, ydtype, xshape, want):
    gen = torch.Generator().manual_seed(1)
    y = torch.tensor([0, 1, 7, 257 % 128, 100], dtype=ydtype)  # per example a 0-d count
    for xd in (None, 0):
        x = rand(xshape if xd is None else (B, *xshape), xdtype, gen)
        got = check(lambda a, b: op.bitshift(a, b, "left"), (x, y), (xd, 0))
        assert got.dtype == want


def test_zero_d_count_wider_than_x_converted_first():
    # docs/semantics.md 4.1: int8 [1] << int64 0-d 257 is int8 [2]
    x = torch.ones(B, 1, dtype=torch.int8)
    y = torch.full((B,), 257, dtype=torch.int64)
    got = torch.vmap(lambda a, b: op.bitshift(a, b, "left"))(x, y)
    assert got.dtype == torch.int8 and got.tolist() == [[2]] * B


def test_uint16_with_batched_0d_int64_count():
    # physically uint16 [B, 4] with int64 [B, 1] cannot promote; per example it is uint16
    x = torch.arange(4 * B, dtype=torch.int32).to(torch.uint16).reshape(B, 4)
    y = torch.arange(B, dtype=torch.int64)
    got = torch.vmap(lambda a, b: op.bitshift(a, b, "left"))(x, y)
    assert got.dtype == torch.uint16
    want = torch.stack([op.bitshift(x[i], y[i], "left") for i in range(B)])
    assert torch.equal(got.to(torch.int64), want.to(torch.int64))


def test_unpromotable_refused_with_logical_message():
    x = torch.zeros(B, dtype=torch.uint16)  # per example 0-d
    y = torch.zeros((), dtype=torch.int32)
    with pytest.raises(TypeError, match="no common dtype") as vm:
        torch.vmap(lambda a: op.bitshift(a, y, "left"))(x)
    with pytest.raises(TypeError) as ref:
        op.bitshift(x[0], y, "left")
    assert str(vm.value) == str(ref.value)


def test_broadcast_error_names_per_example_shapes():
    x = torch.zeros(B, 3, dtype=torch.int32)
    y = torch.zeros(B, 4, dtype=torch.int32)
    with pytest.raises(RuntimeError, match=r"x of shape \[3\] and y of shape \[4\] do not broadcast"):
        torch.vmap(lambda a, b: op.bitshift(a, b, "left"))(x, y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("count", [0, 1, 7, 8, 63, 64, 257, -1])
@pytest.mark.parametrize("direction,arith", SHIFTS)
@pytest.mark.parametrize("xd", [0, 1])
def test_scalar_count(dtype, count, direction, arith, xd):
    x = rand(_with_batch((3,), xd), dtype, torch.Generator().manual_seed(2))
    check(lambda a: op.bitshift(a, count, direction, arith), (x,), (xd,))


def test_nested_vmap():
    gen = torch.Generator().manual_seed(3)
    x = rand((B, 3, 4), torch.int32, gen)          # outer dim 0, inner dim 1 (per outer example: (3, 4) -> dim 0)
    y = counts((4, B), torch.int64, gen)           # outer dim 1, per outer example (4,), unbatched inside
    z = counts((3,), torch.int8, gen)              # 0-d per inner example
    f = lambda a, b, c: op.bitshift(op.bitshift(a, b, "left"), c, "right", False)
    inner = torch.vmap(f, in_dims=(0, None, 0))
    got = torch.vmap(inner, in_dims=(0, 1, None))(x, y, z)
    want = torch.stack([torch.stack([f(x[i, j], y[:, i], z[j]) for j in range(3)]) for i in range(B)])
    assert got.dtype == want.dtype and torch.equal(got, want)
    s = torch.vmap(torch.vmap(lambda a: op.signbit(op.bitshift(a, 3, "left"))))(x)
    assert torch.equal(s, op.signbit(op.bitshift(x, 3, "left")))


# --- in place ---------------------------------------------------------------------------


def _inplace_loop(fn, x, xd, others, in_dims):
    ref = x.clone()
    for i in range(B):
        fn(ref.select(xd, i), *[select(a, d, i) for a, d in zip(others, in_dims)])
    return ref


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xd,ys,yd,ydtype", [
    (0, (3, 4), 0, None), (1, (4,), 0, None), (2, (3, 4), None, None), (0, (), 0, torch.int64), (1, (), None, torch.int64),
])
def test_inplace(dtype, xd, ys, yd, ydtype):
    gen = torch.Generator().manual_seed(4)
    x = rand(_with_batch((3, 4), xd), dtype, gen)
    y = counts(ys if yd is None else _with_batch(ys, yd), ydtype or dtype, gen)
    f = lambda a, b: op.bitshift_(a, b, "right", False)
    want = _inplace_loop(f, x, xd, (y,), (yd,))
    got = x.clone()

    def g(a, b):
        r = f(a, b)
        assert r is a
        return a

    res = torch.vmap(g, in_dims=(xd, yd), out_dims=xd)(got, y)
    assert torch.equal(got, want) and torch.equal(res, want)


@pytest.mark.parametrize("count", [1, 9, -1])
def test_inplace_scalar(count):
    x = rand((3, B), torch.int8, torch.Generator().manual_seed(5))
    want = _inplace_loop(lambda a: op.bitshift_(a, count, "left"), x, 1, (), ())
    got = x.clone()
    torch.vmap(lambda a: (op.bitshift_(a, count, "left"), a)[1], in_dims=1)(got)
    assert torch.equal(got, want)


def test_inplace_unbatched_x_batched_y_refused():
    x = torch.ones(4, dtype=torch.int32)
    y = torch.ones(B, 4, dtype=torch.int32)
    with pytest.raises(RuntimeError, match=r"vmap: torchops.bitshift_\(self, \*extra_args\) is not possible"):
        torch.vmap(lambda b: (op.bitshift_(x, b, "left"), x)[1])(y)
    assert torch.equal(x, torch.ones(4, dtype=torch.int32))


def test_inplace_logical_dtype_rules():
    # int8 x with a batched 0-d int64 count: allowed (result int8); with a batched [4] int64: refused
    x = torch.ones(B, 4, dtype=torch.int8)
    torch.vmap(lambda a, b: (op.bitshift_(a, b, "left"), a)[1])(x, torch.arange(B))
    assert torch.equal(x, torch.stack([torch.full((4,), 1 << i, dtype=torch.int8) for i in range(B)]))
    with pytest.raises(RuntimeError, match="an in-place shift cannot change x's dtype"):
        torch.vmap(lambda a, b: (op.bitshift_(a, b, "left"), a)[1])(x, torch.ones(B, 4, dtype=torch.int64))
    # x 0-d per example, an unbatched 0-d int64 count: per example int64, refused (physically it would pass)
    x0 = torch.ones(B, dtype=torch.int8)
    with pytest.raises(RuntimeError, match="an in-place shift cannot change x's dtype"):
        torch.vmap(lambda a: (op.bitshift_(a, torch.tensor(1), "left"), a)[1])(x0)
    with pytest.raises(RuntimeError, match=r"broadcast shape \[3, 4\] but x has shape \[4\]"):
        torch.vmap(lambda a, b: (op.bitshift_(a, b, "left"), a)[1])(x, torch.ones(B, 3, 4, dtype=torch.int8))
    assert torch.equal(x0, torch.ones(B, dtype=torch.int8))


def test_inplace_nested():
    gen = torch.Generator().manual_seed(9)
    x = rand((B, 3, 4), torch.int16, gen)  # batched at both levels
    y = counts((3, 4), torch.int16, gen)   # batched at the inner level only
    want = x.clone()
    for i in range(B):
        for j in range(3):
            op.bitshift_(want[i, j], y[j], "left")
    got = x.clone()
    f = lambda a, b: (op.bitshift_(a, b, "left"), a)[1]
    torch.vmap(torch.vmap(f, in_dims=(0, 0)), in_dims=(0, None))(got, y)
    assert torch.equal(got, want)


# --- out= -------------------------------------------------------------------------------


def _out_loop(fn, out, od, args, in_dims):
    ref = out.clone()
    for i in range(B):
        fn(*[select(a, d, i) for a, d in zip(args, in_dims)], ref.select(od, i))
    return ref


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xd,yd,od", [(0, 0, 0), (1, None, 2), (None, 0, 1), (None, None, 0)])
def test_out(dtype, xd, yd, od):
    gen = torch.Generator().manual_seed(6)
    x = rand((3, 4) if xd is None else _with_batch((3, 4), xd), dtype, gen)
    y = counts((4,) if yd is None else _with_batch((4,), yd), dtype, gen)
    out = torch.zeros(_with_batch((3, 4), od), dtype=dtype)
    f = lambda a, b, o: op.bitshift.out(a, b, "left", out=o)
    want = _out_loop(f, out, od, (x, y), (xd, yd))

    def g(a, b, o):
        r = f(a, b, o)
        assert r is o
        return o

    res = torch.vmap(g, in_dims=(xd, yd, od), out_dims=od)(x, y, out)
    assert torch.equal(out, want) and torch.equal(res, want)


def test_out_scalar_and_signbit():
    gen = torch.Generator().manual_seed(7)
    x = rand((B, 6), torch.int16, gen)
    out = torch.zeros(6, B, dtype=torch.int16)
    want = _out_loop(lambda a, o: op.bitshift.Scalar_out(a, 3, "right", out=o), out, 1, (x,), (0,))
    torch.vmap(lambda a, o: (op.bitshift.Scalar_out(a, 3, "right", out=o), o)[1], in_dims=(0, 1))(x, out)
    assert torch.equal(out, want)
    sb = torch.zeros(B, 6, dtype=torch.bool)
    torch.vmap(lambda a, o: (op.signbit.out(a, out=o), o)[1])(x, sb)
    assert torch.equal(sb, x < 0)


def test_out_refusals():
    x = torch.ones(B, 4, dtype=torch.int32)
    f = lambda a, o: (op.bitshift.out(a, a, "left", out=o), o)[1]
    shared = torch.zeros(4, dtype=torch.int32)
    with pytest.raises(RuntimeError, match=r"vmap: torchops.bitshift\(\.\.\., out=out\) is not possible"):
        torch.vmap(f, in_dims=(0, None))(x, shared)
    with pytest.raises(RuntimeError, match="out has dtype int64 but the result has dtype int32"):
        torch.vmap(f)(x, torch.zeros(B, 4, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="under torch.vmap, out= cannot be resized"):
        torch.vmap(f)(x, torch.zeros(B, 0, dtype=torch.int32))
    assert torch.equal(shared, torch.zeros(4, dtype=torch.int32))


# --- signbit ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16] + DTYPES + [torch.bool])
@pytest.mark.parametrize("xd", [0, 2])
def test_signbit(dtype, xd):
    gen = torch.Generator().manual_seed(8)
    if dtype.is_floating_point:
        x = torch.randn(_with_batch((3, 4), xd), generator=gen).to(dtype)
        x.view(-1)[:3] = torch.tensor([-0.0, float("nan"), -float("inf")], dtype=dtype)
    elif dtype == torch.bool:
        x = torch.rand(_with_batch((3, 4), xd), generator=gen) > 0.5
    else:
        x = rand(_with_batch((3, 4), xd), dtype, gen)
    got = check(lambda a: op.signbit(a), (x,), (xd,))
    assert got.dtype == torch.bool


# --- every op, from its samples -----------------------------------------------------------


@pytest.mark.parametrize("sample", FUNCTIONAL_SAMPLES, ids=[sample[0] for sample in FUNCTIONAL_SAMPLES])
@pytest.mark.parametrize("batched", ["all", "first", "last"])
def test_every_functional_sample_under_vmap(sample, batched):
    """Each functional overload's opcheck samples (tests/calls.py), as a batch of B examples
    (the sample's values permuted) with the batch dim last: one call for the whole batch,
    the per-example loop's answers. Every tensor batched, the first only, or the last only
    (a shift's count, hamming_distance's x2, hamming_topk's database)."""
    _, overload, make_args, *_ = sample
    args = [a.detach() if isinstance(a, torch.Tensor) else a for a in make_args()]
    gen = torch.Generator().manual_seed(11)
    tensors = [k for k, a in enumerate(args) if isinstance(a, torch.Tensor)]
    chosen = {"all": tensors, "first": tensors[:1], "last": tensors[-1:]}[batched]
    in_dims = []
    for k, a in enumerate(args):
        if k in chosen:
            examples = [a.flatten()[torch.randperm(a.numel(), generator=gen)].reshape(a.shape) for _ in range(B)]
            args[k] = torch.stack(examples, dim=a.dim())
            in_dims.append(a.dim())
        else:
            in_dims.append(None)
    check(lambda *call: overload(*call), tuple(args), tuple(in_dims))


# --- the typed API ----------------------------------------------------------------------


@pytest.mark.usefixtures("call_path")
def test_typed_api_under_vmap():
    gen = torch.Generator().manual_seed(10)
    x = rand((B, 3, 4), torch.int32, gen)
    y = counts((4, B), torch.int32, gen)
    floats = torch.randn((B, 3, 4), generator=gen)
    # Every form of every typed function (tests/calls.py's TYPED_CALLS: a new op's join with
    # no edit here), on what the rows are written for (tests/test_binding.py's inputs): int8 x
    # and counts of x's shape (the search functions read both as codes, two rows each).
    x8 = rand((B, 3, 4), torch.int8, gen)
    c8 = counts((3, 4, B), torch.int8, gen)
    for name, f, _ in TYPED_CALLS:
        want = loop(f, (x8, c8, floats), (0, 2, 0))
        if re.search(r"\bout=\(?torch\.empty\(", f.source):
            # A row whose out is made inside the call, of no operand (torch.empty, not
            # torch.empty_like(x) or x.new_empty): under vmap it is one out for a batch of
            # results, which vmap refuses (as for an unbatched out passed in).
            with pytest.raises(RuntimeError, match=r"^vmap: torchops\.\w+\(\.\.\., \w+=\w+\) is not possible"):
                torch.vmap(f, in_dims=(0, 2, 0))(x8, c8, floats)
            continue
        check_same(name, torch.vmap(f, in_dims=(0, 2, 0))(x8, c8, floats), want)
    # An int x.
    f = lambda a, b, f: torchops.bitwise_left_shift(1, b)
    check_same("int x", torch.vmap(f, in_dims=(0, 1, 0))(x, y, floats), loop(f, (x, y, floats), (0, 1, 0)))
    want = torch.stack([torchops.bitwise_right_shift(x[i], y[:, i]) for i in range(B)])
    got = x.clone()
    returned = torch.vmap(lambda a, b: torchops.bitwise_right_shift_(a, b), in_dims=(0, 1))(got, y)
    assert torch.equal(got, want) and torch.equal(returned, want)
    out = torch.zeros(3, 4, B, dtype=torch.int32)
    returned = torch.vmap(lambda a, b, o: torchops.bitshift(a, b, "LEFT", out=o), in_dims=(0, 1, 2))(x, y, out)
    want = torch.stack([torchops.bitshift(x[i], y[:, i], "LEFT") for i in range(B)], dim=2)
    assert torch.equal(out, want) and torch.equal(returned, want.movedim(2, 0))


def test_every_overload_has_a_batching_rule():
    from torchops._contract import OVERLOADS

    for overload in OVERLOADS:
        assert torch._C._dispatch_has_kernel_for_dispatch_key(overload.name(), "FuncTorchBatched"), overload


# --- the packing ops --------------------------------------------------------------------
# Their rule packs along the example's dim past the batch dim, wherever that is; dim=None
# and 0-d examples pack each example flattened.

# (id, call of one example along `dim`, x's dtype)
PACKING_CALLS = [
    ("packbits", lambda a, dim: op.packbits(a, dim), torch.int16),
    ("packbits-little-bool", lambda a, dim: op.packbits(a, dim, "little"), torch.bool),
    ("pack2", lambda a, dim: op.pack(a, 2, dim), torch.int64),
    ("pack4-little", lambda a, dim: op.pack(a, 4, dim, "little"), torch.uint8),
    ("unpackbits", lambda a, dim: op.unpackbits(a, dim), torch.uint8),
    ("unpackbits-count-little", lambda a, dim: op.unpackbits(a, dim, 11, "little"), torch.uint8),
    ("unpackbits-drop", lambda a, dim: op.unpackbits(a, dim, -3), torch.uint8),
    ("unpack4-signed", lambda a, dim: op.unpack(a, 4, dim, None, "big", True), torch.uint8),
    ("unpack2-count", lambda a, dim: op.unpack(a, 2, dim, 7), torch.uint8),
]
PACKING_IDS = [c[0] for c in PACKING_CALLS]


def packing_values(shape, dtype, gen):
    """Zeros among small values of either sign (packbits' nonzero, pack's low bits); any
    byte for the unpacking ops."""
    if dtype == torch.uint8:
        return rand(shape, dtype, gen)
    return rand(shape, torch.int64, gen, lo=-3, hi=3).to(dtype)


@pytest.mark.parametrize("call", PACKING_CALLS, ids=PACKING_IDS)
@pytest.mark.parametrize("bdim", [0, 1, 2, 3])
def test_packing_batch_dim_anywhere(call, bdim):
    _, fn, dtype = call
    x = packing_values(_with_batch((3, 5, 2), bdim), dtype, torch.Generator().manual_seed(bdim))
    for dim in (0, 1, 2, -1, -3, None):
        check(lambda a: fn(a, dim), (x,), (bdim,))


@pytest.mark.parametrize("call", PACKING_CALLS, ids=PACKING_IDS)
@pytest.mark.parametrize("shape,bdim,dims", [
    ((), 0, (-1, 0, None)),       # a 0-d example is one element
    ((7,), 1, (0, -1, None)),
    ((0, 3), 2, (0, 1, None)),    # no elements: unpacking's count pads with zeros (or drops too many)
    ((9, 1), 0, (0, 1, None)),
])
def test_packing_small_and_empty_examples(call, shape, bdim, dims):
    _, fn, dtype = call
    x = packing_values(_with_batch(shape, bdim), dtype, torch.Generator().manual_seed(12))
    for dim in dims:
        try:
            fn(x.select(bdim, 0), dim)
        except ValueError as error:  # the example's error, batched or not
            with pytest.raises(ValueError) as batched:
                torch.vmap(lambda a: fn(a, dim), in_dims=bdim)(x)
            assert str(batched.value) == str(error)
            continue
        check(lambda a: fn(a, dim), (x,), (bdim,))


def test_packing_in_a_batch_of_other_ops():
    # unpack(pack(x)) gives x's low bits back, per example and batched; nested vmap too
    gen = torch.Generator().manual_seed(13)
    x = rand((4, 6, B), torch.int32, gen)
    f = lambda a: op.unpack(op.pack(a, 4, 0), 4, 0, a.shape[0], "big", True)
    got = check(f, (x,), (2,))
    assert torch.equal(got, torch.stack([x[..., i].to(torch.int8) << 4 >> 4 for i in range(B)]))
    y = packing_values((B, 4, 6), torch.int32, gen)
    g = lambda a: op.unpackbits(op.packbits(a, None), None, a.numel())
    nested = torch.vmap(torch.vmap(g, in_dims=1), in_dims=0)(y)
    want = torch.stack([torch.stack([g(y[i, :, j]) for j in range(6)]) for i in range(B)])
    assert torch.equal(nested, want) and torch.equal(nested, (y != 0).to(torch.uint8).transpose(1, 2))


@pytest.mark.parametrize("fn,x,match", [
    (lambda a: op.packbits(a, 2), torch.ones(B, 3, 4, dtype=torch.int8), r"dim 2 is out of range for a 2-d x"),
    (lambda a: op.pack(a, 4, 1), torch.ones(B, dtype=torch.int8), r"dim 1 is out of range for a 0-d x"),
    (lambda a: op.unpackbits(a, 0, -25), torch.ones(B, 3, dtype=torch.uint8),
     r"count -25 drops more than the 24 bits along dim 0"),
    (lambda a: op.unpack(a, 2, None, -13), torch.ones(B, 3, dtype=torch.uint8),
     r"count -13 drops more than the 12 fields of the flattened x"),
    (lambda a: op.pack(a, 3), torch.ones(B, 3, dtype=torch.int8), r"bits must be 1, 2 or 4, got 3"),
    (lambda a: op.unpack(a, 2), torch.ones(B, 3, dtype=torch.int8), r"x must be a uint8 tensor"),
])
def test_packing_errors_name_the_example(fn, x, match):
    with pytest.raises(Exception, match=match) as batched:
        torch.vmap(fn)(x)
    with pytest.raises(Exception) as example:
        fn(x[0])
    assert type(batched.value) is type(example.value) and str(batched.value) == str(example.value)


# (call of one example with its out, x's dtype, out's dtype, the example's result shape)
PACKING_OUTS = [
    (lambda a, o: op.packbits.out(a, 0, out=o), torch.int8, torch.uint8, (1, 4)),
    (lambda a, o: op.unpackbits.out(a, None, 30, "little", out=o), torch.uint8, torch.uint8, (30,)),
    (lambda a, o: op.pack.out(a, 2, -1, out=o), torch.int64, torch.uint8, (6, 1)),
    (lambda a, o: op.unpack.out(a, 4, 1, -1, "big", True, out=o), torch.uint8, torch.int8, (6, 7)),
]


@pytest.mark.parametrize("fn,dtype,out_dtype,shape", PACKING_OUTS)
@pytest.mark.parametrize("xd,od", [(0, 0), (2, 1), (1, 2)])
def test_packing_out(fn, dtype, out_dtype, shape, xd, od):
    # out= of the example's result shape and dtype, batched anywhere: written as the loop does
    od = min(od, len(shape))
    x = packing_values(_with_batch((6, 4), xd), dtype, torch.Generator().manual_seed(14))
    out = torch.zeros(_with_batch(shape, od), dtype=out_dtype)
    want = _out_loop(fn, out, od, (x,), (xd,))

    def g(a, o):
        assert fn(a, o) is o
        return o

    returned = torch.vmap(g, in_dims=(xd, od), out_dims=od)(x, out)
    assert torch.equal(out, want) and torch.equal(returned, want)


def test_packing_out_refusals():
    x = torch.ones(B, 4, 9, dtype=torch.int32)
    f = lambda a, o: (op.pack.out(a, 4, out=o), o)[1]
    shared = torch.zeros(4, 5, dtype=torch.uint8)
    with pytest.raises(RuntimeError, match=r"vmap: torchops.pack\(\.\.\., out=out\) is not possible"):
        torch.vmap(f, in_dims=(0, None))(x, shared)
    with pytest.raises(RuntimeError, match="torchops.pack: out has dtype int8 but the result has dtype uint8"):
        torch.vmap(f)(x, torch.zeros(B, 4, 5, dtype=torch.int8))
    with pytest.raises(RuntimeError, match=r"out has shape \[4, 9\] per example but the result has shape \[4, 5\]"):
        torch.vmap(f)(x, torch.zeros(B, 4, 9, dtype=torch.uint8))
    assert torch.equal(shared, torch.zeros(4, 5, dtype=torch.uint8))


# --- the search ops ---------------------------------------------------------------------
# hamming_distance: the vmapped dim is one more batch dim of either operand (or both), the
# examples' batch dims broadcast as they would alone. hamming_topk: a batch of queries is one
# search; a batch of databases one search per example. Each against the per-example loop.


def codes(shape, gen, dtype=torch.uint8):
    return rand(shape, dtype, gen)


def tied_codes(shape, gen):
    """Codes of few bit patterns: many equal distances, whose order (the smaller index
    first) the batched search must keep."""
    return rand(shape, torch.int64, gen, lo=0, hi=3).to(torch.uint8) * 0x11


# (x1 per example, its in_dim, x2 per example, its in_dim)
DISTANCE_CASES = [
    ((3, 5), 0, (4, 5), 0),
    ((3, 5), 2, (4, 5), None),
    ((3, 5), None, (4, 5), 1),
    ((2, 3, 5), 1, (4, 5), 2),          # x1 of higher rank, both batched
    ((4, 5), 0, (2, 1, 3, 4, 5), 3),    # x2 of higher rank, batched inside its batch dims
    ((3, 5), None, (2, 4, 5), 0),       # only x2 batched, with a batch dim of its own
    ((2, 1, 3, 8), 4, (4, 6, 8), None),  # only x1 batched, batch dims broadcast two ways
    ((1, 3, 8), 0, (2, 4, 8), 0),
    ((0, 5), 0, (4, 5), None),          # no rows
    ((3, 0), 1, (2, 0), 0),             # codes of 0 bytes
]


@pytest.mark.parametrize("case", DISTANCE_CASES, ids=[str(c) for c in DISTANCE_CASES])
@pytest.mark.parametrize("dtypes", [(torch.uint8, torch.uint8), (torch.int8, torch.uint8)], ids=["uint8", "mixed"])
def test_hamming_distance_either_operand_batched(case, dtypes):
    gen = torch.Generator().manual_seed(20)
    s1, d1, s2, d2 = case
    x1 = codes(s1 if d1 is None else _with_batch(s1, d1), gen, dtypes[0])
    x2 = codes(s2 if d2 is None else _with_batch(s2, d2), gen, dtypes[1])
    got = check(lambda a, b: op.hamming_distance(a, b), (x1, x2), (d1, d2))
    assert got.dtype == torch.int32


# (queries per example, its in_dim, database per example, its in_dim, k)
TOPK_CASES = [
    ((3, 8), 0, (9, 8), None, 4),       # a batch of queries: one search
    ((3, 8), 2, (9, 8), None, 9),
    ((3, 8), None, (9, 8), 0, 4),       # a batch of databases: a search each
    ((3, 8), None, (9, 8), 2, 1),
    ((3, 8), 1, (9, 8), 1, 3),          # both
    ((3, 8), 0, (9, 8), 2, 0),          # k = 0
    ((0, 8), 0, (5, 8), None, 2),       # no queries
    ((0, 8), 1, (5, 8), 0, 2),
    ((4, 5), 0, (0, 5), 0, 0),          # an empty database
    ((2, 0), 0, (6, 0), 1, 6),          # codes of 0 bytes: every distance 0, the indices in order
]


@pytest.mark.parametrize("case", TOPK_CASES, ids=[str(c) for c in TOPK_CASES])
@pytest.mark.parametrize("make", [codes, tied_codes], ids=["codes", "ties"])
def test_hamming_topk_queries_or_database_batched(case, make):
    gen = torch.Generator().manual_seed(21)
    sq, dq, sd, dd, k = case
    queries = make(sq if dq is None else _with_batch(sq, dq), gen)
    database = make(sd if dd is None else _with_batch(sd, dd), gen)
    values, indices = check(lambda q, d: op.hamming_topk(q, d, k), (queries, database), (dq, dd))
    assert values.dtype == torch.int32 and indices.dtype == torch.int64


def test_search_nested_and_composed():
    gen = torch.Generator().manual_seed(22)
    queries = codes((B, 3, 2, 8), gen)   # outer dim 0, inner dim 1
    database = codes((7, 8, B), gen)     # outer dim 2, not batched inside
    f = lambda q, d: op.hamming_topk(q, d, 3)
    got = torch.vmap(torch.vmap(f, in_dims=(1, None)), in_dims=(0, 2))(queries, database)
    for i in range(B):
        for j in range(2):
            want = f(queries[i, :, j], database[..., i])
            assert torch.equal(got[0][i, j], want[0]) and torch.equal(got[1][i, j], want[1])
    # hamming_distance of packed signs, a batch of embeddings each
    x = torch.randn(B, 3, 16, generator=gen)
    y = torch.randn(4, 16, B, generator=gen)
    g = lambda a, b: op.hamming_distance(op.packbits(a > 0), op.packbits(b > 0))
    check(g, (x, y), (0, 2))
    rows = x.unsqueeze(2)  # (B, 3, 1, 16): inside, each row of an example is an x1 of one row
    d = torch.vmap(torch.vmap(g, in_dims=(0, None)), in_dims=(0, 2))(rows, y)
    assert torch.equal(d, torch.stack([torch.stack([g(rows[i, j], y[..., i]) for j in range(3)])
                                       for i in range(B)]))


@pytest.mark.parametrize("fn,args,in_dims", [
    (lambda a, b: op.hamming_distance(a, b), (torch.zeros(B, 5, dtype=torch.uint8),
                                              torch.zeros(B, 4, 5, dtype=torch.uint8)), (0, 0)),  # 1-d x1 (2-d batched)
    (lambda a, b: op.hamming_distance(a, b), (torch.zeros(B, 3, 5, dtype=torch.uint8),
                                              torch.zeros(4, 6, dtype=torch.uint8)), (0, None)),
    (lambda a, b: op.hamming_distance(a, b), (torch.zeros(B, 2, 3, 5, dtype=torch.uint8),
                                              torch.zeros(B, 3, 4, 5, dtype=torch.uint8)), (0, 0)),
    (lambda a, b: op.hamming_topk(a, b, 2), (torch.zeros(B, 2, 3, 5, dtype=torch.uint8),
                                             torch.zeros(4, 5, dtype=torch.uint8)), (0, None)),  # 3-d queries
    (lambda a, b: op.hamming_topk(a, b, 2), (torch.zeros(3, 5, dtype=torch.uint8),
                                             torch.zeros(B, 5, dtype=torch.uint8)), (None, 0)),  # 1-d database
    (lambda a, b: op.hamming_topk(a, b, 5), (torch.zeros(B, 3, 5, dtype=torch.uint8),
                                             torch.zeros(B, 4, 5, dtype=torch.uint8)), (0, 0)),  # k > N
    (lambda a, b: op.hamming_topk(a, b, 1), (torch.zeros(B, 3, 5, dtype=torch.int16),
                                             torch.zeros(4, 5, dtype=torch.uint8)), (0, None)),
])
def test_search_errors_name_the_example(fn, args, in_dims):
    with pytest.raises(Exception) as batched:
        torch.vmap(fn, in_dims=in_dims)(*args)
    with pytest.raises(Exception) as example:
        fn(*[select(a, d, 0) for a, d in zip(args, in_dims)])
    assert type(batched.value) is type(example.value) and str(batched.value) == str(example.value)


@pytest.mark.parametrize("xd,yd,od", [(0, 0, 0), (1, None, 2), (None, 2, 1), (None, None, 0)])
def test_hamming_distance_out(xd, yd, od):
    gen = torch.Generator().manual_seed(23)
    x1 = codes((3, 6) if xd is None else _with_batch((3, 6), xd), gen)
    x2 = codes((4, 6) if yd is None else _with_batch((4, 6), yd), gen, torch.int8)
    out = torch.full(_with_batch((3, 4), od), -1, dtype=torch.int32)
    f = lambda a, b, o: op.hamming_distance.out(a, b, out=o)
    want = _out_loop(f, out, od, (x1, x2), (xd, yd))

    def g(a, b, o):
        assert f(a, b, o) is o
        return o

    returned = torch.vmap(g, in_dims=(xd, yd, od), out_dims=od)(x1, x2, out)
    assert torch.equal(out, want) and torch.equal(returned, want)


@pytest.mark.parametrize("qd,dd,vd,id_", [(0, None, 0, 0), (1, 0, 2, 1), (None, 2, 0, 2), (None, None, 1, 0)])
def test_hamming_topk_out(qd, dd, vd, id_):
    gen = torch.Generator().manual_seed(24)
    queries = tied_codes((3, 4) if qd is None else _with_batch((3, 4), qd), gen)
    database = tied_codes((8, 4) if dd is None else _with_batch((8, 4), dd), gen)
    values = torch.full(_with_batch((3, 5), vd), -1, dtype=torch.int32)
    indices = torch.full(_with_batch((3, 5), id_), -1, dtype=torch.int64)
    want_values, want_indices = values.clone(), indices.clone()
    for i in range(B):
        op.hamming_topk.out(select(queries, qd, i), select(database, dd, i), 5,
                            values=want_values.select(vd, i), indices=want_indices.select(id_, i))

    def g(q, d, v, ix):
        returned = op.hamming_topk.out(q, d, 5, values=v, indices=ix)
        assert returned[0] is v and returned[1] is ix
        return v, ix

    got = torch.vmap(g, in_dims=(qd, dd, vd, id_), out_dims=(vd, id_))(queries, database, values, indices)
    assert torch.equal(values, want_values) and torch.equal(indices, want_indices)
    assert torch.equal(got[0], want_values) and torch.equal(got[1], want_indices)


def test_search_out_refusals():
    queries = torch.zeros(B, 3, 4, dtype=torch.uint8)
    database = torch.zeros(6, 4, dtype=torch.uint8)
    f = lambda q, v, i: op.hamming_topk.out(q, database, 2, values=v, indices=i)
    values, indices = torch.zeros(B, 3, 2, dtype=torch.int32), torch.zeros(B, 3, 2, dtype=torch.int64)
    # indices is refused before values is written
    with pytest.raises(TypeError, match="^torchops.hamming_topk: indices must be an int64 tensor, got int32$"):
        torch.vmap(f)(queries, values - 1, values)
    with pytest.raises(TypeError, match="^torchops.hamming_topk: values must be an int32 tensor, got int64$"):
        torch.vmap(f)(queries, indices, indices)
    shared = torch.full((3, 2), 7, dtype=torch.int64)
    with pytest.raises(RuntimeError, match=r"^vmap: torchops.hamming_topk\(\.\.\., indices=indices\) is not possible"):
        torch.vmap(f, in_dims=(0, 0, None))(queries, values, shared)
    assert torch.equal(values, torch.zeros(B, 3, 2, dtype=torch.int32))
    with pytest.raises(RuntimeError, match=r"indices has shape \[3, 5\] per example but the result has shape \[3, 2\]"):
        torch.vmap(f)(queries, values, torch.zeros(B, 3, 5, dtype=torch.int64))
    assert torch.equal(values, torch.zeros(B, 3, 2, dtype=torch.int32))
    assert torch.equal(shared, torch.full((3, 2), 7, dtype=torch.int64))
    g = lambda a, o: op.hamming_distance.out(a, database, out=o)
    with pytest.raises(RuntimeError, match="hamming_distance: out has dtype int64 but the result has dtype int32"):
        torch.vmap(g)(queries, torch.zeros(B, 3, 6, dtype=torch.int64))
    with pytest.raises(RuntimeError, match=r"^vmap: torchops.hamming_distance\(\.\.\., out=out\) is not possible"):
        torch.vmap(g, in_dims=(0, None))(queries, torch.zeros(3, 6, dtype=torch.int32))


@pytest.mark.usefixtures("call_path")
def test_search_typed_api_under_vmap():
    # torchops.hamming_distance and torchops.hamming_topk (their twins under vmap), out= too:
    # the named tuple of hamming_topk's results, batched.
    gen = torch.Generator().manual_seed(25)
    queries, database = tied_codes((B, 3, 4), gen), tied_codes((6, 4, B), gen)
    got = torch.vmap(lambda q, d: torchops.hamming_topk(q, d, 4), in_dims=(0, 2))(queries, database)
    want = loop(lambda q, d: tuple(torchops.hamming_topk(q, d, 4)), (queries, database), (0, 2))
    assert isinstance(got, torchops.HammingTopk)
    check_same("hamming_topk", tuple(got), want)
    values, indices = torch.zeros(B, 3, 4, dtype=torch.int32), torch.zeros(3, 4, B, dtype=torch.int64)

    def g(q, d, v, i):
        returned = torchops.hamming_topk(q, d, 4, out=(v, i))
        assert returned.values is v and returned.indices is i
        return v, i

    torch.vmap(g, in_dims=(0, 2, 0, 2), out_dims=(0, 2))(queries, database, values, indices)
    assert torch.equal(values, want[0]) and torch.equal(indices, want[1].movedim(0, 2))
    out = torch.zeros(3, 6, B, dtype=torch.int32)
    torch.vmap(lambda q, d, o: torchops.hamming_distance(q, d, out=o), in_dims=(0, 2, 2), out_dims=2)(
        queries, database, out)
    assert torch.equal(out, torch.stack([torchops.hamming_distance(queries[i], database[..., i]) for i in range(B)], 2))
