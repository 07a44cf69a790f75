"""The benchmarks' verdicts (benchmarks/targets.py) and the interval they rest on
(benchmarks/timing.ratio_interval): on made-up rows and samples, never on a timing.

The interval's ranks are checked against published tables of the sign test's interval for a
median, and against its definition (the widest ranks whose coverage is still at least the
confidence) computed from a binomial distribution of our own.
"""
import fractions
import math
import os
import random
import sys

import pytest

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import targets  # noqa: E402
import timing  # noqa: E402


def ranks(count):
    """The 1-based ranks ratio_interval picks: it is given the ratios 1..count, shuffled."""
    numerator = [float(i) for i in range(1, count + 1)]
    random.Random(count).shuffle(numerator)
    low, high = timing.ratio_interval(numerator, [1.0] * count)
    return int(low), int(high)


# Ranks of the 95% interval for a median, as tables of the sign test give them.
@pytest.mark.parametrize("count, expected", [(6, (1, 6)), (9, (2, 8)), (10, (2, 9)), (21, (6, 16)), (40, (14, 27)),
                                             (100, (40, 61))])
def test_interval_ranks_match_the_tables(count, expected):
    assert ranks(count) == expected


def test_interval_is_the_narrowest_with_the_coverage():
    for count in range(6, 201):
        low, high = ranks(count)
        assert low + high == count + 1, count  # symmetric

        def coverage(k):  # P(k <= Binomial(count, 1/2) <= count - k), exactly
            return sum(fractions.Fraction(math.comb(count, j), 2 ** count) for j in range(k, count - k + 1))

        assert coverage(low) >= fractions.Fraction(95, 100) > coverage(low + 1), count


def test_too_few_pairs_give_their_whole_range():
    assert timing.ratio_interval([3.0, 1.0, 2.0, 5.0, 4.0], [1.0] * 5) == (1.0, 5.0)


def test_pairs_are_taken_by_repetition():
    # The same samples in another pairing give other ratios: a repetition's two samples go together.
    slow_then_fast = [2.0] * 11 + [1.0] * 10
    assert timing.ratio_interval(slow_then_fast, slow_then_fast) == (1.0, 1.0)
    with pytest.raises(ValueError):
        timing.ratio_interval([1.0, 2.0], [1.0])


TITLE = "every shift and signbit case >= 1.0x PyTorch builtin from 64K elements"


def row(x_torch, interval=None, size=1 << 20):
    r = {"op": "left", "size": size, "torch_peer": "builtin", "operands": "tensor", "level": "avx2",
         "x_torch": x_torch, "x_bandwidth": 0.97, "spread": 0.1}
    if interval is not None:
        r["x_torch_interval"] = interval
    return r


def verdict(rows):
    results = {title: (status, detail) for status, title, detail in targets.evaluate("bench", rows, lambda r: "case")}
    return results[TITLE]


def test_every_row_at_the_threshold_passes():
    assert verdict([row(1.0, (0.9, 1.1)), row(1.3)])[0] == "PASS"


def test_rows_below_within_their_noise_tie():
    status, detail = verdict([row(1.2), row(0.98, (0.91, 1.06)), row(0.95, (0.90, 1.0))])
    assert status == "TIE"
    assert detail.startswith("2 of 3 cases below 1.0x, none measurably")
    assert "interval 0.90-1.00x" in detail and "97% of the bandwidth reference" in detail


def test_one_row_measurably_below_misses():
    status, detail = verdict([row(0.98, (0.91, 1.06)), row(0.95, (0.90, 0.99))])
    assert status == "MISS"
    assert detail.startswith("1 of 2 cases measurably below 1.0x")
    assert "0.95x case (interval 0.90-0.99x" in detail and detail.endswith("1 more below it within their noise")


def test_a_row_without_an_interval_below_misses():
    # compiled.py's and call_cost.py's rows have no paired interval: below is below.
    assert verdict([row(0.99)])[0] == "MISS"


def test_rows_a_target_is_not_set_on_are_not_judged():
    assert verdict([row(0.5, (0.4, 0.6), size=1024)])[0] == "NOT MEASURED"
