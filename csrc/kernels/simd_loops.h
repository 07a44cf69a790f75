// The loops and the width / op dispatch shared by the SIMD levels. Included inside an ISA
// namespace (after kernels_impl.h), once that namespace has defined these hooks:
//   Vec, kVecBytes                 the vector type and its size
//   load, store                    unaligned vector loads and stores
//   stream, fence_streaming_stores a non-temporal store to an aligned address, and what
//                                  orders those stores before the ones that follow
//   bytes_of(b)                    a vector of bytes b
//   Count, count_of(c)             one shift count, as the level's shift-by-one-count takes it
//   shift_vec<Width, Op>(x, count)                       a count per lane
//   shift_vec_by_scalar<Width, Op>(x, count, byte_mask)  one Count for every lane
// Each level thus gets its own copy, compiled for its ISA, and nothing here names one ISA's
// instructions. Includes nothing itself.

// Drives a vector step over n elements: step(a, b, out) handles `per_step` elements of
// `in_width` bytes from a (and b, when given) and writes `per_step` results of `out_width`
// bytes. The last, partial step works on zero-padded stack copies, so no load reads past
// the end of an input and no store writes past the end of the output.
constexpr int64_t kMaxStepBytes = 256;

// The last, partial step of run_steps: `rest` elements. Kept out of line, so that the loop
// over full steps stays small enough to be inlined into every row's loop.
template <typename Step>
[[gnu::noinline]] void run_last_step(const Step& step, int64_t in_width, int64_t out_width, const char* a,
                                     const char* b, char* out, int64_t rest) {
  alignas(64) char a_tail[kMaxStepBytes] = {};
  alignas(64) char b_tail[kMaxStepBytes] = {};
  alignas(64) char out_tail[kMaxStepBytes];
  std::memcpy(a_tail, a, rest * in_width);
  if (b) std::memcpy(b_tail, b, rest * in_width);
  step(a_tail, b ? b_tail : nullptr, out_tail);
  std::memcpy(out, out_tail, rest * out_width);
}

// Inlined by force: a call per row of a few steps (a channels_last tensor's pixels) would
// cost as much as the row (measured with benchmarks/instructions.py).
template <typename Step>
[[gnu::always_inline]] inline void run_steps(const Step& step, int64_t per_step, int64_t in_width, int64_t out_width,
                                             const void* a, const void* b, void* out, int64_t n) {
  const char* a_bytes = static_cast<const char*>(a);
  const char* b_bytes = static_cast<const char*>(b);
  char* out_bytes = static_cast<char*>(out);
  int64_t i = 0;
  for (; i + per_step <= n; i += per_step) {
    step(a_bytes + i * in_width, b_bytes ? b_bytes + i * in_width : nullptr, out_bytes + i * out_width);
  }
  if (i == n) return;
  run_last_step(step, in_width, out_width, a_bytes + i * in_width, b_bytes ? b_bytes + i * in_width : nullptr,
                out_bytes + i * out_width, n - i);
}

// run_steps on every row of `rows` (a is x, b the count).
template <typename Step>
[[gnu::always_inline]] inline void run_steps(const Step& step, int64_t per_step, int64_t in_width, int64_t out_width,
                                             const void* a, const void* b, void* out, const Rows& rows) {
  const int64_t n = rows.n;
  for_each_row(rows, a, b, out, [&, n](const char* a_row, const char* b_row, char* out_row) {
    run_steps(step, per_step, in_width, out_width, a_row, b_row, out_row, n);
  });
}

template <bool Streaming>
inline void put(char* p, Vec v) {
  if constexpr (Streaming) {
    stream(p, v);
  } else {
    store(p, v);
  }
}

// Runs loop(std::bool_constant<Streaming>, begin, length) over n elements of `width` bytes,
// `per_step` at a time, for an output written with streaming stores: ordinary stores for the
// few elements before `out` is vector-aligned (non-temporal stores need that) and for the
// partial last step (it goes through a stack buffer), and streaming stores for the full
// steps in between, fenced so that whoever reads `out` next sees them.
template <typename Loop>
inline void split_for_streaming(const void* out, int64_t width, int64_t per_step, int64_t n, const Loop& loop) {
  const int64_t misalignment = static_cast<int64_t>(reinterpret_cast<uintptr_t>(out) % kVecBytes);
  const int64_t head = misalignment == 0 ? 0 : std::min(n, (kVecBytes - misalignment) / width);
  const int64_t body = (n - head) / per_step * per_step;
  loop(std::false_type{}, 0, head);
  loop(std::true_type{}, head, body);
  fence_streaming_stores();
  loop(std::false_type{}, head + body, n - head - body);
}

