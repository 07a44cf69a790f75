// The operator schemas of the torchops library, in one place. Kernels register
// themselves beside their code: csrc/ops/ (CPU) and csrc/ops/autograd.cpp.
// Mutating overloads return nothing so that torch.compile can functionalize them.
#include <torch/library.h>

#include "dispatch/capability.h"

TORCH_LIBRARY(torchops, m) {
  const std::vector<at::Tag> tags = {at::Tag::pt2_compliant_tag, at::Tag::pointwise};
  m.def("bitshift(Tensor x, Tensor y, str direction, bool arithmetic=True) -> Tensor", tags);
  m.def("bitshift.Scalar(Tensor x, Scalar y, str direction, bool arithmetic=True) -> Tensor", tags);
  m.def("bitshift.out(Tensor x, Tensor y, str direction, bool arithmetic=True, *, Tensor(a!) out) -> ()", tags);
  m.def("bitshift.Scalar_out(Tensor x, Scalar y, str direction, bool arithmetic=True, *, Tensor(a!) out) -> ()",
        tags);
  m.def("bitshift_(Tensor(a!) x, Tensor y, str direction, bool arithmetic=True) -> ()", tags);
  m.def("bitshift_.Scalar(Tensor(a!) x, Scalar y, str direction, bool arithmetic=True) -> ()", tags);
  m.def("signbit(Tensor x) -> Tensor", tags);
  m.def("signbit.out(Tensor x, *, Tensor(a!) out) -> ()", tags);

  // The kernel level (csrc/dispatch/), as ops so that Python and C++ reach it alike.
  m.def("_cpu_capability() -> str", &torchops::cpu_capability);
  m.def("_supported_cpu_capabilities() -> str[]", &torchops::supported_cpu_capabilities);
  m.def("_set_cpu_capability(str capability) -> ()",
        [](c10::string_view capability) { torchops::set_cpu_capability(std::string(capability)); });
}
