// The C++ API declared in torchops/include/torchops/ops.h: each function calls its
// operator's typed handle (csrc/overloads.h) through the dispatcher, so C++ callers get
// the same checks, kernels, version counting and tracing as torch.ops.torchops.* in Python.
#include "torchops/ops.h"

#include "overloads.h"

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

at::Tensor signbit(const at::Tensor& x) {
  return op::signbit().call(x);
}

const at::Tensor& signbit_out(const at::Tensor& out, const at::Tensor& x) {
  return op::signbit_out().call(x, op::writable(out));
}

at::Tensor bitwise_count(const at::Tensor& x) {
  return op::bitwise_count().call(x);
}

const at::Tensor& bitwise_count_out(const at::Tensor& out, const at::Tensor& x) {
  return op::bitwise_count_out().call(x, op::writable(out));
}

}  // namespace torchops
