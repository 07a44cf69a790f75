// The device-generic kernels: one entry per overload of csrc/overloads.h, named after its
// handle (torchops::composite::bitshift_scalar_out, ...), and one per compute op of
// TORCHOPS_FOR_EACH_COMPUTE, defined in csrc/ops/composite.cpp (bitshift) and in a unary op's
// own file (csrc/ops/signbit.cpp, ...). csrc/registration.cpp registers them for
// CompositeExplicitAutograd, which serves every backend key that has no kernel of its own
// (CUDA, XPU, MPS, PrivateUse1, ...), and for the CPU under TORCHOPS_CPU_KERNELS.
#pragma once

#include <initializer_list>

#include "overloads.h"

namespace torchops::composite {

#define TORCHOPS_DECLARE_COMPOSITE_KERNEL(function, Signature, kind, name, overload, schema) op::Signature function;
TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_DECLARE_COMPOSITE_KERNEL)
#undef TORCHOPS_DECLARE_COMPOSITE_KERNEL

#define TORCHOPS_DECLARE_COMPOSITE_COMPUTE(function, Signature, name, schema) op::Signature function;
TORCHOPS_FOR_EACH_COMPUTE(TORCHOPS_DECLARE_COMPOSITE_COMPUTE)
#undef TORCHOPS_DECLARE_COMPOSITE_COMPUTE

// What the entries and compute ops share (csrc/ops/composite.cpp).

// The result the CPU kernels' iterator gives these inputs: an output of `dtype` in their
// layout (or `out`, resized when `resize` as they resize it), after the same overlap checks;
// `promotes`: that iterator converts the inputs of another dtype to `dtype` first, which can
// change the layout (a binary op's promotion). Only the allocation: the inputs are not
// converted, the compute op does that.
at::Tensor output_for(const char* op_name, const at::Tensor& out, std::initializer_list<const at::Tensor*> inputs,
                      at::ScalarType dtype, bool resize, bool promotes);

// The signed dtype of `dtype`'s width, in which the compute ops compute.
at::ScalarType signed_of_width(at::ScalarType dtype);

// The bits `tensor` has once converted to the result dtype, as values of `computed` (the
// signed dtype of its width): a view when it has the result dtype, else a conversion to
// `computed`, which wraps to the same low bits as one to the result dtype would.
at::Tensor bits_as(const at::Tensor& tensor, at::ScalarType result, at::ScalarType computed);

}  // namespace torchops::composite
