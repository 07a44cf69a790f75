"""Calls from many Python threads at once, ops inside other parallel work, and fork."""
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import torch

import model
from conftest import kill_process_tree
import torchops

THREADS = 8


def shared_inputs(n=200_003):
    generator = torch.Generator().manual_seed(5)
    x = torch.randint(-(2**31), 2**31, (n,), generator=generator, dtype=torch.int64).to(torch.int32)
    y = torch.randint(-2, 40, (n,), generator=generator, dtype=torch.int32)
    return x, y


def expected(x, y, direction, arithmetic):
    # The model on the distinct (value, count) pairs of a sample, then a comparison on that sample:
    # full-size Python-int modelling of 200K elements per thread would dominate the test.
    index = torch.arange(0, x.numel(), 997)
    xs, ys = x[index].tolist(), y[index].tolist()
    return index, [model.shift_scalar(a, b, torch.int32, direction, arithmetic) for a, b in zip(xs, ys)]


def test_many_python_threads_share_inputs_and_write_separate_outputs(restore_num_threads):
    torch.set_num_threads(2)
    x, y = shared_inputs()
    x_before, y_before = x.clone(), y.clone()
    operations = [("LEFT", True), ("RIGHT", True), ("RIGHT", False)]
    reference = {op: torchops.bitshift(x, y, *op) for op in operations}
    for op, out in reference.items():
        index, want = expected(x, y, *op)
        assert out[index].tolist() == want

    def work(i):
        op = operations[i % len(operations)]
        out = torch.empty_like(x)
        for _ in range(20):
            torchops.bitshift(x, y, *op, out=out)
            if not torch.equal(out, reference[op]):
                return f"thread {i}: {op} differs"
            if not torch.equal(torchops.signbit(x), x < 0):
                return f"thread {i}: signbit differs"
        return None

    with ThreadPoolExecutor(THREADS) as pool:
        failures = [f for f in pool.map(work, range(THREADS)) if f]
    assert failures == []
    assert torch.equal(x, x_before) and torch.equal(y, y_before)


def run_python(code, directory, timeout=120):
    """A fresh interpreter on a script file (TorchScript reads its source), so that a hang
    is a failed test (timeout), not a hung suite."""
    script = directory / "script.py"
    script.write_text(textwrap.dedent(code))
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONFAULTHANDLER": "1"}, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_process_tree(process)  # with the children a test's script forked
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_ops_inside_inter_op_tasks_neither_deadlock_nor_oversubscribe(tmp_path):
    # torch.jit.fork runs tasks on PyTorch's inter-op pool; each task's op then uses the
    # intra-op pool (at::parallel_for) from inside that parallel work.
    result = run_python("""
        import torch, torchops
        torch.set_num_threads(2)

        @torch.jit.script
        def shift_all(xs: list[torch.Tensor], y: torch.Tensor) -> list[torch.Tensor]:
            futures = [torch.jit.fork(torch.ops.torchops.bitshift, x, y, "RIGHT", False) for x in xs]
            return [torch.jit.wait(f) for f in futures]

        xs = [torch.full((300_000,), -1 - i, dtype=torch.int32) for i in range(8)]
        y = torch.tensor(4, dtype=torch.int32)
        for _ in range(5):
            outs = shift_all(xs, y)
        for i, out in enumerate(outs):
            want = ((-1 - i) & 0xFFFFFFFF) >> 4
            assert bool((out == want).all()), (i, out[:3])
        assert torch.get_num_threads() == 2, torch.get_num_threads()
        print("ok")
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_fork_after_use_then_use_in_the_child(tmp_path):
    # GNU OpenMP's thread pool does not survive fork(): PyTorch 2.13's own parallel ops hang
    # in such a child (unless it calls torch.set_num_threads(1) first). torchops runs a
    # forked child's loops on the calling thread, so the child below uses only torchops on
    # the tensor it inherited, and checks samples (a torch comparison of 500K elements would
    # itself open a parallel region).
    result = run_python("""
        import multiprocessing as mp
        import torch, torchops

        torch.set_num_threads(2)
        x = torch.full((500_000,), -8, dtype=torch.int16)  # large enough for the thread pool

        def child(queue):
            out = torchops.bitshift(x, 1, "RIGHT", True)
            negative = torchops.signbit(x)
            queue.put(set(out[::997].tolist()) == {-4} and all(negative[::997].tolist()))

        if __name__ == "__main__":
            assert bool((torchops.bitshift(x, 1, "RIGHT", True) == -4).all())   # the pool now exists
            context = mp.get_context("fork")
            queue = context.Queue()
            process = context.Process(target=child, args=(queue,))
            process.start()
            answer = queue.get(timeout=60)
            process.join(timeout=60)
            assert answer is True and process.exitcode == 0, (answer, process.exitcode)
            print("ok")
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
