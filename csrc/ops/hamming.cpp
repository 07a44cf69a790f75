// The search ops (docs/semantics.md): hamming_distance, the Hamming distances between the
// rows of two batches of packed codes (torch.cdist's shape), and hamming_topk, the k codes
// of a database nearest each query, nearest first, the smaller index first among equal
// distances. Every entry of every backend makes one checked call (the checks in the order
// torchops/_contract.py's declarations repeat), then computes: the CPU entries through the
// kernel table's `hamming` slot, on tiles of the database split across PyTorch's pool; the
// device-generic ones through the compute ops, whose composite kernels below are made of
// ATen ops. A result is contiguous; an out= of another shape is resized (resize_output), one
// of the right shape keeps its strides; no out= may overlap an input or another out=.
#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>
#include <ATen/native/Resize.h>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

#include "dispatch/capability.h"
#include "ops/checks.h"
#include "ops/composite.h"
#include "ops/cpu.h"
#include "ops/memory.h"
#include "ops/parallel.h"

namespace torchops {
namespace {

constexpr const char* kHammingDistanceOp = "torchops.hamming_distance";
constexpr const char* kHammingTopkOp = "torchops.hamming_topk";

// A tensor of codes: uint8 or int8 (only the bits count), one code a row of its last dim.
void check_codes(const char* op_name, const char* arg, const at::Tensor& codes) {
  check_defined(op_name, arg, codes);
  const at::ScalarType dtype = codes.scalar_type();
  TORCH_CHECK_TYPE(dtype == at::kByte || dtype == at::kChar, op_name, ": ", arg,
                   " must be a uint8 or int8 tensor of packed codes, got ", dtype_name(dtype),
                   "; pack float embeddings' signs with torchops.packbits(x > 0), and view codes held in wider "
                   "integers as bytes with x.view(torch.uint8)");
}

void check_code_dims(const char* op_name, const char* arg, const at::Tensor& codes, const char* shape, bool exact) {
  TORCH_CHECK_VALUE(exact ? codes.dim() == 2 : codes.dim() >= 2, op_name, ": ", arg, " must have ",
                    exact ? "2 dims " : "at least 2 dims ", shape, ", one code a row, got a ", codes.dim(),
                    "-d tensor");
}

void check_code_bytes(const char* op_name, const char* first, const at::Tensor& a, const char* second,
                      const at::Tensor& b) {
  TORCH_CHECK_VALUE(a.size(-1) == b.size(-1), op_name, ": ", first, " and ", second,
                    " must hold codes of the same size, got ", a.size(-1), " bytes (", first, ") and ", b.size(-1),
                    " bytes (", second, ")");
}

// A checked hamming_distance call: x1 and x2 expanded to the batch shape, the result's shape.
struct DistanceCall {
  at::Tensor x1;
  at::Tensor x2;
  at::DimVector shape;
};

DistanceCall distance_call(const at::Tensor& x1, const at::Tensor& x2) {
  check_codes(kHammingDistanceOp, "x1", x1);
  check_codes(kHammingDistanceOp, "x2", x2);
  check_code_dims(kHammingDistanceOp, "x1", x1, "(..., M, B)", false);
  check_code_dims(kHammingDistanceOp, "x2", x2, "(..., N, B)", false);
  check_code_bytes(kHammingDistanceOp, "x1", x1, "x2", x2);
  const at::IntArrayRef batch1 = x1.sizes().slice(0, x1.dim() - 2), batch2 = x2.sizes().slice(0, x2.dim() - 2);
  at::DimVector batch;
  try {
    batch = at::infer_size_dimvector(batch1, batch2);
  } catch (const c10::Error&) {
    TORCH_CHECK_VALUE(false, kHammingDistanceOp, ": x1's batch dims ", batch1, " and x2's ", batch2,
                      " do not broadcast");
  }
  const int64_t m = x1.size(-2), n = x2.size(-2), bytes = x1.size(-1);
  at::DimVector sizes1(batch), sizes2(batch), shape(batch);
  sizes1.append({m, bytes});
  sizes2.append({n, bytes});
  shape.append({m, n});
  check_result_size(kHammingDistanceOp, c10::str("x1 of shape ", x1.sizes(), " and x2 of shape ", x2.sizes()), shape,
                    at::kInt);
  return {x1.expand(sizes1), x2.expand(sizes2), shape};
}

// A checked hamming_topk call.
struct TopkCall {
  at::Tensor queries;
  at::Tensor database;
  int64_t k;
};

TopkCall topk_call(const at::Tensor& queries, const at::Tensor& database, int64_t k) {
  check_codes(kHammingTopkOp, "queries", queries);
  check_codes(kHammingTopkOp, "database", database);
  check_code_dims(kHammingTopkOp, "queries", queries, "(Q, B)", true);
  check_code_dims(kHammingTopkOp, "database", database, "(N, B)", true);
  check_code_bytes(kHammingTopkOp, "queries", queries, "database", database);
  const int64_t n = database.size(0);
  TORCH_CHECK_INDEX(0 <= k && k <= n, kHammingTopkOp, ": k ", k, " is out of range for a database of ", n,
                    " codes (expected 0 <= k <= ", n, ", as torch.topk)");
  check_result_size(kHammingTopkOp, c10::str("k ", k), {queries.size(0), k}, at::kLong);  // indices, the wider
  return {queries, database, k};
}

at::DimVector topk_shape(const TopkCall& call) {
  return {call.queries.size(0), call.k};
}

// The checks of an out= that do not depend on its size (its dtype aside, which the caller
// checks first): every out= of a call passes them before any is resized, so that a refused
// call leaves each as it was.
void check_out(const char* op_name, const char* arg, const at::Tensor& out,
               std::initializer_list<const at::Tensor*> inputs) {
  check_writable(op_name, arg, out);
  check_no_overlap(op_name, out, inputs);
}

// out resized to `shape`, and checked again for overlap: a resized out can land on an
// input's storage.
void resize_out(const char* op_name, at::IntArrayRef shape, const at::Tensor& out,
                std::initializer_list<const at::Tensor*> inputs) {
  if (at::native::resize_output(out, shape)) check_no_overlap(op_name, out, inputs);
}

void prepare_topk_out(const TopkCall& call, const at::Tensor& values, const at::Tensor& indices) {
  check_defined(kHammingTopkOp, "values", values);
  check_defined(kHammingTopkOp, "indices", indices);
  TORCH_CHECK_TYPE(values.scalar_type() == at::kInt, kHammingTopkOp, ": values must be an int32 tensor, got ",
                   dtype_name(values.scalar_type()));
  TORCH_CHECK_TYPE(indices.scalar_type() == at::kLong, kHammingTopkOp, ": indices must be an int64 tensor, got ",
                   dtype_name(indices.scalar_type()));
  check_out(kHammingTopkOp, "values", values, {&call.queries, &call.database});
  check_out(kHammingTopkOp, "indices", indices, {&call.queries, &call.database, &values});
  const at::DimVector shape = topk_shape(call);
  resize_out(kHammingTopkOp, shape, values, {&call.queries, &call.database, &indices});
  resize_out(kHammingTopkOp, shape, indices, {&call.queries, &call.database, &values});
}

// ---- CPU ----

// Codes whose bytes are contiguous along their rows, as the kernels read them (the rows may
// be any distance apart).
at::Tensor code_rows(const at::Tensor& codes) {
  return codes.size(-1) <= 1 || codes.stride(-1) == 1 ? codes : codes.contiguous();
}

// The database codes a tile holds: about 32 KB of them (a level-1 data cache), so that every
// block of queries that goes over the tile finds it in cache.
int64_t tile_codes(int64_t bytes) {
  return std::clamp<int64_t>(32768 / std::max<int64_t>(bytes, 1), 16, 2048);
}
// The queries whose distances to a tile are computed before they are read: a block of them
// and a tile make a small buffer (64 x 2048 int32 at most), whatever the number of queries.
constexpr int64_t kQueryBlock = 64;

// result (contiguous, call.shape) = the distances of each batch's rows.
void distance_cpu(const DistanceCall& call, const at::Tensor& result) {
  if (result.numel() == 0) return;
  const at::Tensor x1 = code_rows(call.x1), x2 = code_rows(call.x2);
  const int64_t batch_dims = x1.dim() - 2;
  const int64_t m = x1.size(-2), n = x2.size(-2), bytes = x1.size(-1);
  const int64_t batches = result.numel() / (m * n);
  const int64_t tile = tile_codes(bytes);
  const int64_t m_blocks = (m + kQueryBlock - 1) / kQueryBlock, n_tiles = (n + tile - 1) / tile;
  const KernelTable& kernels = active_kernels();
  const uint8_t* base1 = static_cast<const uint8_t*>(x1.const_data_ptr());
  const uint8_t* base2 = static_cast<const uint8_t*>(x2.const_data_ptr());
  int32_t* out = result.data_ptr<int32_t>();
  // The byte offset of batch `b`'s codes in a tensor of the batch shape (strides may be 0).
  const auto batch_offset = [&](const at::Tensor& t, int64_t b) {
    int64_t offset = 0;
    for (int64_t d = batch_dims - 1; d >= 0; --d) {
      offset += (b % t.size(d)) * t.stride(d);
      b /= t.size(d);
    }
    return offset;
  };
  const auto pieces = [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t b = p / (m_blocks * n_tiles), i = (p / n_tiles) % m_blocks * kQueryBlock, j = p % n_tiles * tile;
      kernels.hamming(CodeBlock{base1 + batch_offset(x1, b) + i * x1.stride(-2), x1.stride(-2),
                                std::min(kQueryBlock, m - i), base2 + batch_offset(x2, b) + j * x2.stride(-2),
                                x2.stride(-2), std::min(tile, n - j), bytes, out + (b * m + i) * n + j, n});
    }
  };
  const int64_t total = batches * m_blocks * n_tiles;
  // A piece worth a thread: most are; a call of a few small pieces stays on one (each
  // distance reads both codes' bytes and writes its int32).
  if (runs_on_calling_thread(result.numel(), grain_for(2 * bytes + 4))) return pieces(0, total);
  for_each_chunk(total, pieces);
}

// A candidate for a query's k nearest: nearer is the smaller distance, then the smaller index.
struct Candidate {
  int32_t distance;
  int64_t index;
};
bool nearer(const Candidate& a, const Candidate& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.index < b.index);
}

