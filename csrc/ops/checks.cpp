#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include "ops/checks.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <c10/util/safe_numerics.h>

#include <algorithm>
#include <limits>

namespace torchops {
namespace {

// A layout as Python spells it (torch.sparse_coo), as the typed API's message names it.
const char* layout_name(at::Layout layout) {
  switch (layout) {
    case at::kStrided: return "torch.strided";
    case at::kSparse: return "torch.sparse_coo";
    case at::kSparseCsr: return "torch.sparse_csr";
    case at::kSparseCsc: return "torch.sparse_csc";
    case at::kSparseBsr: return "torch.sparse_bsr";
    case at::kSparseBsc: return "torch.sparse_bsc";
    case at::kMkldnn: return "torch._mkldnn";
    case at::kJagged: return "torch.jagged";
    default: return "a layout of its own";
  }
}

// What an exception says, without a C++ backtrace.
const char* words_of(const std::exception& error) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&error);
  return c10_error ? c10_error->what_without_backtrace() : error.what();
}

// The bytes a tensor's elements span in its storage, from its offset.
uint64_t bytes_spanned(const at::Tensor& t) {
  return at::detail::computeStorageNbytes(t.sizes(), t.strides(), t.itemsize(), t.storage_offset());
}

uint64_t bytes_of(at::IntArrayRef shape, const at::TensorOptions& options) {
  return static_cast<uint64_t>(c10::multiply_integers(shape)) * options.dtype().itemsize();
}

}  // namespace

OutGeometry::OutGeometry(const at::Tensor& out)
    : defined(out.defined()),
      sizes(defined ? out.sizes() : at::IntArrayRef()),
      strides(defined ? out.strides() : at::IntArrayRef()),
      offset(defined ? out.storage_offset() : 0) {}

void restore_outs(const char* op_name, std::initializer_list<NamedTensor> outs, const std::vector<OutGeometry>& before,
                  const std::exception& error) {
  std::string failed_allocation;
  const OutGeometry* was = before.data();
  for (const auto& [arg, out] : outs) {
    const OutGeometry& geometry = *was++;
    if (!geometry.defined || (out->sizes().equals(geometry.sizes) && out->strides().equals(geometry.strides) &&
                              out->storage_offset() == geometry.offset)) {
      continue;
    }
    const uint64_t needed = bytes_spanned(*out);
    if (failed_allocation.empty() && needed > out->storage().nbytes()) {
      failed_allocation = c10::str(arg, " cannot be resized to shape ", out->sizes(), " of ",
                                   dtype_name(out->scalar_type()), " (", needed, " bytes): ", words_of(error));
    }
    out->as_strided_(geometry.sizes, geometry.strides, geometry.offset);
  }
  TORCH_CHECK_WITH(OutOfMemoryError, failed_allocation.empty(), op_name, ": ", failed_allocation);
}

at::Tensor empty_result(const char* op_name, at::IntArrayRef shape, const at::TensorOptions& options) {
  try {
    return at::empty(shape, options);
  } catch (const c10::Error& e) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, op_name, ": its result of shape ", shape, " of ",
                     dtype_name(options.dtype().toScalarType()), " (", bytes_of(shape, options),
                     " bytes) cannot be allocated: ", e.what_without_backtrace());
  }
}

void check_strided(const char* op_name, std::initializer_list<NamedTensor> tensors) {
  for (const auto& [arg, tensor] : tensors) {
    TORCH_CHECK_TYPE(!tensor->defined() || tensor->layout() == at::kStrided, op_name, ": ", arg,
                     " must be a strided (dense) tensor, got ", layout_name(tensor->layout()));
  }
}

void check_same_device(const char* op_name, const at::Tensor& x, std::initializer_list<NamedTensor> others) {
  check_same_device(op_name, {"x", &x}, others);
}

void check_same_device(const char* op_name, NamedTensor first, std::initializer_list<NamedTensor> others) {
  const at::Tensor& x = *first.second;
  for (const auto& [arg, tensor] : others) {
    TORCH_CHECK(!x.defined() || !tensor->defined() || tensor->device() == x.device(), op_name, ": ", arg,
                " is on device ", tensor->device(), " but ", first.first, " is on device ", x.device(),
                "; all tensors must be on one device");
  }
}

void check_no_overlap(const char* op_name, const at::Tensor& out, std::initializer_list<const at::Tensor*> inputs) {
  try {
    at::assert_no_internal_overlap(out);
    for (const at::Tensor* input : inputs) at::assert_no_overlap(out, *input);
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, op_name, ": ", e.what_without_backtrace());
  }
}

void check_shift_tensor(const char* op_name, const char* arg, const at::Tensor& tensor) {
  check_defined(op_name, arg, tensor);
  TORCH_CHECK_TYPE(is_shift_dtype(tensor.scalar_type()), op_name, ": ", arg, " must be an integer tensor (",
                   kShiftDtypeNames, "), got ", dtype_name(tensor.scalar_type()));
}

