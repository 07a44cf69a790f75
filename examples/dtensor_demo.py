"""torchops on DTensors: a tensor sharded over 2 processes, each shifting only its own rows.

    python -m torch.distributed.run --standalone --nproc-per-node 2 examples/dtensor_demo.py
"""
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh

import torchops

dist.init_process_group("gloo", timeout=timedelta(seconds=60))  # CPU; torch.distributed.run sets the rank
mesh = init_device_mesh("cpu", (dist.get_world_size(),))

x = torch.tensor([[-102, 16], [-8, 4], [-1, 64], [127, -128], [26, 1]], dtype=torch.int32)
counts = torch.tensor([3, 1], dtype=torch.int32)
dx = distribute_tensor(x, mesh, [Shard(0)])  # rank 0 holds rows 0-2, rank 1 rows 3-4
dcounts = distribute_tensor(counts, mesh, [Replicate()])  # every rank holds all of it

results = {  # name: (the op on the DTensors, the same op on the whole tensor)
    "bitwise_left_shift(x, counts)": (torchops.bitwise_left_shift(dx, dcounts), torchops.bitwise_left_shift(x, counts)),
    "bitshift(x, 2, 'RIGHT')": (torchops.bitshift(dx, 2, "RIGHT"), torchops.bitshift(x, 2, "RIGHT")),
    "signbit(x)": (torchops.signbit(dx), torchops.signbit(x)),
}
failures = 0
for name, (result, expected) in results.items():
    same = torch.equal(result.full_tensor(), expected)  # full_tensor() gathers: every rank calls it
    failures += not same
    if dist.get_rank() == 0:
        print(f"{name:30} {result.placements}  rank 0 holds {result.to_local().tolist()}  {'ok' if same else 'WRONG'}")
dist.barrier()  # no rank leaves while another still needs it
dist.destroy_process_group()
# Leave without Python's shutdown: in PyTorch 2.13 gloo's threads outlive the process group
# once DTensor has used it, and one may still be letting go of the last collective's tensors,
# which takes the GIL; during shutdown that aborts the process ("terminate called without an
# active exception", pytorch/pytorch#190489).
sys.stdout.flush()
os._exit(1 if failures else 0)