// A shift's step: this many vectors, so that the loop's own instructions (pointer updates,
// compare, branch) are spread over as many elements as a partial step's stack copies allow.
constexpr int kVectorsPerStep = 4;
static_assert(kVectorsPerStep * kVecBytes <= kMaxStepBytes, "a step must fit run_steps's tail buffers");

// The rows of a shift: make_step(std::bool_constant<Streaming>) gives the step. Without
// streaming stores (the common case) every row goes straight to run_steps, so a short row
// costs only its loop; with them, each row is split by split_for_streaming.
template <typename MakeStep>
[[gnu::always_inline]] inline void run_shift_rows(bool streaming, const MakeStep& make_step, int64_t width,
                                                  int64_t per_step, const void* x, const void* count, void* out,
                                                  const Rows& rows) {
  if (!streaming) return run_steps(make_step(std::false_type{}), per_step, width, width, x, count, out, rows);
  const int64_t n = rows.n;
  for_each_row(rows, x, count, out, [&, n](const char* x_row, const char* count_row, char* out_row) {
    split_for_streaming(out_row, width, per_step, n, [&](auto streaming_stores, int64_t begin, int64_t len) {
      run_steps(make_step(streaming_stores), per_step, width, width, x_row + begin * width,
                count_row ? count_row + begin * width : nullptr, out_row + begin * width, len);
    });
  });
}

// A step's loads all come before its stores. Interleaved (load, shift, store, the next load),
// a store to out and the load right after it seem to alias when out lies one vector after x
// or the count modulo 4 KiB (the CPU matches a load against earlier stores by the address's
// low 12 bits): the load waits for the store, and a 256K int64 shift ran at 0.78x PyTorch's
// speed there on an AMD EPYC (Zen 4), at its speed at every other offset. The compiler keeps
// the order written: out may alias x for all it knows.
template <bool Streaming, typename Compute>
[[gnu::always_inline]] inline void loads_then_stores(char* o, const Compute& compute) {
  Vec results[kVectorsPerStep];
  for (int v = 0; v < kVectorsPerStep; ++v) results[v] = compute(v);
  for (int v = 0; v < kVectorsPerStep; ++v) put<Streaming>(o + v * kVecBytes, results[v]);
}

// A count tensor's step (shift_tensor_count).
template <int Width, ShiftOp Op, bool Streaming>
[[gnu::always_inline]] inline void shift_step(const char* a, const char* c, char* o) {
  loads_then_stores<Streaming>(o, [a, c](int v) {
    return shift_vec<Width, Op>(load(a + v * kVecBytes), load(c + v * kVecBytes));
  });
}

// One count row for every row (count_stride 0: a per-channel count of a channels_last tensor,
// whose rows are one pixel's channels) of `FullSteps` full steps and a partial one: the count
// vectors of the full steps are loaded once and kept in registers, and each row is one pass
// of straight-line code, where the row-by-row loop would pay its per-row set-up (about 20
// instructions at AVX2) on a row of a step or two. Rows in order, each from its start, so
// the hardware prefetchers see the same stream as with the row-by-row loop.
template <int Width, ShiftOp Op, int FullSteps>
void shift_by_repeated_count_row(const void* x, const void* count, void* out, const Rows& rows) {
  constexpr int64_t kStepBytes = kVectorsPerStep * kVecBytes;
  constexpr int kVectors = FullSteps * kVectorsPerStep;
  const char* x_bytes = static_cast<const char*>(x);
  const char* count_bytes = static_cast<const char*>(count);
  char* out_bytes = static_cast<char*>(out);
  const int64_t x_stride = rows.x_stride;
  const int64_t out_stride = rows.out_stride;
  const int64_t rest = rows.n - FullSteps * kStepBytes / Width;
  Vec counts[kVectors];
  for (int v = 0; v < kVectors; ++v) counts[v] = load(count_bytes + v * kVecBytes);
  for (int64_t r = 0; r < rows.rows; ++r) {
    const char* a = x_bytes + r * x_stride;
    char* o = out_bytes + r * out_stride;
    for (int v = 0; v < kVectors; ++v) {
      store(o + v * kVecBytes, shift_vec<Width, Op>(load(a + v * kVecBytes), counts[v]));
    }
    if (rest == 0) continue;
    run_last_step([](const char* a, const char* c, char* o) { shift_step<Width, Op, false>(a, c, o); }, Width, Width,
                  a + FullSteps * kStepBytes, count_bytes + FullSteps * kStepBytes, o + FullSteps * kStepBytes, rest);
  }
}

