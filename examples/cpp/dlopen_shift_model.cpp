// Loads the torchops library at run time (no link-time dependency on it), then runs the
// TorchScript model of examples/export_model.py.
//
//   dlopen_shift_model TORCHOPS_LIBRARY ARTIFACT_DIR
// TORCHOPS_LIBRARY: python -c 'import torchops; print(torchops.library_path())'
#include <dlfcn.h>
#include <torch/script.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: dlopen_shift_model TORCHOPS_LIBRARY ARTIFACT_DIR\n";
    return 2;
  }
  // Loading the library runs its registrations: every torchops:: operator appears.
  if (dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::cerr << "cannot load " << argv[1] << ": " << dlerror() << "\n";
    return 1;
  }
  torch::jit::Module scripted = torch::jit::load(std::string(argv[2]) + "/shift_model.pt");
  // example_inputs(batch=6) of shift_model.py, as in run_shift_model.cpp.
  const at::Tensor x = torch::arange(6 * 8, torch::kInt32).reshape({6, 8}) * 123457 - 3000000;
  const at::Tensor counts = torch::arange(8, torch::kInt32) * 5 - 3;
  const c10::IValue outputs = scripted.forward({x, counts});
  const at::Tensor negative = outputs.toTupleRef().elements()[5].toTensor();
  std::cout << "signbit(x) through the dlopen'ed library: " << negative.sum().item<int64_t>() << " of "
            << negative.numel() << " elements are negative\n";
  return 0;
}
