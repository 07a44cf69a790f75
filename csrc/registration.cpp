// The torchops library: the schemas of csrc/overloads.h's list. Kernels register
// themselves beside their code: csrc/ops/ (CPU) and csrc/ops/autograd.cpp.
#include <torch/library.h>

#include "dispatch/capability.h"
#include "overloads.h"

TORCH_LIBRARY(torchops, m) {
  // Where the fake (meta) kernels are: PyTorch names it when they are missing (the library
  // loaded without `import torchops`) and checks that they are registered from there.
  m.set_python_module("torchops._fake");
  const std::vector<at::Tag> tags = {at::Tag::pt2_compliant_tag, at::Tag::pointwise};
#define TORCHOPS_DEFINE(function, Signature, name, overload, schema) m.def(schema, tags);
  TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_DEFINE)
#undef TORCHOPS_DEFINE

  // The kernel level (csrc/dispatch/), as ops so that Python and C++ reach it alike.
  m.def("_cpu_capability() -> str", &torchops::cpu_capability);
  m.def("_supported_cpu_capabilities() -> str[]", &torchops::supported_cpu_capabilities);
  m.def("_set_cpu_capability(str capability) -> ()",
        [](c10::string_view capability) { torchops::set_cpu_capability(std::string(capability)); });
}
