// Every overload of the torchops library, in one list (TORCHOPS_FOR_EACH_OVERLOAD): its
// schema, which csrc/registration.cpp defines, its C++ signature, and its typed handle.
// Adding an overload is a line here, its CPU kernel named after the handle (csrc/ops/cpu.h),
// its fake (torchops/_fake.py) and, for one that writes a tensor, its version counting
// (csrc/ops/autograd.cpp).
//
// A handle is looked up in the dispatcher once, on first use. Calling it is a full
// dispatcher call: every dispatch key (Autograd, Python modes, tracing, functorch) sees it,
// exactly as a call through torch.ops.torchops.* does. Used by the C++ API (csrc/api.cpp),
// the version counting kernels (csrc/ops/autograd.cpp) and the Python binding (binding/).
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

// X(handle, Signature, name, overload, schema). Mutating overloads return nothing, so that
// torch.compile can functionalize them.
#define TORCHOPS_FOR_EACH_OVERLOAD(X)                                                                            \
  X(bitshift, Bitshift, "bitshift", "",                                                                          \
    "bitshift(Tensor x, Tensor y, str direction, bool arithmetic=True) -> Tensor")                                 \
  X(bitshift_scalar, BitshiftScalar, "bitshift", "Scalar",                                                        \
    "bitshift.Scalar(Tensor x, Scalar y, str direction, bool arithmetic=True) -> Tensor")                          \
  X(bitshift_out, BitshiftOut, "bitshift", "out",                                                                 \
    "bitshift.out(Tensor x, Tensor y, str direction, bool arithmetic=True, *, Tensor(a!) out) -> ()")              \
  X(bitshift_scalar_out, BitshiftScalarOut, "bitshift", "Scalar_out",                                             \
    "bitshift.Scalar_out(Tensor x, Scalar y, str direction, bool arithmetic=True, *, Tensor(a!) out) -> ()")       \
  X(bitshift_inplace, BitshiftInplace, "bitshift_", "",                                                           \
    "bitshift_(Tensor(a!) x, Tensor y, str direction, bool arithmetic=True) -> ()")                                \
  X(bitshift_scalar_inplace, BitshiftScalarInplace, "bitshift_", "Scalar",                                        \
    "bitshift_.Scalar(Tensor(a!) x, Scalar y, str direction, bool arithmetic=True) -> ()")                         \
  X(signbit, Signbit, "signbit", "", "signbit(Tensor x) -> Tensor")                                                \
  X(signbit_out, SignbitOut, "signbit", "out", "signbit.out(Tensor x, *, Tensor(a!) out) -> ()")

#define TORCHOPS_OP_HANDLE(function, Signature, name, overload, schema)                      \
  inline const c10::TypedOperatorHandle<Signature>& function() {                              \
    static const auto handle = detail::find<Signature>("torchops::" name, overload);          \
    return handle;                                                                            \
  }
TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_OP_HANDLE)
#undef TORCHOPS_OP_HANDLE

}  // namespace torchops::op
