// The torchops library, registered from csrc/overloads.h's lists: every overload's schema
// and tags, its CPU kernel (csrc/ops/cpu.h) for the CPU and QuantizedCPU keys, its
// device-generic kernel (csrc/ops/composite.h) for every other backend, and the Autograd
// fallthrough; the private compute ops behind the device-generic kernels. The writing
// overloads' version counting (ADInplaceOrView): csrc/ops/autograd.cpp.
#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include <torch/library.h>

#include <vector>

#include "dispatch/capability.h"
#include "ops/composite.h"
#include "ops/cpu.h"
#include "overloads.h"

namespace {

// Every op follows PyTorch 2's rules for custom ops (pt2_compliant); the pointwise ones say
// so (torch.Tag.pointwise: Inductor and DTensor may treat them as elementwise), the packing
// ones, which change a dim's size, and the search ones, which reduce over codes, do not; a writing overload says which kind of write it
// makes (csrc/overloads.h's Kind).
std::vector<at::Tag> tags_of(torchops::op::Kind kind, bool pointwise) {
  std::vector<at::Tag> tags = {at::Tag::pt2_compliant_tag};
  if (pointwise) tags.push_back(at::Tag::pointwise);
  if (kind == torchops::op::Kind::out) tags.push_back(at::Tag::out);
  if (kind == torchops::op::Kind::inplace) tags.push_back(at::Tag::inplace);
  return tags;
}

}  // namespace

TORCH_LIBRARY(torchops, m) {
  // Where the fake (meta) kernels are: PyTorch names it when they are missing (the library
  // loaded without `import torchops`) and checks that they are registered from there.
  m.set_python_module("torchops._fake");
  // m.def takes the tags by const reference: a temporary would pick its (schema, kernel) form.
#define TORCHOPS_DEFINE_POINTWISE(function, Signature, kind, name, overload, schema)          \
  {                                                                                          \
    const std::vector<at::Tag> tags = tags_of(torchops::op::Kind::kind, /*pointwise=*/true); \
    m.def(schema, tags);                                                                     \
  }
  TORCHOPS_FOR_EACH_POINTWISE_OVERLOAD(TORCHOPS_DEFINE_POINTWISE)
#undef TORCHOPS_DEFINE_POINTWISE
#define TORCHOPS_DEFINE_NOT_POINTWISE(function, Signature, kind, name, overload, schema)      \
  {                                                                                           \
    const std::vector<at::Tag> tags = tags_of(torchops::op::Kind::kind, /*pointwise=*/false); \
    m.def(schema, tags);                                                                      \
  }
  TORCHOPS_FOR_EACH_PACKING_OVERLOAD(TORCHOPS_DEFINE_NOT_POINTWISE)
  TORCHOPS_FOR_EACH_SEARCH_OVERLOAD(TORCHOPS_DEFINE_NOT_POINTWISE)
#undef TORCHOPS_DEFINE_NOT_POINTWISE

  // The compute ops of the device-generic kernels (csrc/ops/composite.cpp); private,
  // untagged: only those kernels call them, below every key that traces or transforms a
  // call.
#define TORCHOPS_DEFINE_COMPUTE(function, Signature, name, schema) m.def(schema);
  TORCHOPS_FOR_EACH_COMPUTE(TORCHOPS_DEFINE_COMPUTE)
#undef TORCHOPS_DEFINE_COMPUTE

  // The kernel level (csrc/dispatch/), as ops so that Python and C++ reach it alike.
  m.def("_cpu_capability() -> str", &torchops::cpu_capability);
  m.def("_cpu_capabilities() -> str[]", &torchops::cpu_capabilities);
  m.def("_supported_cpu_capabilities() -> str[]", &torchops::supported_cpu_capabilities);
  m.def("_set_cpu_capability(str capability) -> ()",
        [](c10::string_view capability) { torchops::set_cpu_capability(std::string(capability)); });
}

// A plain function pointer rather than TORCH_FN: TORCH_FN's compile-time null check of a
// function defined in another file does not compile under -fsanitize=undefined.
#define TORCHOPS_IMPL_CPU(function, Signature, kind, name, overload, schema) \
  m.impl(TORCHOPS_OVERLOAD_NAME(name, overload), &torchops::cpu::function);

// TORCHOPS_CPU_KERNELS=composite or =triton (csrc/dispatch/capability.h) gives CPU tensors
// the device-generic kernels instead, whose compute ops run their composite kernels or, with
// triton, the Triton ones torchops/_triton.py registers for the CPU.
#define TORCHOPS_IMPL_CPU_OR_COMPOSITE(function, Signature, kind, name, overload, schema) \
  m.impl(TORCHOPS_OVERLOAD_NAME(name, overload), levels ? &torchops::cpu::function : &torchops::composite::function);

TORCH_LIBRARY_IMPL(torchops, CPU, m) {
  const bool levels = torchops::cpu_kernels() == torchops::CpuKernels::levels;
  TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_IMPL_CPU_OR_COMPOSITE)
}
#undef TORCHOPS_IMPL_CPU_OR_COMPOSITE

// Quantized tensors are refused by the same checks (a TypeError naming the dtype), rather
// than by the dispatcher's NotImplementedError for a missing QuantizedCPU kernel.
TORCH_LIBRARY_IMPL(torchops, QuantizedCPU, m) {
  TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_IMPL_CPU)
}
#undef TORCHOPS_IMPL_CPU

// Every other backend (CUDA, XPU, MPS, PrivateUse1, Meta before torchops/_fake.py registers
// the fake kernels, ...): the device-generic kernels, made of ATen ops. A backend's own
// kernel overrides them (the CPU's above; the compute ops' Triton kernels for CUDA and XPU,
// torchops/_triton.py).
#define TORCHOPS_IMPL_COMPOSITE(function, Signature, kind, name, overload, schema) \
  m.impl(TORCHOPS_OVERLOAD_NAME(name, overload), &torchops::composite::function);
#define TORCHOPS_IMPL_COMPOSITE_COMPUTE(function, Signature, name, schema) \
  m.impl(name, &torchops::composite::function);
TORCH_LIBRARY_IMPL(torchops, CompositeExplicitAutograd, m) {
  TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_IMPL_COMPOSITE)
  TORCHOPS_FOR_EACH_COMPUTE(TORCHOPS_IMPL_COMPOSITE_COMPUTE)
}
#undef TORCHOPS_IMPL_COMPOSITE
#undef TORCHOPS_IMPL_COMPOSITE_COMPUTE

// Autograd: a fallthrough for every overload and compute op. Without a kernel at that key,
// PyTorch's autograd fallback would run (boxed: every argument copied onto a stack and
// back) and attach a grad_fn that warns or errors at backward time; with the fallthrough
// the dispatcher skips the key, so a call costs nothing there and no output ever has a
// grad_fn (the outputs are integer or bool tensors, which cannot require grad anyway).
TORCH_LIBRARY_IMPL(torchops, Autograd, m) {
#define TORCHOPS_FALLTHROUGH(function, Signature, kind, name, overload, schema) \
  m.impl(TORCHOPS_OVERLOAD_NAME(name, overload), torch::CppFunction::makeFallthrough());
  TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_FALLTHROUGH)
#undef TORCHOPS_FALLTHROUGH
#define TORCHOPS_COMPUTE_FALLTHROUGH(function, Signature, name, schema) \
  m.impl(name, torch::CppFunction::makeFallthrough());
  TORCHOPS_FOR_EACH_COMPUTE(TORCHOPS_COMPUTE_FALLTHROUGH)
#undef TORCHOPS_COMPUTE_FALLTHROUGH
}
