// The C++ API declared in torchops/include/torchops/ops.h: each function calls its
// operator's typed handle (csrc/overloads.h) through the dispatcher, so C++ callers get
// the same checks, kernels, version counting and tracing as torch.ops.torchops.* in Python.
#include "torchops/ops.h"

#include "overloads.h"

// A definition that ops.h does not declare is an error (it would be hidden from programs:
// the library is built with -fvisibility=hidden, and only ops.h's TORCHOPS_API exports).
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wmissing-declarations"

namespace torchops {

at::Tensor bitshift(const at::Tensor& x, const at::Tensor& y, std::string_view direction, bool arithmetic) {
  return op::bitshift().call(x, y, direction, arithmetic);
}

at::Tensor bitshift(const at::Tensor& x, const at::Scalar& y, std::string_view direction, bool arithmetic) {
  return op::bitshift_scalar().call(x, y, direction, arithmetic);
}

const at::Tensor& bitshift_(const at::Tensor& x, const at::Tensor& y, std::string_view direction, bool arithmetic) {
  return op::bitshift_inplace().call(op::writable(x), y, direction, arithmetic);
}

const at::Tensor& bitshift_(const at::Tensor& x, const at::Scalar& y, std::string_view direction, bool arithmetic) {
  return op::bitshift_scalar_inplace().call(op::writable(x), y, direction, arithmetic);
}

const at::Tensor& bitshift_out(const at::Tensor& out, const at::Tensor& x, const at::Tensor& y,
                               std::string_view direction, bool arithmetic) {
  return op::bitshift_out().call(x, y, direction, arithmetic, op::writable(out));
}

const at::Tensor& bitshift_out(const at::Tensor& out, const at::Tensor& x, const at::Scalar& y,
                               std::string_view direction, bool arithmetic) {
  return op::bitshift_scalar_out().call(x, y, direction, arithmetic, op::writable(out));
}

// A unary op's two functions, from its row in csrc/overloads.h.
#define TORCHOPS_DEFINE_UNARY(X, name)                                           \
  at::Tensor name(const at::Tensor& x) {                                        \
    return op::name().call(x);                                                  \
  }                                                                             \
  const at::Tensor& name##_out(const at::Tensor& out, const at::Tensor& x) {    \
    return op::name##_out().call(x, op::writable(out));                         \
  }
TORCHOPS_FOR_EACH_UNARY_OP(TORCHOPS_DEFINE_UNARY, )
#undef TORCHOPS_DEFINE_UNARY

}  // namespace torchops

#pragma GCC diagnostic pop
