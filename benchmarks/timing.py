"""The timing harness shared by bench.py and compiled.py.

measure() times contenders side by side, alternating between them inside each repetition in a
fresh random order; calmest() measures again while the samples are too noisy; record_times()
puts the medians into a result row; ratio_interval() says how far the noise moves a ratio of
two contenders; cores_busy() and wait_for_cores() tell whether another process holds a core,
which slows every multi-threaded call. Nothing here knows what is being measured.
"""
from __future__ import annotations

import gc
import math
import random
import statistics
import time

import torch

# Time per sample (a batch of calls, so that tiny calls are measurable) and per contender.
SAMPLE_SECONDS = 0.001
# At least this many repetitions: a median of fewer follows what happened to run before. The
# quick run's 16M-element cases took 5-6 (each call ~1 ms) and put torchops's int8 shifts and
# bfloat16 signbit at 0.78-0.90x the bandwidth reference on 2 threads; over 40 the same cases
# measure 0.93-0.99x (Intel Xeon, avx512_bitalg), and PyTorch's own shift as torchops's.
MIN_REPS = 21
MAX_REPS = 200
MAX_SPREAD = 0.2  # a case whose samples spread more (interquartile range / median) is measured again,
RETRIES = 2       # up to RETRIES times, keeping the calmest measurement
BUSY_PROBE_SECONDS = 0.001  # see cores_busy()
MAX_WAIT_PER_CASE = 15.0    # seconds to wait for a free core before a multi-threaded case


def batch_seconds(function, calls: int) -> float:
    """The fastest of 2 batches: how long a batch takes when nothing else gets in the way."""
    best = math.inf
    for _ in range(2):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, time.perf_counter() - start)
    return best


def measure(functions: dict, seconds_per_contender: float, min_reps: int = MIN_REPS) -> dict[str, list[float]]:
    """Samples (seconds per call) of each function, from alternating, repeated runs.

    A sample times `number` back-to-back calls (enough for ~1 ms) and divides; all contenders
    get the same number of repetitions, enough for `seconds_per_contender` of samples each
    (at least `min_reps`); each repetition runs them in a fresh random order (seeded: the
    same orders every run). A rotation would keep each contender's predecessor the same, and
    from 1M elements a call's speed depends on the one before it: two copies of the same
    compiled hash64 at 1M, 1 thread, differed 1.4x, the slower always the one after the same
    contender. In a random order every contender follows each of the others as often, so
    that cost falls on all alike.
    """
    order = random.Random(0)
    names = list(functions)
    number, sample_time = {}, {}
    for name in names:
        function = functions[name]
        function()  # warm-up
        calls = 1
        while True:
            start = time.perf_counter()
            for _ in range(calls):
                function()
            elapsed = time.perf_counter() - start
            if elapsed >= SAMPLE_SECONDS:
                break
            calls = max(calls * 2, int(calls * SAMPLE_SECONDS * 1.2 / max(elapsed, 1e-9)))
        if elapsed < seconds_per_contender / min_reps:  # the estimate sets the repetitions: don't let noise cut them
            elapsed = min(elapsed, batch_seconds(function, calls))
        number[name], sample_time[name] = calls, elapsed
    reps = max(min_reps, min(MAX_REPS, math.ceil(seconds_per_contender / max(sample_time.values()))))

    samples = {name: [] for name in names}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for rep in range(reps):
            for name in order.sample(names, len(names)):
                function, calls = functions[name], number[name]
                start = time.perf_counter()
                for _ in range(calls):
                    function()
                samples[name].append((time.perf_counter() - start) / calls)
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples


def spread(samples: list[float]) -> float:
    """Interquartile range / median: how noisy a measurement is."""
    quartiles = statistics.quantiles(samples, n=4)
    return (quartiles[2] - quartiles[0]) / statistics.median(samples)


# ratio_interval()'s coverage: the chance that the interval holds the median of the ratios
# that repetitions of the same two calls would measure.
CONFIDENCE = 0.95


def ratio_interval(numerator: list[float], denominator: list[float]) -> tuple[float, float]:
    """The interval, at CONFIDENCE, of the median ratio of two contenders of one measure().

    Their samples are paired by repetition (a repetition runs every contender once, one right
    after another), and the ratio of each pair cancels what slowed that repetition alike for
    both. The interval is the order statistics of those ratios whose ranks a binomial count
    sets (the sign test's interval for a median: no assumption about the distribution): with
    21 repetitions, the 6th to the 16th smallest ratio.
    """
    ratios = sorted(n / d for n, d in zip(numerator, denominator, strict=True))
    count = len(ratios)
    # the largest k with P(Binomial(count, 1/2) < k) <= (1 - CONFIDENCE) / 2
    k, below = 0, 0.0
    while True:
        below_next = below + math.comb(count, k) / 2 ** count
        if below_next > (1 - CONFIDENCE) / 2:
            break
        k, below = k + 1, below_next
    if k == 0:
        return ratios[0], ratios[-1]  # too few pairs for the confidence: their whole range
    return ratios[k - 1], ratios[count - k]


def record_times(row: dict, samples: dict[str, list[float]], mine: str, key=lambda name: name) -> dict[str, float]:
    """Each contender's median into row[<key(name)>_us] (µs), the noise and repetitions of
    `mine`'s samples into row["spread"] and row["reps"]; returns the medians (seconds)."""
    times = {name: statistics.median(values) for name, values in samples.items()}
    for name, seconds in times.items():
        row[f"{key(name)}_us"] = seconds * 1e6
    row["spread"] = spread(samples[mine])
    row["reps"] = len(samples[mine])
    return times


def calmest(measure_once) -> dict[str, list[float]]:
    """measure_once() (contender -> samples), measured again while too noisy (a busy machine),
    up to RETRIES times; the calmest of the measurements."""
    samples = measure_once()
    for _ in range(RETRIES):
        if max(map(spread, samples.values())) <= MAX_SPREAD:
            break
        again = measure_once()
        if max(map(spread, again.values())) < max(map(spread, samples.values())):
            samples = again
    return samples


# ---------------------------------------------------------------------------------------------
# Other processes on the machine.

# cores_busy()'s probe: 256K elements, well above PyTorch's grain size (32K), so the add is
# split across the threads. Allocated once, so the probe times the add alone.
_PROBE, _PROBE_OUT = torch.ones(256 << 10, dtype=torch.int32), torch.empty(256 << 10, dtype=torch.int32)


def cores_busy() -> bool:
    """Whether a multi-threaded call now waits for a core another process holds.

    On a shared machine this makes every parallel call (any library) take a scheduler slice
    (~8 ms here) instead of tens of µs, which hides the kernels' speed; the probe, a
    256K-element add split across the threads, normally takes ~20-60 µs.
    """
    times = []
    for _ in range(5):
        start = time.perf_counter()
        torch.add(_PROBE, 1, out=_PROBE_OUT)
        times.append(time.perf_counter() - start)
    return statistics.median(times) > BUSY_PROBE_SECONDS


def wait_for_cores(max_seconds: float) -> tuple[float, bool]:
    """Wait (up to max_seconds) until no other process holds a core; (seconds waited, still busy)."""
    start = time.perf_counter()
    while cores_busy():
        if time.perf_counter() - start >= max_seconds:
            return time.perf_counter() - start, True
        time.sleep(0.5)
    return time.perf_counter() - start, False
