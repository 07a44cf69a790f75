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

template <typename Step>
inline void run_steps(const Step& step, int64_t per_step, int64_t in_width, int64_t out_width, const void* a,
                      const void* b, void* out, int64_t n) {
  const char* a_bytes = static_cast<const char*>(a);
  const char* b_bytes = static_cast<const char*>(b);
  char* out_bytes = static_cast<char*>(out);
  int64_t i = 0;
  for (; i + per_step <= n; i += per_step) {
    step(a_bytes + i * in_width, b_bytes ? b_bytes + i * in_width : nullptr, out_bytes + i * out_width);
  }
  if (i == n) return;
  const int64_t rest = n - i;
  alignas(64) char a_tail[kMaxStepBytes] = {};
  alignas(64) char b_tail[kMaxStepBytes] = {};
  alignas(64) char out_tail[kMaxStepBytes];
  std::memcpy(a_tail, a_bytes + i * in_width, rest * in_width);
  if (b_bytes) std::memcpy(b_tail, b_bytes + i * in_width, rest * in_width);
  step(a_tail, b_bytes ? b_tail : nullptr, out_tail);
  std::memcpy(out_bytes + i * out_width, out_tail, rest * out_width);
}

// run_steps on every row of `rows` (a is x, b the count).
template <typename Step>
inline void run_steps(const Step& step, int64_t per_step, int64_t in_width, int64_t out_width, const void* a,
                      const void* b, void* out, const Rows& rows) {
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
// `per_step` at a time: all with ordinary stores, or, when streaming, with ordinary stores
// for the few elements before `out` is vector-aligned (non-temporal stores need that) and
// for the partial last step (it goes through a stack buffer), and streaming stores for the
// full steps in between, fenced so that whoever reads `out` next sees them.
template <typename Loop>
inline void split_for_streaming(bool streaming, const void* out, int64_t width, int64_t per_step, int64_t n,
                                const Loop& loop) {
  if (!streaming) return loop(std::false_type{}, 0, n);
  const int64_t misalignment = static_cast<int64_t>(reinterpret_cast<uintptr_t>(out) % kVecBytes);
  const int64_t head = misalignment == 0 ? 0 : std::min(n, (kVecBytes - misalignment) / width);
  const int64_t body = (n - head) / per_step * per_step;
  loop(std::false_type{}, 0, head);
  loop(std::true_type{}, head, body);
  fence_streaming_stores();
  loop(std::false_type{}, head + body, n - head - body);
}

template <int Width, ShiftOp Op>
void shift_tensor_count(const void* x, const void* count, void* out, const Rows& rows, bool streaming) {
  constexpr int64_t kPerStep = 2 * kVecBytes / Width;
  const int64_t n = rows.n;
  for_each_row(rows, x, count, out, [&, n](const char* x_row, const char* count_row, char* out_row) {
    split_for_streaming(streaming, out_row, Width, kPerStep, n, [&](auto streaming_stores, int64_t begin, int64_t len) {
      constexpr bool kStreaming = decltype(streaming_stores)::value;
      run_steps([](const char* a, const char* c, char* o) {
        put<kStreaming>(o, shift_vec<Width, Op>(load(a), load(c)));
        put<kStreaming>(o + kVecBytes, shift_vec<Width, Op>(load(a + kVecBytes), load(c + kVecBytes)));
      }, kPerStep, Width, Width, x_row + begin * Width, count_row + begin * Width, out_row + begin * Width, len);
    });
  });
}

template <int Width, ShiftOp Op>
void shift_scalar_count(const void* x, unsigned c, void* out, const Rows& rows, bool streaming) {
  const Count count = count_of(c);
  // 8-bit lanes shift as 16-bit ones; byte_mask clears the bits that crossed into a
  // neighbour. Only they use it (and only their count is below 8, so 0xff << c is defined).
  uint8_t kept_bits = 0xff;
  if constexpr (Width == 1) kept_bits = Op == ShiftOp::Left ? static_cast<uint8_t>(0xffu << c) : static_cast<uint8_t>(0xffu >> c);
  const Vec byte_mask = bytes_of(kept_bits);
  constexpr int64_t kPerStep = 2 * kVecBytes / Width;
  const int64_t n = rows.n;
  for_each_row(rows, x, nullptr, out, [&, n](const char* x_row, const char*, char* out_row) {
    split_for_streaming(streaming, out_row, Width, kPerStep, n, [&](auto streaming_stores, int64_t begin, int64_t len) {
      constexpr bool kStreaming = decltype(streaming_stores)::value;
      run_steps([&](const char* a, const char*, char* o) {
        put<kStreaming>(o, shift_vec_by_scalar<Width, Op>(load(a), count, byte_mask));
        put<kStreaming>(o + kVecBytes, shift_vec_by_scalar<Width, Op>(load(a + kVecBytes), count, byte_mask));
      }, kPerStep, Width, Width, x_row + begin * Width, nullptr, out_row + begin * Width, len);
    });
  });
}

template <int Width>
void shift_width(ShiftOp op, const void* x, const void* count, void* out, const Rows& rows, bool streaming) {
  switch (op) {
    case ShiftOp::Left: return shift_tensor_count<Width, ShiftOp::Left>(x, count, out, rows, streaming);
    case ShiftOp::RightLogical: return shift_tensor_count<Width, ShiftOp::RightLogical>(x, count, out, rows, streaming);
    case ShiftOp::RightArithmetic: return shift_tensor_count<Width, ShiftOp::RightArithmetic>(x, count, out, rows, streaming);
  }
}

template <int Width>
void shift_width_by_scalar(ShiftOp op, const void* x, unsigned c, void* out, const Rows& rows, bool streaming) {
  switch (op) {
    case ShiftOp::Left: return shift_scalar_count<Width, ShiftOp::Left>(x, c, out, rows, streaming);
    case ShiftOp::RightLogical: return shift_scalar_count<Width, ShiftOp::RightLogical>(x, c, out, rows, streaming);
    case ShiftOp::RightArithmetic: return shift_scalar_count<Width, ShiftOp::RightArithmetic>(x, c, out, rows, streaming);
  }
}

void shift_simd(ShiftOp op, int width, const void* x, const void* count, void* out, const Rows& rows,
                bool streaming) {
  switch (width) {
    case 1: return shift_width<1>(op, x, count, out, rows, streaming);
    case 2: return shift_width<2>(op, x, count, out, rows, streaming);
    case 4: return shift_width<4>(op, x, count, out, rows, streaming);
    case 8: return shift_width<8>(op, x, count, out, rows, streaming);
  }
}

void shift_by_scalar_simd(ShiftOp op, int width, const void* x, uint64_t count, void* out, const Rows& rows,
                          bool streaming) {
  if (settle_out_of_range_count(op, width, count, out, rows)) return;
  const unsigned c = static_cast<unsigned>(count);
  switch (width) {
    case 1: return shift_width_by_scalar<1>(op, x, c, out, rows, streaming);
    case 2: return shift_width_by_scalar<2>(op, x, c, out, rows, streaming);
    case 4: return shift_width_by_scalar<4>(op, x, c, out, rows, streaming);
    case 8: return shift_width_by_scalar<8>(op, x, c, out, rows, streaming);
  }
}
