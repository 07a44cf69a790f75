"""Tensors of more than 2**31 elements: every index and offset must be 64-bit.

int8 keeps them at ~2.1 GiB each. The values are constant except for short runs at the
start, around the 2**31 boundary and at the end, which are checked against the model; the
constant stretch in between is checked as a whole."""
import pytest
import torch

import model
import torchops

N = 2**31 + 77  # not a multiple of any vector width: the last step is a partial one
RUN = 64
BOUNDARY = 2**31 - RUN // 2  # a run that straddles element 2**31
FILL = -3
STARTS = (0, BOUNDARY, N - RUN)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def huge_x():
    x = torch.full((N,), FILL, dtype=torch.int8)
    values = torch.arange(-128, -128 + RUN, dtype=torch.int64).to(torch.int8) * 3  # wraps: all 256 patterns mixed
    for start in STARTS:
        x[start : start + RUN] = values
    return x


def check(out, x, count, direction, arithmetic):
    for start in STARTS:
        xs = x[start : start + RUN].tolist()
        want = [model.shift_scalar(v, count, torch.int8, direction, arithmetic) for v in xs]
        assert out[start : start + RUN].tolist() == want, start
    fill = model.shift_scalar(FILL, count, torch.int8, direction, arithmetic)
    middle = out[RUN:BOUNDARY]
    assert bool((middle == fill).all()), "the constant stretch before 2**31"
    assert bool((out[BOUNDARY + RUN : N - RUN] == fill).all()), "the constant stretch after 2**31"


@pytest.mark.parametrize("direction,arithmetic", [("LEFT", True), ("RIGHT", True), ("RIGHT", False)],
                         ids=["left", "right_arith", "right_logical"])
def test_more_than_2_31_elements_with_a_python_int_count(huge_x, direction, arithmetic):
    out = torchops.bitshift(huge_x, 3, direction, arithmetic)
    check(out, huge_x, 3, direction, arithmetic)


def test_more_than_2_31_elements_with_a_broadcast_count(huge_x):
    count = torch.tensor([5], dtype=torch.int8)  # shape (1,): broadcast over all of x
    out = torchops.bitshift(huge_x, count, "RIGHT", True)
    check(out, huge_x, 5, "RIGHT", True)


def test_more_than_2_31_elements_signbit(huge_x):
    out = torchops.signbit(huge_x)
    for start in STARTS:
        assert out[start : start + RUN].tolist() == [v < 0 for v in huge_x[start : start + RUN].tolist()], start
    assert bool(out[RUN:BOUNDARY].all()) and bool(out[BOUNDARY + RUN : N - RUN].all())  # FILL < 0
