"""Loads the artifacts of examples/export_model.py in a fresh process and checks them
against the eager model, at a batch size the export did not see:

    python examples/run_exported.py artifacts/
"""
import os
import sys

import torch

import torchops  # noqa: F401  (must come before loading: registers torch.ops.torchops)
from shift_model import ShiftModel, example_inputs

out_dir = sys.argv[1]
inputs = example_inputs(batch=6)
expected = ShiftModel()(*inputs)

program = torch.export.load(os.path.join(out_dir, "shift_model.pt2"))
compiled = torch._inductor.aoti_load_package(os.path.join(out_dir, "shift_model_aoti.pt2"))
for name, outputs in [("torch.export", program.module()(*inputs)), ("AOTInductor", compiled(*inputs))]:
    assert len(outputs) == len(expected), name
    for got, want in zip(outputs, expected):
        assert got.dtype == want.dtype and torch.equal(got, want), f"{name}: {got} != {want}"
    print(f"{name}: {len(outputs)} outputs equal the eager model's")