// The k nearest of each query among one range of the database: a max-heap (by `nearer`) of
// at most k candidates per query, whose top is the farthest kept.
struct RangeBest {
  std::vector<Candidate> heaps;  // Q x k
  std::vector<int64_t> sizes;    // Q
};

void search_range(const KernelTable& kernels, const at::Tensor& queries, const at::Tensor& database, int64_t k,
                  int64_t begin, int64_t end, RangeBest& best) {
  const int64_t q_count = queries.size(0), bytes = queries.size(1), tile = tile_codes(bytes);
  best.heaps.resize(q_count * k);
  best.sizes.assign(q_count, 0);
  std::vector<int32_t> distances(std::min(kQueryBlock, q_count) * tile);
  const uint8_t* qs = static_cast<const uint8_t*>(queries.const_data_ptr());
  const uint8_t* db = static_cast<const uint8_t*>(database.const_data_ptr());
  const int64_t q_stride = queries.stride(0), db_stride = database.stride(0);
  for (int64_t j = begin; j < end; j += tile) {
    const int64_t n = std::min(tile, end - j);
    for (int64_t i = 0; i < q_count; i += kQueryBlock) {
      const int64_t m = std::min(kQueryBlock, q_count - i);
      kernels.hamming(CodeBlock{qs + i * q_stride, q_stride, m, db + j * db_stride, db_stride, n, bytes,
                                distances.data(), tile});
      for (int64_t q = 0; q < m; ++q) {
        Candidate* heap = best.heaps.data() + (i + q) * k;
        int64_t& size = best.sizes[i + q];
        const int32_t* d = distances.data() + q * tile;
        int64_t t = 0;
        for (; size < k && t < n; ++t) {
          heap[size++] = {d[t], j + t};
          std::push_heap(heap, heap + size, nearer);
        }
        if (t == n) continue;
        // The heap is full: a code is kept only if strictly nearer than the farthest kept,
        // as codes come in increasing index, an equal distance is farther.
        int32_t bound = heap[0].distance;
        for (; t < n; ++t) {
          if (d[t] >= bound) continue;
          std::pop_heap(heap, heap + k, nearer);
          heap[k - 1] = {d[t], j + t};
          std::push_heap(heap, heap + k, nearer);
          bound = heap[0].distance;
        }
      }
    }
  }
}

