// Every overload of the torchops library, in one list (TORCHOPS_FOR_EACH_OVERLOAD, which joins
// one list per kind of op): its schema, which csrc/registration.cpp defines, its C++
// signature, and its typed handle. Adding an overload is a row in its kind's list
// (TORCHOPS_FOR_EACH_POINTWISE_OVERLOAD, _PACKING_OVERLOAD or _SEARCH_OVERLOAD; a unary op's
// two overloads and compute op: one name in TORCHOPS_FOR_EACH_UNARY_OP), its CPU kernel named
// after the handle (csrc/ops/cpu.h) and its declaration (torchops/_contract.py);
// docs/internals.md has the whole recipe.
//
// A handle is looked up in the dispatcher once, on first use. Calling it is a full
// dispatcher call: every dispatch key (Autograd, Python modes, tracing, functorch) sees it,
// exactly as a call through torch.ops.torchops.* does. Used by the C++ API (csrc/api.cpp),
// the version counting kernels (csrc/ops/autograd.cpp) and the Python binding (binding/).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Scalar.h>

#include <optional>
#include <tuple>

namespace torchops::op {

using Bitshift = at::Tensor(const at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic);
using BitshiftScalar = at::Tensor(const at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                                  bool arithmetic);
using BitshiftOut = at::Tensor&(const at::Tensor& x, const at::Tensor& y, c10::string_view direction,
                                bool arithmetic, at::Tensor& out);
using BitshiftScalarOut = at::Tensor&(const at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                                      bool arithmetic, at::Tensor& out);
using BitshiftInplace = at::Tensor&(at::Tensor& x, const at::Tensor& y, c10::string_view direction, bool arithmetic);
using BitshiftScalarInplace = at::Tensor&(at::Tensor& x, const at::Scalar& y, c10::string_view direction,
                                          bool arithmetic);
using Unary = at::Tensor(const at::Tensor& x);
using UnaryOut = at::Tensor&(const at::Tensor& x, at::Tensor& out);
using Packbits = at::Tensor(const at::Tensor& x, std::optional<int64_t> dim, c10::string_view bitorder);
using PackbitsOut = at::Tensor&(const at::Tensor& x, std::optional<int64_t> dim, c10::string_view bitorder,
                                at::Tensor& out);
using Unpackbits = at::Tensor(const at::Tensor& x, std::optional<int64_t> dim, std::optional<int64_t> count,
                              c10::string_view bitorder);
using UnpackbitsOut = at::Tensor&(const at::Tensor& x, std::optional<int64_t> dim, std::optional<int64_t> count,
                                  c10::string_view bitorder, at::Tensor& out);
using Pack = at::Tensor(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, c10::string_view bitorder);
using PackOut = at::Tensor&(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, c10::string_view bitorder,
                            at::Tensor& out);
using Unpack = at::Tensor(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, std::optional<int64_t> count,
                          c10::string_view bitorder, bool is_signed);
using UnpackOut = at::Tensor&(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim,
                              std::optional<int64_t> count, c10::string_view bitorder, bool is_signed,
                              at::Tensor& out);

// The search ops (csrc/ops/hamming.cpp): codes of B bytes, one a row, compared bit by bit.
using HammingDistance = at::Tensor(const at::Tensor& x1, const at::Tensor& x2);
using HammingDistanceOut = at::Tensor&(const at::Tensor& x1, const at::Tensor& x2, at::Tensor& out);
using HammingTopk = std::tuple<at::Tensor, at::Tensor>(const at::Tensor& queries, const at::Tensor& database,
                                                       int64_t k);
using HammingTopkOut = std::tuple<at::Tensor&, at::Tensor&>(const at::Tensor& queries, const at::Tensor& database,
                                                            int64_t k, at::Tensor& values, at::Tensor& indices);

namespace detail {
template <class Signature>
c10::TypedOperatorHandle<Signature> find(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Signature>();
}
}  // namespace detail

// What an overload does with its arguments, which says its tag and its version counting:
// functional (a new result), out (writes its keyword-only `out` and returns it, as ATen's
// .out overloads do: torch.Tag.out) or inplace (writes x and returns it: torch.Tag.inplace).
enum class Kind { functional, out, inplace };

// The unary ops (csrc/ops/unary.h): one tensor in, a result of one dtype whatever x's. Each
// has the same two overloads and one compute op, so its name here is all of their rows below;
// the binding's compiled functions (binding/) and the C++ API's definitions (csrc/api.cpp)
// follow from it too. F(X, op): F is one of the TORCHOPS_UNARY_* macros below, X passed
// through.
#define TORCHOPS_FOR_EACH_UNARY_OP(F, X) \
  F(X, signbit)                          \
  F(X, bitwise_count)

#define TORCHOPS_UNARY_OVERLOADS(X, op)                       \
  X(op, Unary, functional, #op, "", #op "(Tensor x) -> Tensor") \
  X(op##_out, UnaryOut, out, #op, "out", #op ".out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
#define TORCHOPS_UNARY_COMPUTE(X, op) \
  X(op##_compute, UnaryCompute, "_" #op "_compute", "_" #op "_compute(Tensor(a!) out, Tensor x) -> ()")

// X(handle, Signature, kind, name, overload, schema). The writing overloads return the
// tensor they wrote, with its alias annotation, as ATen's do; their tags tell
// torch.compile's functionalization that the return aliases that argument and nothing else.
// The pointwise ops (tagged torch.Tag.pointwise): their result has the broadcast shape of
// their operands.
#define TORCHOPS_FOR_EACH_POINTWISE_OVERLOAD(X)                                                                  \
  X(bitshift, Bitshift, functional, "bitshift", "",                                                              \
    "bitshift(Tensor x, Tensor y, str direction, bool arithmetic=True) -> Tensor")                                 \
  X(bitshift_scalar, BitshiftScalar, functional, "bitshift", "Scalar",                                            \
    "bitshift.Scalar(Tensor x, Scalar y, str direction, bool arithmetic=True) -> Tensor")                          \
  X(bitshift_out, BitshiftOut, out, "bitshift", "out",                                                            \
    "bitshift.out(Tensor x, Tensor y, str direction, bool arithmetic=True, *, Tensor(a!) out) -> Tensor(a!)")      \
  X(bitshift_scalar_out, BitshiftScalarOut, out, "bitshift", "Scalar_out",                                        \
    "bitshift.Scalar_out(Tensor x, Scalar y, str direction, bool arithmetic=True, *, Tensor(a!) out) -> Tensor(a!)") \
  X(bitshift_inplace, BitshiftInplace, inplace, "bitshift_", "",                                                  \
    "bitshift_(Tensor(a!) x, Tensor y, str direction, bool arithmetic=True) -> Tensor(a!)")                        \
  X(bitshift_scalar_inplace, BitshiftScalarInplace, inplace, "bitshift_", "Scalar",                               \
    "bitshift_.Scalar(Tensor(a!) x, Scalar y, str direction, bool arithmetic=True) -> Tensor(a!)")                 \
  TORCHOPS_FOR_EACH_UNARY_OP(TORCHOPS_UNARY_OVERLOADS, X)

// The packing ops (csrc/ops/pack.cpp): the size of one dim changes, 8 / bits fields to a
// byte (docs/semantics.md); packbits and unpackbits are NumPy's, bits = 1.
#define TORCHOPS_FOR_EACH_PACKING_OVERLOAD(X)                                                                      \
  X(packbits, Packbits, functional, "packbits", "", "packbits(Tensor x, int? dim=-1, str bitorder=\"big\") -> Tensor") \
  X(packbits_out, PackbitsOut, out, "packbits", "out",                                                            \
    "packbits.out(Tensor x, int? dim=-1, str bitorder=\"big\", *, Tensor(a!) out) -> Tensor(a!)")                  \
  X(unpackbits, Unpackbits, functional, "unpackbits", "",                                                         \
    "unpackbits(Tensor x, int? dim=-1, SymInt? count=None, str bitorder=\"big\") -> Tensor")                      \
  X(unpackbits_out, UnpackbitsOut, out, "unpackbits", "out",                                                      \
    "unpackbits.out(Tensor x, int? dim=-1, SymInt? count=None, str bitorder=\"big\", *, Tensor(a!) out) -> Tensor(a!)") \
  X(pack, Pack, functional, "pack", "", "pack(Tensor x, int bits, int? dim=-1, str bitorder=\"big\") -> Tensor")   \
  X(pack_out, PackOut, out, "pack", "out",                                                                        \
    "pack.out(Tensor x, int bits, int? dim=-1, str bitorder=\"big\", *, Tensor(a!) out) -> Tensor(a!)")            \
  X(unpack, Unpack, functional, "unpack", "",                                                                     \
    "unpack(Tensor x, int bits, int? dim=-1, SymInt? count=None, str bitorder=\"big\", bool signed=False) -> Tensor") \
  X(unpack_out, UnpackOut, out, "unpack", "out",                                                                  \
    "unpack.out(Tensor x, int bits, int? dim=-1, SymInt? count=None, str bitorder=\"big\", bool signed=False, *, " \
    "Tensor(a!) out) -> Tensor(a!)")

// The search ops (csrc/ops/hamming.cpp): Hamming distances between rows of packed codes, a
// matrix of them (torch.cdist's shape) or the k nearest of a database to each query
// (torch.topk's results: values, then indices), neither pointwise.
#define TORCHOPS_FOR_EACH_SEARCH_OVERLOAD(X)                                                                    \
  X(hamming_distance, HammingDistance, functional, "hamming_distance", "",                                      \
    "hamming_distance(Tensor x1, Tensor x2) -> Tensor")                                                         \
  X(hamming_distance_out, HammingDistanceOut, out, "hamming_distance", "out",                                   \
    "hamming_distance.out(Tensor x1, Tensor x2, *, Tensor(a!) out) -> Tensor(a!)")                              \
  X(hamming_topk, HammingTopk, functional, "hamming_topk", "",                                                  \
    "hamming_topk(Tensor queries, Tensor database, SymInt k) -> (Tensor values, Tensor indices)")               \
  X(hamming_topk_out, HammingTopkOut, out, "hamming_topk", "out",                                               \
    "hamming_topk.out(Tensor queries, Tensor database, SymInt k, *, Tensor(a!) values, Tensor(b!) indices) -> " \
    "(Tensor(a!) values, Tensor(b!) indices)")

#define TORCHOPS_FOR_EACH_OVERLOAD(X)    \
  TORCHOPS_FOR_EACH_POINTWISE_OVERLOAD(X) \
  TORCHOPS_FOR_EACH_PACKING_OVERLOAD(X)   \
  TORCHOPS_FOR_EACH_SEARCH_OVERLOAD(X)

// The compute ops behind the device-generic entries (csrc/ops/composite.h), private ops:
// each writes an `out` that the entry has checked and allocated (of the result's dtype and
// shape) from operands of any dtype the op takes, strides and broadcasting included. Their
// kernel is the composite one, made of ATen ops, on every backend that has no kernel of its
// own; torchops/_triton.py registers Triton ones for CUDA and XPU. `op` is a ShiftOp
// (csrc/kernels/kernels.h); a scalar count is in [0, 64] (the entry clamps it: any count of
// 64 or more is out of range for every dtype).
// X(handle, Signature, name, schema)
using BitshiftCompute = void(at::Tensor& out, const at::Tensor& x, const at::Tensor& y, int64_t op);
using BitshiftScalarCompute = void(at::Tensor& out, const at::Tensor& x, int64_t count, int64_t op);
using UnaryCompute = void(at::Tensor& out, const at::Tensor& x);  // csrc/ops/unary.h's ops
// The packing ops': x of at least one dim, `dim` in [0, x.dim()); out of x's shape but at
// `dim`, where it has ceil(n * bits / 8) bytes (pack) or any number of fields (unpack: those
// past x's are 0). `nonzero`: packbits' rule (a field is x != 0), else x's low bits.
using PackCompute = void(at::Tensor& out, const at::Tensor& x, int64_t bits, int64_t dim, bool nonzero, bool little);
using UnpackCompute = void(at::Tensor& out, const at::Tensor& x, int64_t bits, int64_t dim, bool little,
                           bool is_signed);
// The search ops': codes of B bytes, uint8 or int8. hamming_distance's x1 (..., M, B) and x2
// (..., N, B) of out's batch shape (expanded) into out (..., M, N); hamming_topk's queries
// (Q, B) and database (N, B), 1 <= k <= N, into values (Q, k) and indices (Q, k).
using HammingDistanceCompute = void(at::Tensor& out, const at::Tensor& x1, const at::Tensor& x2);
using HammingTopkCompute = void(at::Tensor& values, at::Tensor& indices, const at::Tensor& queries,
                                const at::Tensor& database, int64_t k);
#define TORCHOPS_FOR_EACH_COMPUTE(X)                                               \
  X(bitshift_compute, BitshiftCompute, "_bitshift_compute",                        \
    "_bitshift_compute(Tensor(a!) out, Tensor x, Tensor y, int op) -> ()")         \
  X(bitshift_scalar_compute, BitshiftScalarCompute, "_bitshift_scalar_compute",    \
    "_bitshift_scalar_compute(Tensor(a!) out, Tensor x, int count, int op) -> ()") \
  TORCHOPS_FOR_EACH_UNARY_OP(TORCHOPS_UNARY_COMPUTE, X)                              \
  X(pack_compute, PackCompute, "_pack_compute",                                    \
    "_pack_compute(Tensor(a!) out, Tensor x, int bits, int dim, bool nonzero, bool little) -> ()") \
  X(unpack_compute, UnpackCompute, "_unpack_compute",                              \
    "_unpack_compute(Tensor(a!) out, Tensor x, int bits, int dim, bool little, bool signed) -> ()") \
  X(hamming_distance_compute, HammingDistanceCompute, "_hamming_distance_compute", \
    "_hamming_distance_compute(Tensor(a!) out, Tensor x1, Tensor x2) -> ()")       \
  X(hamming_topk_compute, HammingTopkCompute, "_hamming_topk_compute",             \
    "_hamming_topk_compute(Tensor(a!) values, Tensor(b!) indices, Tensor queries, Tensor database, int k) -> ()")

// "bitshift.Scalar_out", or "bitshift" for the default overload: the name m.impl takes.
#define TORCHOPS_OVERLOAD_NAME(name, overload) (*overload ? name "." overload : name)

#define TORCHOPS_OP_HANDLE_OF(function, Signature, name, overload)                               \
  inline const c10::TypedOperatorHandle<Signature>& function() {                              \
    static const auto handle = detail::find<Signature>("torchops::" name, overload);          \
    return handle;                                                                            \
  }
#define TORCHOPS_OP_HANDLE(function, Signature, kind, name, overload, schema) \
  TORCHOPS_OP_HANDLE_OF(function, Signature, name, overload)
TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_OP_HANDLE)
#undef TORCHOPS_OP_HANDLE

#define TORCHOPS_COMPUTE_HANDLE(function, Signature, name, schema) \
  TORCHOPS_OP_HANDLE_OF(function, Signature, name, "")
TORCHOPS_FOR_EACH_COMPUTE(TORCHOPS_COMPUTE_HANDLE)
#undef TORCHOPS_COMPUTE_HANDLE

// The tensor a writing overload writes, as its handle takes it (ATen's at::Tensor&) from a
// caller that holds a const reference. The constness of an at::Tensor is that of the handle,
// not of the data (ATen's own in-place methods are const), so nothing is lost.
inline at::Tensor& writable(const at::Tensor& tensor) {
  return const_cast<at::Tensor&>(tensor);
}

}  // namespace torchops::op