template <int Width, ShiftOp Op>
void shift_tensor_count(const void* x, const void* count, void* out, const Rows& rows, bool streaming) {
  // One or two full steps keep their count vectors in 4 or 8 registers (of 16 at AVX2).
  const int64_t full_steps = rows.n * Width / (kVectorsPerStep * kVecBytes);
  if (!streaming && rows.count_stride == 0 && rows.rows > 1) {
    if (full_steps == 1) return shift_by_repeated_count_row<Width, Op, 1>(x, count, out, rows);
    if (full_steps == 2) return shift_by_repeated_count_row<Width, Op, 2>(x, count, out, rows);
  }
  run_shift_rows(streaming, [](auto streaming_stores) {
    return [](const char* a, const char* c, char* o) {
      shift_step<Width, Op, decltype(streaming_stores)::value>(a, c, o);
    };
  }, Width, kVectorsPerStep * kVecBytes / Width, x, count, out, rows);
}

// Inlined by force into the per-row loop of shift_row_counts, where a call per row shows.
template <int Width, ShiftOp Op>
[[gnu::always_inline]] inline void shift_scalar_count(const void* x, unsigned c, void* out, const Rows& rows,
                                                      bool streaming) {
  const Count count = count_of(c);
  // 8-bit lanes shift as 16-bit ones; byte_mask clears the bits that crossed into a
  // neighbour. Only they use it (and only their count is below 8, so 0xff << c is defined).
  uint8_t kept_bits = 0xff;
  if constexpr (Width == 1) kept_bits = Op == ShiftOp::Left ? static_cast<uint8_t>(0xffu << c) : static_cast<uint8_t>(0xffu >> c);
  const Vec byte_mask = bytes_of(kept_bits);
  // count and byte_mask by value: the stores through char* could alias a reference's
  // target, and the compiler would reload them for every vector.
  run_shift_rows(streaming, [count, byte_mask](auto streaming_stores) {
    return [count, byte_mask](const char* a, const char*, char* o) {
      loads_then_stores<decltype(streaming_stores)::value>(o, [a, count, byte_mask](int v) {
        return shift_vec_by_scalar<Width, Op>(load(a + v * kVecBytes), count, byte_mask);
      });
    };
  }, Width, kVectorsPerStep * kVecBytes / Width, x, nullptr, out, rows);
}

// One count per row (shift_by_row_count): each row settled and shifted as by
// shift_by_scalar_simd, with the width and op switched once for the block, not per row.
template <int Width, ShiftOp Op>
void shift_row_counts(const void* x, const void* count, void* out, const Rows& rows, bool streaming) {
  const Rows one_row{rows.n, 1, 0, 0, 0};
  for_each_row(rows, x, count, out, [&](const char* x_row, const char* count_row, char* out_row) {
    uint64_t c = load_count<Lane<Width>>(count_row);
    if (settle_out_of_range_count(Op, Width, c, out_row, one_row)) return;
    shift_scalar_count<Width, Op>(x_row, static_cast<unsigned>(c), out_row, one_row, streaming);
  });
}

void shift_simd(ShiftOp op, int width, const void* x, const void* count, void* out, const Rows& rows,
                bool streaming) {
  with_width_and_op(width, op, [&](auto w, auto o) {
    shift_tensor_count<decltype(w)::value, decltype(o)::value>(x, count, out, rows, streaming);
  });
}

void shift_by_scalar_simd(ShiftOp op, int width, const void* x, uint64_t count, void* out, const Rows& rows,
                          bool streaming) {
  if (settle_out_of_range_count(op, width, count, out, rows)) return;
  with_width_and_op(width, op, [&](auto w, auto o) {
    shift_scalar_count<decltype(w)::value, decltype(o)::value>(x, static_cast<unsigned>(count), out, rows, streaming);
  });
}

void shift_by_row_count_simd(ShiftOp op, int width, const void* x, const void* count, void* out, const Rows& rows,
                             bool streaming) {
  with_width_and_op(width, op, [&](auto w, auto o) {
    shift_row_counts<decltype(w)::value, decltype(o)::value>(x, count, out, rows, streaming);
  });
}

// The vector levels' rule for strided operands (kernels.h): elements of 4 and 8 bytes at most a
// cache line apart (every other column, not a transposed operand) are read in place by the
// scalar shift_strided, which keeps up with memory there where the tiles fell behind it;
// narrower elements, whose vector loop is far cheaper than the scalar one, and transposed
// operands, whose tiles read each cache line once, go through the tiles. Measured at AVX2
// (docs/performance.md, "Kernel levels and dispatch"); AVX-512 takes the AVX2 rule, measured
// on no AVX-512 CPU.
bool strided_shift_in_place_simd(int width, int64_t step) { return width >= 4 && step <= 64; }

// A vector level's table before its own slots: the portable one (kernels_impl.h) with this
// header's shifts and strided rule.
constexpr KernelTable simd_table() {
  KernelTable table = portable_table();
  table.shift = &shift_simd;
  table.shift_by_scalar = &shift_by_scalar_simd;
  table.shift_by_row_count = &shift_by_row_count_simd;
  table.strided_shift_in_place = &strided_shift_in_place_simd;
  return table;
}
