"""torchops ops on DTensors, with 2 real processes (gloo, CPU, loopback).

tests/dtensor_worker.py runs every case of its CASES on each of 2 ranks and writes a line of
results per case; each case is one test here, so a failure names its case and says why.
examples/dtensor_demo.py runs under torch.distributed.run. Every process is started in a
session of its own, with a time limit, and killed with all its descendants if it overruns
(the ranks' collectives also time out, after 60 s). The subprocesses inherit the
environment (scripts/sanitize.sh's PYTHONPATH and LD_PRELOAD).
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import dtensor_worker
from conftest import kill_process_tree

pytestmark = pytest.mark.skipif(
    not (torch.distributed.is_available() and torch.distributed.is_gloo_available()),
    reason="needs torch.distributed with gloo",
)

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).resolve().parent / "dtensor_worker.py"
DEMO = ROOT / "examples" / "dtensor_demo.py"
WORLD_SIZE = 2
TIMEOUT = 180  # seconds, for a whole run; the processes' own collectives time out after 60


def _env():
    # gloo on loopback; one thread per rank (the 2 ranks share the machine).
    return {**os.environ, "GLOO_SOCKET_IFNAME": os.environ.get("GLOO_SOCKET_IFNAME", "lo"), "OMP_NUM_THREADS": "1"}


def _run_all(commands, directory, timeout=TIMEOUT):
    """Runs the commands at once; returns [(returncode, stdout, stderr)], or fails the test
    (after killing everything) if they are not all done within `timeout` seconds."""
    processes = []
    try:
        for i, command in enumerate(commands):
            stdout = open(directory / f"{i}.stdout", "w")
            stderr = open(directory / f"{i}.stderr", "w")
            with stdout, stderr:
                processes.append(subprocess.Popen(command, stdout=stdout, stderr=stderr, env=_env(), cwd=directory,
                                                  start_new_session=True))
        deadline = time.monotonic() + timeout
        for process in processes:
            try:
                process.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                pytest.fail(f"{commands} did not finish within {timeout} s; killed\n" + _outputs(directory, commands))
    finally:
        for process in processes:
            if process.poll() is None:
                kill_process_tree(process)
    return [(p.returncode, (directory / f"{i}.stdout").read_text(), (directory / f"{i}.stderr").read_text())
            for i, p in enumerate(processes)]


def _outputs(directory, commands):
    return "\n".join(
        f"--- process {i} {stream}:\n{(directory / f'{i}.{stream}').read_text()[-4000:]}"
        for i in range(len(commands)) for stream in ("stdout", "stderr")
    )


@pytest.fixture(scope="module")
def worker_results(tmp_path_factory):
    """{case name: [result of rank 0, result of rank 1]}, from one run of the 2 workers."""
    directory = tmp_path_factory.mktemp("dtensor")
    init_file = directory / "init"  # a FileStore: no port to find
    commands = [[sys.executable, str(WORKER), str(rank), str(WORLD_SIZE), str(init_file),
                 str(directory / f"results{rank}.jsonl")] for rank in range(WORLD_SIZE)]
    ran = _run_all(commands, directory)
    if any(code != 0 for code, _, _ in ran):
        pytest.fail(f"the DTensor workers failed (exit codes {[code for code, _, _ in ran]})\n"
                    + _outputs(directory, commands))
    results = {}
    for rank in range(WORLD_SIZE):
        for line in (directory / f"results{rank}.jsonl").read_text().splitlines():
            outcome = json.loads(line)
            results.setdefault(outcome["case"], [None] * WORLD_SIZE)[rank] = outcome
    return results


@pytest.mark.parametrize("name", dtensor_worker.CASE_NAMES)
def test_case(worker_results, name):
    outcomes = worker_results.get(name)
    assert outcomes is not None and None not in outcomes, f"case {name}: no result from some rank: {outcomes}"
    failures = [f"rank {rank}: {outcome['error']}" for rank, outcome in enumerate(outcomes) if not outcome["ok"]]
    assert not failures, f"case {name}:\n" + "\n".join(failures)


def test_demo_runs_under_torch_distributed_run(tmp_path):
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={WORLD_SIZE}",
               str(DEMO)]
    [(code, stdout, stderr)] = _run_all([command], tmp_path)
    assert code == 0, f"exit code {code}\n{stdout}\n{stderr}"
    lines = stdout.splitlines()
    assert len(lines) == 3, stdout  # only rank 0 prints, a line per op
    for line, op in zip(lines, ["bitwise_left_shift(x, counts)", "bitshift(x, 2, 'RIGHT')", "signbit(x)"]):
        assert line.startswith(op) and "(Shard(dim=0),)" in line and line.endswith("  ok"), line
    assert "rank 0 holds [[-816, 32], [-64, 8], [-8, 128]]" in lines[0]


@pytest.mark.parametrize("dtensor_first", [False, True], ids=["torchops_first", "dtensor_first"])
def test_rules_are_registered_when_torch_distributed_tensor_is_imported(dtensor_first):
    code = f"""if True:
        import sys, torch
        {"import torch.distributed.tensor" if dtensor_first else ""}
        import torchops
        if not {dtensor_first}:
            assert "torch.distributed.tensor" not in sys.modules, "import torchops loaded torch.distributed.tensor"
        from torch.distributed.tensor import DTensor
        from torchops import _contract
        propagator = DTensor._op_dispatcher.sharding_propagator
        for op in _contract.OVERLOADS:
            assert op in propagator.op_strategy_funcs, op
            if torch.Tag.out in op.tags:  # the cached decision depends on the outs' placements
                outs = set(a.name for a in op._schema.arguments if a.is_out)
                assert outs <= set(propagator.op_to_schema_info[op].static_kwargkey), op
        assert torch.distributed.tensor.__spec__.loader is torch.distributed.tensor.__loader__
        assert not type(torch.distributed.tensor.__loader__).__module__.startswith("torchops")
        print("ok")
    """
    result = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120,
                            env=_env())
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr


def test_nothing_is_registered_without_torch_distributed(monkeypatch):
    from torchops import _sharding

    monkeypatch.setattr(torch.distributed, "is_available", lambda: False)
    monkeypatch.setattr(_sharding, "_register", lambda: pytest.fail("registered without torch.distributed"))
    meta_path = list(sys.meta_path)
    _sharding.install()
    assert sys.meta_path == meta_path
