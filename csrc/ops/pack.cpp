// The packing ops (docs/semantics.md): packbits and unpackbits, NumPy's, and pack and unpack,
// their 1-, 2- and 4-bit forms. Every entry of every backend makes one checked call (`Call`:
// the checks of csrc/ops/checks.h's kind, in the order torchops/_contract.py's declarations
// repeat), then writes its result: the CPU entries through the kernel table, split across
// PyTorch's pool by output bytes; the device-generic ones through the compute ops, whose
// composite kernels below are made of ATen ops.
//
// A result is always contiguous, and an out= of another shape is resized (PyTorch's
// resize_output, its warning included); one of the right shape keeps its strides. No
// overlap of out and x is allowed, not even a full one: an output element is made of other
// elements than its own.
#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/native/Resize.h>
#include <c10/util/safe_numerics.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "dispatch/capability.h"
#include "ops/checks.h"
#include "ops/composite.h"
#include "ops/cpu.h"
#include "ops/memory.h"
#include "ops/parallel.h"

namespace torchops {
namespace {

constexpr const char* kPackbitsOp = "torchops.packbits";
constexpr const char* kUnpackbitsOp = "torchops.unpackbits";
constexpr const char* kPackOp = "torchops.pack";
constexpr const char* kUnpackOp = "torchops.unpack";

// What a call packs or unpacks, checked: the format, x as the kernels see it (flattened for
// dim=None and for a 0-d x), the dim of that x, and the result's dtype and shape.
struct Call {
  PackFormat format;
  at::Tensor x;
  int64_t dim;
  at::ScalarType dtype;
  at::DimVector shape;
  const char* op_name;  // as messages name it
};

int per_byte(const PackFormat& format) {
  return 8 / format.bits;
}

void check_pack_x(const char* op_name, const at::Tensor& x) {
  check_defined(op_name, "x", x);
  const at::ScalarType dtype = x.scalar_type();
  TORCH_CHECK_TYPE(is_shift_dtype(dtype) || dtype == at::kBool, op_name,
                   ": x must be an integer or bool tensor (int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
                   "bool), got ", dtype_name(dtype), "; NumPy's packbits refuses floats too: pack x != 0, or a "
                   "float's bits through x.view(torch.int32)");
}

void check_unpack_x(const char* op_name, const at::Tensor& x) {
  check_defined(op_name, "x", x);
  TORCH_CHECK_TYPE(x.scalar_type() == at::kByte, op_name, ": x must be a uint8 tensor of packed bytes, got ",
                   dtype_name(x.scalar_type()));
}

int check_bits(const char* op_name, int64_t bits) {
  TORCH_CHECK_VALUE(bits == 1 || bits == 2 || bits == 4, op_name, ": bits must be 1, 2 or 4, got ", bits);
  return static_cast<int>(bits);
}

bool check_little(const char* op_name, c10::string_view bitorder) {
  TORCH_CHECK_VALUE(bitorder == "big" || bitorder == "little", op_name, ": bitorder must be 'big' or 'little', got '",
                    std::string(bitorder), "'");
  return bitorder == "little";
}

// dim made non-negative, None kept; PyTorch's range rule (a 0-d x takes -1 and 0).
std::optional<int64_t> check_dim(const char* op_name, const at::Tensor& x, std::optional<int64_t> dim) {
  if (!dim) return std::nullopt;
  const int64_t rank = std::max<int64_t>(x.dim(), 1);
  TORCH_CHECK_INDEX(-rank <= *dim && *dim < rank, op_name, ": dim ", *dim, " is out of range for a ", x.dim(),
                    "-d x (expected a dim in [", -rank, ", ", rank - 1, "], or None)");
  return (*dim + rank) % rank;
}

// x with the dim to (un)pack: flattened for None and for a 0-d x.
Call call_along(const char* op_name, const PackFormat& format, const at::Tensor& x, std::optional<int64_t> dim) {
  Call call{format, x, dim.value_or(0), at::kByte, {}, op_name};
  if (!dim || x.dim() == 0) call.x = x.reshape({-1});
  call.shape = at::DimVector(call.x.sizes());
  return call;
}

Call pack_call(const char* op_name, const at::Tensor& x, int64_t bits, std::optional<int64_t> dim,
               c10::string_view bitorder, bool nonzero) {
  check_pack_x(op_name, x);
  PackFormat format{static_cast<int>(x.element_size()), check_bits(op_name, bits), false, nonzero, false};
  format.little = check_little(op_name, bitorder);
  Call call = call_along(op_name, format, x, check_dim(op_name, x, dim));
  const int64_t n = call.shape[call.dim];
  call.shape[call.dim] = (n + per_byte(format) - 1) / per_byte(format);
  return call;
}

Call unpack_call(const char* op_name, const at::Tensor& x, int64_t bits, std::optional<int64_t> dim,
                 std::optional<int64_t> count, c10::string_view bitorder, bool is_signed, const char* unit) {
  check_unpack_x(op_name, x);
  PackFormat format{1, check_bits(op_name, bits), false, false, is_signed};
  format.little = check_little(op_name, bitorder);
  dim = check_dim(op_name, x, dim);
  Call call = call_along(op_name, format, x, dim);
  const std::string where = dim ? "along dim " + std::to_string(*dim) : "of the flattened x";
  int64_t available = 0;  // more than int64 only for a view of a few bytes expanded along the dim
  TORCH_CHECK_VALUE(!c10::mul_overflows(call.shape[call.dim], int64_t{per_byte(format)}, &available), op_name,
                    ": x's ", call.shape[call.dim], " bytes ", where, " hold more than 2**63 - 1 ", unit);
  int64_t size = count.value_or(available);
  if (size < 0) {
    TORCH_CHECK_VALUE(available + size >= 0, op_name, ": count ", size, " drops more than the ", available, " ",
                      unit, " ", where);
    size += available;
  }
  call.shape[call.dim] = size;
  call.dtype = is_signed ? at::kChar : at::kByte;
  check_result_size(op_name, count ? c10::str("count ", *count) : c10::str("x of shape ", x.sizes()), call.shape,
                    call.dtype);
  return call;
}

Call packbits_call(const at::Tensor& x, std::optional<int64_t> dim, c10::string_view bitorder) {
  return pack_call(kPackbitsOp, x, 1, dim, bitorder, /*nonzero=*/true);
}
Call unpackbits_call(const at::Tensor& x, std::optional<int64_t> dim, std::optional<int64_t> count,
                     c10::string_view bitorder) {
  return unpack_call(kUnpackbitsOp, x, 1, dim, count, bitorder, /*is_signed=*/false, "bits");
}

// out='s checks, then out resized to the result's shape (checked again for overlap: a
// resized out can land on x's storage).
void prepare_out(const char* op_name, const Call& call, const at::Tensor& out) {
  check_out_dtype(op_name, out, call.dtype);
  check_writable(op_name, "out", out);
  check_no_overlap(op_name, out, {&call.x});
  if (at::native::resize_output(out, call.shape)) check_no_overlap(op_name, out, {&call.x});
}

// ---- CPU ----

// Runs `range(first, n)` over the output's elements [first, first + n) of a contiguous
// result, split across PyTorch's pool (TensorIterator's, over the output alone: at::parallel_for
// compiled here would be serial, csrc/ops/parallel.h); `grain`: the fewest a thread takes.
template <typename Range>
void for_each_output_range(const at::Tensor& result, int64_t grain, const Range& range) {
  if (result.numel() == 0) return;
  // What TensorIterator would run on the calling thread, without building one (a few
  // microseconds, a sizeable part of a small call).
  if (result.numel() < grain || at::get_num_threads() == 1) return range(0, result.numel());
  at::Tensor flat = result.view({-1});
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(false)
                  .check_all_same_dtype(false)
                  .resize_outputs(false)
                  .add_output(flat)
                  .build();
  const char* base = static_cast<const char*>(flat.const_data_ptr());
  const int64_t width = flat.element_size();
  for_each_loop2d(iter, [&](char** data, const int64_t* strides, int64_t size0, int64_t size1) {
    for (int64_t r = 0; r < size1; ++r) range((data[0] + r * strides[1] - base) / width, size0);
  }, grain);
}


// x (contiguous) seen as (outer, n, inner) around its dim.
struct Around {
  int64_t n;
  int64_t inner;
};

Around around(const at::Tensor& x, int64_t dim) {
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  return {x.size(dim), inner};
}

// result (contiguous, call.shape) = the packed call.x.
void pack_cpu(const Call& call, const at::Tensor& result) {
  const at::Tensor x = call.x.contiguous();
  const PackFormat format = call.format;
  const KernelTable& kernels = active_kernels();
  const Around a = around(x, call.dim);
  const int64_t per = per_byte(format);
  const int64_t bytes = result.size(call.dim);
  const char* xs = static_cast<const char*>(x.const_data_ptr());
  uint8_t* out = static_cast<uint8_t*>(result.data_ptr());
  const int64_t width = format.width;
  // Each packed byte reads its `per` elements.
  for_each_output_range(result, grain_for(1 + per * width), [&](int64_t j, int64_t count) {
    while (count > 0) {
      if (a.inner == 1) {
        const int64_t row = j / bytes, b = j % bytes;
        const char* x_row = xs + row * a.n * width;
        if (b == 0 && count >= bytes) {  // whole rows at once
          const int64_t rows = count / bytes;
          kernels.pack(format, x_row, out + j, PackRows{bytes, a.n, rows, a.n * width, bytes});
          j += rows * bytes, count -= rows * bytes;
          continue;
        }
        const int64_t take = std::min(count, bytes - b);
        const int64_t n = std::min(take * per, a.n - b * per);
        kernels.pack(format, x_row + b * per * width, out + j, PackRows{take, n, 1, 0, 0});
        j += take, count -= take;
      } else {
        const int64_t row = j / (bytes * a.inner), b = (j / a.inner) % bytes, i = j % a.inner;
        const int64_t take = std::min(count, a.inner - i);
        const int fields = static_cast<int>(std::min(per, a.n - b * per));
        kernels.pack_columns(format, xs + ((row * a.n + b * per) * a.inner + i) * width, out + j, take, a.inner,
                             fields);
        j += take, count -= take;
      }
    }
  });
}

// result (contiguous, call.shape) = the unpacked call.x; fields past x's are 0.
void unpack_cpu(const Call& call, const at::Tensor& result) {
  const at::Tensor x = call.x.contiguous();
  const PackFormat format = call.format;
  const KernelTable& kernels = active_kernels();
  const Around a = around(x, call.dim);
  const int64_t per = per_byte(format);
  const int64_t fields = result.size(call.dim);
  const int64_t available = a.n * per;
  const uint8_t* xs = static_cast<const uint8_t*>(x.const_data_ptr());
  uint8_t* out = static_cast<uint8_t*>(result.data_ptr());
  // Each field writes a byte, and every `per` of them read one.
  for_each_output_range(result, grain_for(per + 1, per), [&](int64_t j, int64_t count) {
    while (count > 0) {
      if (a.inner == 1) {
        const int64_t row = j / fields, f = j % fields;
        const uint8_t* x_row = xs + row * a.n;
        if (f == 0 && count >= fields && fields <= available) {  // whole rows at once
          const int64_t rows = count / fields;
          kernels.unpack(format, x_row, out + j, UnpackRows{fields, 0, rows, a.n, fields});
          j += rows * fields, count -= rows * fields;
          continue;
        }
        const int64_t take = std::min(count, fields - f);
        const int64_t read = std::clamp<int64_t>(available - f, 0, take);
        if (read > 0) kernels.unpack(format, x_row + f / per, out + j, UnpackRows{read, static_cast<int>(f % per), 1, 0, 0});
        std::memset(out + j + read, 0, take - read);
        j += take, count -= take;
      } else {
        const int64_t row = j / (fields * a.inner), f = (j / a.inner) % fields, i = j % a.inner;
        const int64_t take = std::min(count, a.inner - i);
        if (f < available) {
          kernels.unpack_columns(format, xs + (row * a.n + f / per) * a.inner + i, out + j, take,
                                 static_cast<int>(f % per));
        } else {
          std::memset(out + j, 0, take);
        }
        j += take, count -= take;
      }
    }
  });
}

// Writes the result of a call into a tensor of its dtype and shape: the CPU's kernels
// (contiguous only) or a device's compute op (any strides).
using Compute = void (*)(const Call&, const at::Tensor&);

at::Tensor new_result(const Call& call, Compute compute) {
  at::Tensor result = empty_result(call.op_name, call.shape, call.x.options().dtype(call.dtype));
  advise_huge_pages(result);
  compute(call, result);
  return result;
}

at::Tensor& cpu_out(const char* op_name, const Call& call, Compute compute, at::Tensor& out) {
  restoring_outs(op_name, {{"out", &out}}, [&] {
    prepare_out(op_name, call, out);
    if (out.is_contiguous()) {
      compute(call, out);
    } else {
      out.copy_(new_result(call, compute));
    }
  });
  return out;
}

// ---- every other backend ----

void check_device_generic(const char* op_name, const at::Tensor& x, const at::Tensor* out) {
  if (out) {
    check_strided(op_name, {{"x", &x}, {"out", out}});
    check_same_device(op_name, x, {{"out", out}});
  } else {
    check_strided(op_name, {{"x", &x}});
  }
}

// The compute ops write `out`, checked and sized.
at::Tensor& device_out(const char* op_name, const Call& call, Compute compute, at::Tensor& out) {
  restoring_outs(op_name, {{"out", &out}}, [&] {
    prepare_out(op_name, call, out);
    compute(call, out);
  });
  return out;
}

void pack_device(const Call& call, const at::Tensor& out) {
  const PackFormat& f = call.format;
  op::pack_compute().call(op::writable(out), call.x, f.bits, call.dim, f.nonzero, f.little);
}

void unpack_device(const Call& call, const at::Tensor& out) {
  const PackFormat& f = call.format;
  op::unpack_compute().call(op::writable(out), call.x, f.bits, call.dim, f.little, f.is_signed);
}

// The shifts of a byte's fields, field k's at k (on x's device, as bytes).
at::Tensor field_shifts(const at::Tensor& like, int64_t bits, bool little) {
  const int64_t per = 8 / bits;
  at::Tensor k = at::arange(per, like.options().dtype(at::kByte));
  return little ? k.mul(bits) : k.mul(-bits).add(bits * (per - 1));
}

}  // namespace

// ---- the entries ----

namespace composite {

// The fields along x's last dim, each a byte, and x's bits as the signed dtype of the
// width (which every backend's ATen computes on, csrc/ops/composite.h).
void pack_compute(at::Tensor& out, const at::Tensor& x, int64_t bits, int64_t dim, bool nonzero, bool little) {
  const int64_t per = 8 / bits;
  at::Tensor values = x.movedim(dim, -1);
  if (values.scalar_type() == at::kBool) {
    values = values.to(at::kByte);
  } else if (values.scalar_type() != at::kByte) {
    values = values.view(signed_of_width(values.scalar_type()));
  }
  at::Tensor fields = nonzero ? values.ne(0).to(at::kByte) : values.to(at::kByte).bitwise_and((1 << bits) - 1);
  const int64_t n = fields.size(-1);
  const int64_t bytes = (n + per - 1) / per;
  if (bytes * per != n) fields = at::constant_pad_nd(fields, {0, bytes * per - n}, 0);
  at::DimVector grouped(fields.sizes().begin(), fields.sizes().end() - 1);
  grouped.append({bytes, per});
  // Fields are disjoint bits: their sum is their or, and never carries.
  at::Tensor packed = fields.reshape(grouped).bitwise_left_shift(field_shifts(fields, bits, little)).sum(-1, false, at::kByte);
  out.copy_(packed.movedim(-1, dim));
}

void unpack_compute(at::Tensor& out, const at::Tensor& x, int64_t bits, int64_t dim, bool little, bool is_signed) {
  const int64_t per = 8 / bits;
  at::Tensor bytes = x.movedim(dim, -1);
  at::Tensor fields = bytes.unsqueeze(-1).bitwise_right_shift(field_shifts(bytes, bits, little)).bitwise_and((1 << bits) - 1);
  fields = fields.flatten(-2);
  const int64_t available = bytes.size(-1) * per, size = out.size(dim);
  fields = size <= available ? fields.narrow(-1, 0, size) : at::constant_pad_nd(fields, {0, size - available}, 0);
  if (is_signed) {  // (field ^ half) - half: the field's value as a `bits`-bit signed integer
    const int64_t half = int64_t{1} << (bits - 1);
    fields = fields.to(at::kChar).bitwise_xor(half).sub(half);
  }
  out.copy_(fields.movedim(-1, dim));
}

at::Tensor packbits(const at::Tensor& x, std::optional<int64_t> dim, c10::string_view bitorder) {
  check_device_generic(kPackbitsOp, x, nullptr);
  return new_result(packbits_call(x, dim, bitorder), pack_device);
}
at::Tensor& packbits_out(const at::Tensor& x, std::optional<int64_t> dim, c10::string_view bitorder, at::Tensor& out) {
  check_device_generic(kPackbitsOp, x, &out);
  return device_out(kPackbitsOp, packbits_call(x, dim, bitorder), pack_device, out);
}
at::Tensor unpackbits(const at::Tensor& x, std::optional<int64_t> dim, std::optional<int64_t> count,
                      c10::string_view bitorder) {
  check_device_generic(kUnpackbitsOp, x, nullptr);
  return new_result(unpackbits_call(x, dim, count, bitorder), unpack_device);
}
at::Tensor& unpackbits_out(const at::Tensor& x, std::optional<int64_t> dim, std::optional<int64_t> count,
                           c10::string_view bitorder, at::Tensor& out) {
  check_device_generic(kUnpackbitsOp, x, &out);
  return device_out(kUnpackbitsOp, unpackbits_call(x, dim, count, bitorder), unpack_device, out);
}
at::Tensor pack(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, c10::string_view bitorder) {
  check_device_generic(kPackOp, x, nullptr);
  return new_result(pack_call(kPackOp, x, bits, dim, bitorder, false), pack_device);
}
at::Tensor& pack_out(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, c10::string_view bitorder,
                     at::Tensor& out) {
  check_device_generic(kPackOp, x, &out);
  return device_out(kPackOp, pack_call(kPackOp, x, bits, dim, bitorder, false), pack_device, out);
}
at::Tensor unpack(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, std::optional<int64_t> count,
                  c10::string_view bitorder, bool is_signed) {
  check_device_generic(kUnpackOp, x, nullptr);
  return new_result(unpack_call(kUnpackOp, x, bits, dim, count, bitorder, is_signed, "fields"), unpack_device);
}
at::Tensor& unpack_out(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, std::optional<int64_t> count,
                       c10::string_view bitorder, bool is_signed, at::Tensor& out) {
  check_device_generic(kUnpackOp, x, &out);
  return device_out(kUnpackOp, unpack_call(kUnpackOp, x, bits, dim, count, bitorder, is_signed, "fields"),
                    unpack_device, out);
}

}  // namespace composite

namespace cpu {

at::Tensor packbits(const at::Tensor& x, std::optional<int64_t> dim, c10::string_view bitorder) {
  return new_result(packbits_call(x, dim, bitorder), pack_cpu);
}
at::Tensor& packbits_out(const at::Tensor& x, std::optional<int64_t> dim, c10::string_view bitorder, at::Tensor& out) {
  return cpu_out(kPackbitsOp, packbits_call(x, dim, bitorder), pack_cpu, out);
}
at::Tensor unpackbits(const at::Tensor& x, std::optional<int64_t> dim, std::optional<int64_t> count,
                      c10::string_view bitorder) {
  return new_result(unpackbits_call(x, dim, count, bitorder), unpack_cpu);
}
at::Tensor& unpackbits_out(const at::Tensor& x, std::optional<int64_t> dim, std::optional<int64_t> count,
                           c10::string_view bitorder, at::Tensor& out) {
  return cpu_out(kUnpackbitsOp, unpackbits_call(x, dim, count, bitorder), unpack_cpu, out);
}
at::Tensor pack(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, c10::string_view bitorder) {
  return new_result(pack_call(kPackOp, x, bits, dim, bitorder, false), pack_cpu);
}
at::Tensor& pack_out(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, c10::string_view bitorder,
                     at::Tensor& out) {
  return cpu_out(kPackOp, pack_call(kPackOp, x, bits, dim, bitorder, false), pack_cpu, out);
}
at::Tensor unpack(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, std::optional<int64_t> count,
                  c10::string_view bitorder, bool is_signed) {
  return new_result(unpack_call(kUnpackOp, x, bits, dim, count, bitorder, is_signed, "fields"), unpack_cpu);
}
at::Tensor& unpack_out(const at::Tensor& x, int64_t bits, std::optional<int64_t> dim, std::optional<int64_t> count,
                       c10::string_view bitorder, bool is_signed, at::Tensor& out) {
  return cpu_out(kUnpackOp, unpack_call(kUnpackOp, x, bits, dim, count, bitorder, is_signed, "fields"), unpack_cpu,
                 out);
}

}  // namespace cpu
}  // namespace torchops
