"""Exports ShiftModel (examples/shift_model.py) to ONNX with torchops.onnx, at torch.onnx's
default opset and at opset 28, with a dynamic batch dimension; runs both in onnxruntime at a
batch size the export did not see and compares every output with the eager model. Then a
float signbit, which needs opset 26 or later:

    python examples/export_onnx.py artifacts/
"""
import os
import sys

import onnx
import torch

import torchops
import torchops.onnx  # needs the extra: pip install torchops[onnx]
from shift_model import ShiftModel, example_inputs

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
inputs = example_inputs(batch=6)
expected = ShiftModel()(*inputs)

for opset in (None, 28):  # None: torch.onnx's default, 20
    path = os.path.join(out_dir, f"shift_model_opset{opset or torchops.onnx.DEFAULT_OPSET}.onnx")
    torchops.onnx.export(ShiftModel(), example_inputs(batch=4), path, opset_version=opset,
                         dynamic_shapes=({0: "batch"}, None))
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    outputs = torchops.onnx.run(path, inputs)  # onnxruntime, on torch tensors
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.dtype == want.dtype and torch.equal(got, want), f"{path}: {got} != {want}"
    version = next(o.version for o in model.opset_import if o.domain == "")
    print(f"opset {version}: {len(outputs)} outputs equal the eager model's "
          f"(ONNX ops: {', '.join(sorted({node.op_type for node in model.graph.node}))})")


class Signs(torch.nn.Module):
    def forward(self, x):
        return torchops.signbit(x)


x = torch.tensor([-0.0, 0.0, float("-inf"), -float("nan"), float("nan"), -1.5])
program = torchops.onnx.export(Signs(), (x,), opset_version=26, verify=True)  # verify: exact, in onnxruntime
print(f"signbit at opset 26: {torchops.onnx.run(program, (x,))[0].tolist()}")
