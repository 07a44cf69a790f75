// Typed handles of the registered torchops overloads (csrc/registration.cpp), each looked
// up in the dispatcher once, on first use. Calling a handle is a full dispatcher call:
// every dispatch key (Autograd, Python modes, tracing, functorch) sees it, exactly as a
// call through torch.ops.torchops.* does. Used by the C++ API (csrc/api.cpp), the version
// counting kernels (csrc/ops/autograd.cpp) and the Python binding (binding/).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Scalar.h>

namespace torchops::op {

using Bitshift = at::Tensor(const at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic);
using BitshiftScalar = at::Tensor(const at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                                  bool arithmetic);
using BitshiftOut = void(const at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic,
                         const at::Tensor& out);
using BitshiftScalarOut = void(const at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                               bool arithmetic, const at::Tensor& out);
using BitshiftInplace = void(const at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic);
using BitshiftScalarInplace = void(const at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                                   bool arithmetic);
using Signbit = at::Tensor(const at::Tensor& x);
using SignbitOut = void(const at::Tensor& x, const at::Tensor& out);

namespace detail {
template <class Signature>
c10::TypedOperatorHandle<Signature> find(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Signature>();
}
}  // namespace detail

#define TORCHOPS_OP_HANDLE(function, Signature, name, overload)                              \
  inline const c10::TypedOperatorHandle<Signature>& function() {                              \
    static const auto handle = detail::find<Signature>("torchops::" name, overload);          \
    return handle;                                                                            \
  }

TORCHOPS_OP_HANDLE(bitshift, Bitshift, "bitshift", "")
TORCHOPS_OP_HANDLE(bitshift_scalar, BitshiftScalar, "bitshift", "Scalar")
TORCHOPS_OP_HANDLE(bitshift_out, BitshiftOut, "bitshift", "out")
TORCHOPS_OP_HANDLE(bitshift_scalar_out, BitshiftScalarOut, "bitshift", "Scalar_out")
TORCHOPS_OP_HANDLE(bitshift_inplace, BitshiftInplace, "bitshift_", "")
TORCHOPS_OP_HANDLE(bitshift_scalar_inplace, BitshiftScalarInplace, "bitshift_", "Scalar")
TORCHOPS_OP_HANDLE(signbit, Signbit, "signbit", "")
TORCHOPS_OP_HANDLE(signbit_out, SignbitOut, "signbit", "out")

#undef TORCHOPS_OP_HANDLE

}  // namespace torchops::op