// The fewest codes a database range is worth a thread for: below it, a second thread costs
// more than the scan it takes.
constexpr int64_t kRangeCodes = 4096;

// values and indices (contiguous, (Q, k)) = each query's k nearest, in order.
void topk_cpu(const TopkCall& call, const at::Tensor& values, const at::Tensor& indices) {
  const int64_t q_count = call.queries.size(0), n = call.database.size(0), k = call.k;
  if (q_count == 0 || k == 0) return;
  const at::Tensor queries = call.queries.contiguous(), database = code_rows(call.database);
  const KernelTable& kernels = active_kernels();
  // One range of the database per thread, each with its own k nearest, merged below: one
  // query uses every thread, and the scratch is threads x Q x k candidates whatever N is.
  const int64_t ranges = std::clamp<int64_t>(n / kRangeCodes, 1, at::get_num_threads());
  std::vector<RangeBest> best(ranges);
  for_each_chunk(ranges, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      search_range(kernels, queries, database, k, n * r / ranges, n * (r + 1) / ranges, best[r]);
    }
  });
  int32_t* value = values.data_ptr<int32_t>();
  int64_t* index = indices.data_ptr<int64_t>();
  std::vector<Candidate> merged;
  for (int64_t q = 0; q < q_count; ++q) {
    merged.clear();
    for (const RangeBest& range : best) {
      merged.insert(merged.end(), range.heaps.begin() + q * k, range.heaps.begin() + q * k + range.sizes[q]);
    }
    std::partial_sort(merged.begin(), merged.begin() + k, merged.end(), nearer);
    for (int64_t t = 0; t < k; ++t) {
      value[q * k + t] = merged[t].distance;
      index[q * k + t] = merged[t].index;
    }
  }
}

