"""The sample of the sweeps that the README's command and CI's sampled configurations run
(tests/conftest.py's sample_of), on stand-in parametrizations: what it must keep."""
import collections
import itertools
import types

import pytest

from conftest import COVERED_VALUES, sample_of

DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"]


def parametrizations(**values):
    """Stand-ins for a test function's items: one per combination of VALUES' lists."""
    names = list(values)
    return [types.SimpleNamespace(nodeid=f"tests/test_x.py::test_x[{'-'.join(map(str, combination))}]",
                                  callspec=types.SimpleNamespace(params=dict(zip(names, combination))))
            for combination in itertools.product(*values.values())]


def values_kept(kept, name):
    return {item.callspec.params[name] for item in kept}


@pytest.mark.parametrize("one_in", [8, 64, 10**6])
def test_every_value_of_a_parameter_of_few_values_is_kept(one_in):
    cases = list(range(40))  # a list of cases: the sweep itself, more than COVERED_VALUES
    group = parametrizations(dtype=DTYPES, kind=["tensor", "scalar", "0-d"], case=cases)
    kept = sample_of(group, one_in, cover=True)
    assert values_kept(kept, "dtype") == set(DTYPES)
    assert values_kept(kept, "kind") == {"tensor", "scalar", "0-d"}
    # The many-valued parameter is sampled, not covered: about one in one_in, plus what the
    # cover brings (at most one item a covered value).
    assert len(kept) <= len(group) // one_in + len(DTYPES) + 3 + 1
    assert len(values_kept(kept, "case")) < len(cases)


def test_a_parameter_of_more_values_than_the_limit_is_sampled_whole_or_not():
    many = list(range(COVERED_VALUES + 1))
    few = list(range(COVERED_VALUES))
    assert values_kept(sample_of(parametrizations(value=many), 10**6, cover=True), "value") != set(many)
    assert values_kept(sample_of(parametrizations(value=few), 10**6, cover=True), "value") == set(few)


def test_without_cover_one_in_n_and_at_least_one():
    group = parametrizations(dtype=DTYPES, case=range(40))
    kept = sample_of(group, 8, cover=False)
    assert 0 < len(kept) < len(group) // 4
    assert len(sample_of(group, 10**6, cover=False)) == 1


def test_the_sample_is_the_same_every_run_and_in_any_order():
    group = parametrizations(dtype=DTYPES, case=range(40))
    first = [item.nodeid for item in sample_of(group, 8, cover=True)]
    again = [item.nodeid for item in sample_of(list(reversed(group)), 8, cover=True)]
    assert collections.Counter(first) == collections.Counter(again)
