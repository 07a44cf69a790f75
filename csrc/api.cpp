// The C++ API declared in torchops/include/torchops/ops.h: each function calls its
// operator's typed handle (csrc/overloads.h) through the dispatcher, so C++ callers get
// the same checks, kernels, version counting and tracing as torch.ops.torchops.* in Python.
#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

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

at::Tensor packbits(const at::Tensor& x, std::optional<int64_t> dim, std::string_view bitorder) {
  return op::packbits().call(x, dim, bitorder);
}

const at::Tensor& packbits_out(const at::Tensor& out, const at::Tensor& x, std::optional<int64_t> dim,
                               std::string_view bitorder) {
  return op::packbits_out().call(x, dim, bitorder, op::writable(out));
}

at::Tensor unpackbits(const at::Tensor& x, std::optional<int64_t> dim, std::optional<int64_t> count,
                      std::string_view bitorder) {
  return op::unpackbits().call(x, dim, count, bitorder);
}

const at::Tensor& unpackbits_out(const at::Tensor& out, const at::Tensor& x, std::optional<int64_t> dim,
                                 std::optional<int64_t> count, std::string_view bitorder) {
  return op::unpackbits_out().call(x, dim, count, bitorder, op::writable(out));
}

at::Tensor pack(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, std::string_view bitorder) {
  return op::pack().call(x, bits, dim, bitorder);
}

const at::Tensor& pack_out(const at::Tensor& out, const at::Tensor& x, int64_t bits, std::optional<int64_t> dim,
                           std::string_view bitorder) {
  return op::pack_out().call(x, bits, dim, bitorder, op::writable(out));
}

at::Tensor unpack(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, std::optional<int64_t> count,
                  std::string_view bitorder, bool is_signed) {
  return op::unpack().call(x, bits, dim, count, bitorder, is_signed);
}

const at::Tensor& unpack_out(const at::Tensor& out, const at::Tensor& x, int64_t bits, std::optional<int64_t> dim,
                             std::optional<int64_t> count, std::string_view bitorder, bool is_signed) {
  return op::unpack_out().call(x, bits, dim, count, bitorder, is_signed, op::writable(out));
}

at::Tensor hamming_distance(const at::Tensor& x1, const at::Tensor& x2) {
  return op::hamming_distance().call(x1, x2);
}

const at::Tensor& hamming_distance_out(const at::Tensor& out, const at::Tensor& x1, const at::Tensor& x2) {
  return op::hamming_distance_out().call(x1, x2, op::writable(out));
}

std::tuple<at::Tensor, at::Tensor> hamming_topk(const at::Tensor& queries, const at::Tensor& database, int64_t k) {
  return op::hamming_topk().call(queries, database, k);
}

std::tuple<const at::Tensor&, const at::Tensor&> hamming_topk_out(const at::Tensor& values, const at::Tensor& indices,
                                                                  const at::Tensor& queries,
                                                                  const at::Tensor& database, int64_t k) {
  op::hamming_topk_out().call(queries, database, k, op::writable(values), op::writable(indices));
  return {values, indices};
}

}  // namespace torchops

#pragma GCC diagnostic pop