ShiftOp parse_shift_op(const char* op_name, c10::string_view direction, bool arithmetic, at::ScalarType dtype) {
  const bool left = direction == "LEFT" || direction == "left";
  const bool right = direction == "RIGHT" || direction == "right";
  TORCH_CHECK_VALUE(left || right, op_name, ": direction must be one of 'LEFT', 'RIGHT', 'left', 'right', got '",
                    std::string(direction), "'");
  if (left) return ShiftOp::Left;
  // An arithmetic right shift of an unsigned value fills with its top bit's zero-extension:
  // zeros, i.e. the logical shift.
  return arithmetic && at::isSignedType(dtype) ? ShiftOp::RightArithmetic : ShiftOp::RightLogical;
}

at::ScalarType shift_result_type(const char* op_name, const at::Tensor& x, const at::Tensor& y,
                                 OtherCounts other_counts) {
  check_shift_tensor(op_name, "x", x);
  check_shift_tensor(op_name, "y", y);
  if (x.scalar_type() == y.scalar_type()) return x.scalar_type();  // what promotion gives, without its cost
  try {
    return at::result_type(x, y);
  } catch (const c10::Error&) {
    TORCH_CHECK_TYPE(false, op_name, ": x (", dtype_name(x.scalar_type()), ") and y (", dtype_name(y.scalar_type()),
                     ") have no common dtype (PyTorch promotes uint16, uint32 and uint64 only with their own dtype); "
                     "shift by y.to(torch.", dtype_name(x.scalar_type()), ")",
                     other_counts == OtherCounts::python_int ? ", or by a Python int" : "");
  }
}

at::DimVector broadcast_shape(const char* op_name, const at::Tensor& x, const at::Tensor& y,
                              at::ScalarType result_dtype) {
  at::DimVector shape;
  try {
    shape = at::infer_size_dimvector(x.sizes(), y.sizes());
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, op_name, ": x of shape ", x.sizes(), " and y of shape ", y.sizes(),
                " do not broadcast: ", e.what_without_backtrace());
  }
  check_result_size(op_name, c10::str("x of shape ", x.sizes(), " and y of shape ", y.sizes()), shape, result_dtype);
  return shape;
}

void check_result_size(const char* op_name, const std::string& source, at::IntArrayRef shape, at::ScalarType dtype) {
  uint64_t bytes = 0;
  const bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();  // whatever the other sizes
  const bool overflows = c10::safe_multiplies_u64(shape, &bytes) ||
                         c10::mul_overflows(bytes, static_cast<uint64_t>(c10::elementSize(dtype)), &bytes) ||
                         bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  TORCH_CHECK_VALUE(empty || !overflows, op_name, ": ", source, ": a result of shape ", shape, " (", dtype_name(dtype),
                    ") would exceed the 2**63 - 1 bytes a tensor can hold");
}

void check_out_dtype(const char* op_name, const at::Tensor& out, at::ScalarType result_dtype) {
  check_defined(op_name, "out", out);
  TORCH_CHECK(out.scalar_type() == result_dtype, op_name, ": out has dtype ", dtype_name(out.scalar_type()),
              " but the result has dtype ", dtype_name(result_dtype), "; out= does not convert, pass an out of dtype ",
              dtype_name(result_dtype));
}

void check_inplace_dtype(at::ScalarType result_dtype, const at::Tensor& x, const at::Tensor& y) {
  TORCH_CHECK(result_dtype == x.scalar_type(), kBitshiftInplaceOp, ": the result dtype ", dtype_name(result_dtype),
              " (promoted from x ", dtype_name(x.scalar_type()), " and y ", dtype_name(y.scalar_type()),
              ") differs from x's dtype ", dtype_name(x.scalar_type()), "; an in-place shift cannot change x's dtype");
}

void check_inplace_shape(at::IntArrayRef result_shape, const at::Tensor& x) {
  TORCH_CHECK(x.sizes().equals(result_shape), kBitshiftInplaceOp, ": the result has the broadcast shape ",
              result_shape, " but x has shape ", x.sizes(), "; an in-place shift cannot change x's shape");
}

uint64_t scalar_count(const char* op_name, const at::Scalar& y) {
  TORCH_CHECK_TYPE(y.isIntegral(/*includeBool=*/false), op_name, ": y must be an integer, got a ",
                   dtype_name(y.type()), " scalar");
  return y.isUnsigned() ? y.to<uint64_t>() : std::numeric_limits<uint64_t>::max();
}

bool sign_in_top_bit(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: case at::kBFloat16: case at::kFloat: case at::kDouble:
    case at::kChar: case at::kShort: case at::kInt: case at::kLong:
      return true;
    default:
      return false;
  }
}

void check_signbit_input(const char* op_name, const at::Tensor& x) {
  check_defined(op_name, "x", x);
  const at::ScalarType dtype = x.scalar_type();
  TORCH_CHECK_TYPE(sign_in_top_bit(dtype) || is_unsigned_integer(dtype) || dtype == at::kBool, op_name,
                   ": x must be a float16, bfloat16, float32, float64, integer or bool tensor, got ",
                   dtype_name(dtype));
}

void check_integer_or_bool_input(const char* op_name, const at::Tensor& x) {
  check_defined(op_name, "x", x);
  const at::ScalarType dtype = x.scalar_type();
  TORCH_CHECK_TYPE(is_shift_dtype(dtype) || dtype == at::kBool, op_name, ": x must be an integer or bool tensor (",
                   kShiftDtypeNames, ", bool), got ", dtype_name(dtype));
}

}  // namespace torchops
