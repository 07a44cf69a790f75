"""Saves ShiftModel (examples/shift_model.py) three ways, into the directory given:

  shift_model.pt        TorchScript (torch.jit.script), for torch::jit::load in C++
  shift_model.pt2       torch.export program with a dynamic batch dimension (torch.export.save)
  shift_model_aoti.pt2  AOTInductor package of that program, for Python and C++

    python examples/export_model.py artifacts/
"""
import os
import sys

import torch

import torchops  # noqa: F401  (the export's fake kernels and the AOTInductor build need the ops)
from shift_model import ShiftModel, example_inputs

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
model = ShiftModel()

torch.jit.script(model).save(os.path.join(out_dir, "shift_model.pt"))

batch = torch.export.Dim("batch")
program = torch.export.export(model, example_inputs(batch=4), dynamic_shapes=({0: batch}, None))
torch.export.save(program, os.path.join(out_dir, "shift_model.pt2"))

package = torch._inductor.aoti_compile_and_package(program, package_path=os.path.join(out_dir, "shift_model_aoti.pt2"))
print(f"saved shift_model.pt, shift_model.pt2 and {os.path.basename(package)} in {out_dir}")
