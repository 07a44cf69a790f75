// The CPU kernel of every overload of csrc/overloads.h, named after its handle
// (torchops::cpu::bitshift_scalar_out, ...): defined in the op's file (csrc/ops/bitshift.cpp,
// signbit.cpp, ...), registered from the list by csrc/registration.cpp, for the CPU and
// QuantizedCPU keys.
#pragma once

#include "overloads.h"

namespace torchops::cpu {

#define TORCHOPS_DECLARE_CPU_KERNEL(function, Signature, kind, name, overload, schema) op::Signature function;
TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_DECLARE_CPU_KERNEL)
#undef TORCHOPS_DECLARE_CPU_KERNEL

}  // namespace torchops::cpu