// ---- every other backend ----

void distance_device(const DistanceCall& call, const at::Tensor& out) {
  if (out.numel() > 0) op::hamming_distance_compute().call(op::writable(out), call.x1, call.x2);
}

void topk_device(const TopkCall& call, const at::Tensor& values, const at::Tensor& indices) {
  if (call.queries.size(0) > 0 && call.k > 0) {
    op::hamming_topk_compute().call(op::writable(values), op::writable(indices), call.queries, call.database, call.k);
  }
}

void check_device_generic(const char* op_name, NamedTensor first, NamedTensor second,
                          std::initializer_list<NamedTensor> outs) {
  check_strided(op_name, {first, second});
  check_same_device(op_name, first, {second});
  for (const NamedTensor& out : outs) {
    check_strided(op_name, {out});
    check_same_device(op_name, first, {out});
  }
}

// ---- the entries, every backend: `Distance` and `Topk` write a result of the call's shape ----

using Distance = void (*)(const DistanceCall&, const at::Tensor&);
using Topk = void (*)(const TopkCall&, const at::Tensor&, const at::Tensor&);

at::Tensor distance_result(const DistanceCall& call, Distance compute) {
  at::Tensor result = empty_result(kHammingDistanceOp, call.shape, call.x1.options().dtype(at::kInt));
  advise_huge_pages(result);
  compute(call, result);
  return result;
}

