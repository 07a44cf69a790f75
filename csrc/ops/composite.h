// The device-generic kernels (csrc/ops/composite.cpp): one entry per overload of
// csrc/overloads.h, named after its handle (torchops::composite::bitshift_scalar_out, ...),
// and one per loop of TORCHOPS_FOR_EACH_LOOP. csrc/registration.cpp registers them for
// CompositeExplicitAutograd, which serves every backend key that has no kernel of its own
// (CUDA, XPU, MPS, PrivateUse1, ...), and for the CPU under TORCHOPS_CPU_KERNELS.
#pragma once

#include "overloads.h"

namespace torchops::composite {

#define TORCHOPS_DECLARE_COMPOSITE_KERNEL(function, Signature, kind, name, overload, schema) op::Signature function;
TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_DECLARE_COMPOSITE_KERNEL)
#undef TORCHOPS_DECLARE_COMPOSITE_KERNEL

#define TORCHOPS_DECLARE_COMPOSITE_LOOP(function, Signature, name, schema) op::Signature function;
TORCHOPS_FOR_EACH_LOOP(TORCHOPS_DECLARE_COMPOSITE_LOOP)
#undef TORCHOPS_DECLARE_COMPOSITE_LOOP

}  // namespace torchops::composite
