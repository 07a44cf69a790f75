// The C++ API declared in torchops/include/torchops/ops.h: each function looks its
// operator up once and calls it through the dispatcher, so C++ callers get the same
// checks, kernels, Autograd handling and tracing as torch.ops.torchops.* in Python.
#include "torchops/ops.h"

#include <ATen/core/dispatch/Dispatcher.h>

namespace torchops {
namespace {

template <class Signature>
c10::TypedOperatorHandle<Signature> find_op(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Signature>();
}

using Shift = at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view, bool);
using ShiftScalar = at::Tensor(const at::Tensor&, const at::Scalar&, c10::string_view, bool);
using ShiftInplace = void(const at::Tensor&, const at::Tensor&, c10::string_view, bool);
using ShiftScalarInplace = void(const at::Tensor&, const at::Scalar&, c10::string_view, bool);
using ShiftOut = void(const at::Tensor&, const at::Tensor&, c10::string_view, bool, const at::Tensor&);
using ShiftScalarOut = void(const at::Tensor&, const at::Scalar&, c10::string_view, bool, const at::Tensor&);

}  // namespace

at::Tensor bitshift(const at::Tensor& x, const at::Tensor& y, std::string_view direction, bool arithmetic) {
  static const auto op = find_op<Shift>("torchops::bitshift", "");
  return op.call(x, y, direction, arithmetic);
}

at::Tensor bitshift(const at::Tensor& x, const at::Scalar& y, std::string_view direction, bool arithmetic) {
  static const auto op = find_op<ShiftScalar>("torchops::bitshift", "Scalar");
  return op.call(x, y, direction, arithmetic);
}

const at::Tensor& bitshift_(const at::Tensor& x, const at::Tensor& y, std::string_view direction, bool arithmetic) {
  static const auto op = find_op<ShiftInplace>("torchops::bitshift_", "");
  op.call(x, y, direction, arithmetic);
  return x;
}

const at::Tensor& bitshift_(const at::Tensor& x, const at::Scalar& y, std::string_view direction, bool arithmetic) {
  static const auto op = find_op<ShiftScalarInplace>("torchops::bitshift_", "Scalar");
  op.call(x, y, direction, arithmetic);
  return x;
}

const at::Tensor& bitshift_out(const at::Tensor& out, const at::Tensor& x, const at::Tensor& y,
                               std::string_view direction, bool arithmetic) {
  static const auto op = find_op<ShiftOut>("torchops::bitshift", "out");
  op.call(x, y, direction, arithmetic, out);
  return out;
}

const at::Tensor& bitshift_out(const at::Tensor& out, const at::Tensor& x, const at::Scalar& y,
                               std::string_view direction, bool arithmetic) {
  static const auto op = find_op<ShiftScalarOut>("torchops::bitshift", "Scalar_out");
  op.call(x, y, direction, arithmetic, out);
  return out;
}

at::Tensor signbit(const at::Tensor& x) {
  static const auto op = find_op<at::Tensor(const at::Tensor&)>("torchops::signbit", "");
  return op.call(x);
}

const at::Tensor& signbit_out(const at::Tensor& out, const at::Tensor& x) {
  static const auto op = find_op<void(const at::Tensor&, const at::Tensor&)>("torchops::signbit", "out");
  op.call(x, out);
  return out;
}

}  // namespace torchops