at::Tensor& distance_out(const DistanceCall& call, Distance compute, bool contiguous_only, at::Tensor& out) {
  check_out_dtype(kHammingDistanceOp, out, at::kInt);
  check_out(kHammingDistanceOp, "out", out, {&call.x1, &call.x2});
  restoring_outs(kHammingDistanceOp, {{"out", &out}}, [&] {
    resize_out(kHammingDistanceOp, call.shape, out, {&call.x1, &call.x2});
    if (!contiguous_only || out.is_contiguous()) {
      compute(call, out);
    } else {
      out.copy_(distance_result(call, compute));
    }
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor> topk_result(const TopkCall& call, Topk compute) {
  const at::DimVector shape = topk_shape(call);
  at::Tensor values = empty_result(kHammingTopkOp, shape, call.queries.options().dtype(at::kInt));
  at::Tensor indices = empty_result(kHammingTopkOp, shape, call.queries.options().dtype(at::kLong));
  compute(call, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> topk_out(const TopkCall& call, Topk compute, bool contiguous_only,
                                              at::Tensor& values, at::Tensor& indices) {
  restoring_outs(kHammingTopkOp, {{"values", &values}, {"indices", &indices}}, [&] {
    prepare_topk_out(call, values, indices);
    if (!contiguous_only || (values.is_contiguous() && indices.is_contiguous())) {
      compute(call, values, indices);
    } else {
      auto [v, i] = topk_result(call, compute);
      values.copy_(v);
      indices.copy_(i);
    }
  });
  return {values, indices};
}

// The 1 bits of each byte of uint8 codes, as uint8, by halves (SWAR; shifts of uint8 are
// logical on every backend).
at::Tensor byte_ones(const at::Tensor& bytes) {
  at::Tensor v = bytes.sub(bytes.bitwise_right_shift(1).bitwise_and_(0x55));
  v = v.bitwise_and(0x33).add_(v.bitwise_right_shift(2).bitwise_and_(0x33));
  return v.add_(v.bitwise_right_shift(4)).bitwise_and_(0x0f);
}

// The bytes of (..., M, c, B) intermediates the composite kernels make at once, at most.
constexpr int64_t kCompositeBytes = int64_t{1} << 24;

// The distances of x1's rows (..., M, B) to x2's (..., c, B), as int32 (..., M, c).
at::Tensor composite_distances(const at::Tensor& x1, const at::Tensor& x2) {
  const at::Tensor xored = x1.view(at::kByte).unsqueeze(-2).bitwise_xor(x2.view(at::kByte).unsqueeze(-3));
  return byte_ones(xored).sum(-1, false, at::kInt);
}

// The rows of x2 a composite step takes: (..., M, c, B) within kCompositeBytes.
int64_t composite_chunk(int64_t rows_before, int64_t bytes, int64_t at_least) {
  return std::max<int64_t>(kCompositeBytes / std::max<int64_t>(rows_before * bytes, 1), at_least);
}

}  // namespace

// ---- the entries ----

namespace composite {

void hamming_distance_compute(at::Tensor& out, const at::Tensor& x1, const at::Tensor& x2) {
  const int64_t n = x2.size(-2), bytes = x2.size(-1);
  if (bytes == 0) return void(out.zero_());
  const int64_t chunk = composite_chunk(x1.numel() / bytes, bytes, 1);
  for (int64_t j = 0; j < n; j += chunk) {
    const int64_t c = std::min(chunk, n - j);
    out.narrow(-1, j, c).copy_(composite_distances(x1, x2.narrow(-2, j, c)));
  }
}

// Each chunk's distances joined to the best so far by one key per candidate, distance * N +
// index, whose order is the contract's (the smaller distance, then the smaller index) and
// which torch.topk orders exactly, being distinct; the k smallest are kept.
void hamming_topk_compute(at::Tensor& values, at::Tensor& indices, const at::Tensor& queries,
                          const at::Tensor& database, int64_t k) {
  const int64_t q_count = queries.size(0), n = database.size(0), bytes = queries.size(1);
  const int64_t chunk = composite_chunk(q_count, bytes, k);
  at::Tensor best = at::empty({q_count, 0}, queries.options().dtype(at::kLong));
  for (int64_t j = 0; j < n; j += chunk) {
    const int64_t c = std::min(chunk, n - j);
    at::Tensor keys = bytes == 0 ? at::zeros({q_count, c}, queries.options().dtype(at::kLong))
                                 : composite_distances(queries, database.narrow(0, j, c)).to(at::kLong).mul_(n);
    keys.add_(at::arange(j, j + c, queries.options().dtype(at::kLong)));
    at::Tensor joined = at::cat({best, keys}, 1);
    best = std::get<0>(joined.topk(std::min<int64_t>(k, joined.size(1)), 1, /*largest=*/false, /*sorted=*/true));
  }
  const at::Tensor distances = best.div(n, "floor");
  values.copy_(distances);
  indices.copy_(best.sub(distances.mul(n)));
}

at::Tensor hamming_distance(const at::Tensor& x1, const at::Tensor& x2) {
  check_device_generic(kHammingDistanceOp, {"x1", &x1}, {"x2", &x2}, {});
  return distance_result(distance_call(x1, x2), distance_device);
}
at::Tensor& hamming_distance_out(const at::Tensor& x1, const at::Tensor& x2, at::Tensor& out) {
  check_device_generic(kHammingDistanceOp, {"x1", &x1}, {"x2", &x2}, {{"out", &out}});
  return distance_out(distance_call(x1, x2), distance_device, /*contiguous_only=*/false, out);
}
std::tuple<at::Tensor, at::Tensor> hamming_topk(const at::Tensor& queries, const at::Tensor& database, int64_t k) {
  check_device_generic(kHammingTopkOp, {"queries", &queries}, {"database", &database}, {});
  return topk_result(topk_call(queries, database, k), topk_device);
}
std::tuple<at::Tensor&, at::Tensor&> hamming_topk_out(const at::Tensor& queries, const at::Tensor& database, int64_t k,
                                                      at::Tensor& values, at::Tensor& indices) {
  check_device_generic(kHammingTopkOp, {"queries", &queries}, {"database", &database},
                       {{"values", &values}, {"indices", &indices}});
  return topk_out(topk_call(queries, database, k), topk_device, /*contiguous_only=*/false, values, indices);
}

}  // namespace composite

namespace cpu {

at::Tensor hamming_distance(const at::Tensor& x1, const at::Tensor& x2) {
  return distance_result(distance_call(x1, x2), distance_cpu);
}
at::Tensor& hamming_distance_out(const at::Tensor& x1, const at::Tensor& x2, at::Tensor& out) {
  return distance_out(distance_call(x1, x2), distance_cpu, /*contiguous_only=*/true, out);
}
std::tuple<at::Tensor, at::Tensor> hamming_topk(const at::Tensor& queries, const at::Tensor& database, int64_t k) {
  return topk_result(topk_call(queries, database, k), topk_cpu);
}
std::tuple<at::Tensor&, at::Tensor&> hamming_topk_out(const at::Tensor& queries, const at::Tensor& database, int64_t k,
                                                      at::Tensor& values, at::Tensor& indices) {
  return topk_out(topk_call(queries, database, k), topk_cpu, /*contiguous_only=*/true, values, indices);
}

}  // namespace cpu
}  // namespace torchops
