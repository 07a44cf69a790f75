// Portable loop bodies behind every KernelTable (see kernels.h for the rules they follow).
// Included by each ISA's kernel file inside that ISA's namespace, so each ISA gets its own
// copy compiled with its own code generation: the compiler vectorizes these loops for it.
// Must not be included outside such a namespace, and includes nothing itself.

template <typename U>
constexpr uint64_t kBits = 8 * sizeof(U);

// The unsigned lane of `Width` bytes.
template <int Width>
using Lane = std::conditional_t<Width == 1, uint8_t,
                                std::conditional_t<Width == 2, uint16_t, std::conditional_t<Width == 4, uint32_t, uint64_t>>>;

// A count of a tensor, `width` bytes at p, read as unsigned: a negative count of a signed
// dtype reads as one >= the width, out of range as the contract has it.
template <typename U>
inline uint64_t load_count(const char* p) {
  U count;
  std::memcpy(&count, p, sizeof(U));
  return count;
}

inline uint64_t load_count(int width, const char* p) {
  switch (width) {
    case 1: return load_count<uint8_t>(p);
    case 2: return load_count<uint16_t>(p);
    case 4: return load_count<uint32_t>(p);
  }
  return load_count<uint64_t>(p);
}

// f(width, op), both as compile-time constants (std::integral_constant), for a run-time
// lane width in bytes and op: the one switch of the levels' slots.
template <typename F>
inline void with_width_and_op(int width, ShiftOp op, const F& f) {
  const auto with_op = [&](auto w) {
    switch (op) {
      case ShiftOp::Left: return f(w, std::integral_constant<ShiftOp, ShiftOp::Left>{});
      case ShiftOp::RightLogical: return f(w, std::integral_constant<ShiftOp, ShiftOp::RightLogical>{});
      case ShiftOp::RightArithmetic: return f(w, std::integral_constant<ShiftOp, ShiftOp::RightArithmetic>{});
    }
  };
  switch (width) {
    case 1: return with_op(std::integral_constant<int, 1>{});
    case 2: return with_op(std::integral_constant<int, 2>{});
    case 4: return with_op(std::integral_constant<int, 4>{});
    case 8: return with_op(std::integral_constant<int, 8>{});
  }
}

// Widen the narrow lanes to unsigned int before shifting so that integer promotion never
// turns them into a signed int (where a shift into the sign bit would be undefined).
template <typename U>
using Promoted = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;

template <typename U>
inline U shift_left(U x, uint64_t count) {
  return count < kBits<U> ? static_cast<U>(static_cast<Promoted<U>>(x) << count) : U(0);
}

template <typename U>
inline U shift_right_logical(U x, uint64_t count) {
  return count < kBits<U> ? static_cast<U>(x >> count) : U(0);
}

// The arithmetic right shift, computed on unsigned lanes, in two forms.
//
// By one count for every element, in [0, width): flipping the sign bit maps the signed
// value v to v + 2^(width-1), which is non-negative; a logical shift of that is
// floor(v / 2^count) + 2^(width-1-count), so subtracting the second term (the sign bit
// shifted alike, the same for every element) leaves floor(v / 2^count), the arithmetic
// shift, modulo 2^width. Only shifts by that one count: the loop vectorizes.
template <typename U>
inline U shift_right_arithmetic_in_range(U x, uint64_t count) {
  constexpr U kSignBit = static_cast<U>(U(1) << (kBits<U> - 1));
  return static_cast<U>(static_cast<U>(static_cast<U>(x ^ kSignBit) >> count) - static_cast<U>(kSignBit >> count));
}

// By a count per element, any count: one >= width saturates at width - 1, which leaves
// exactly the sign fill. x86-64's baseline (SSE2) has no vector shift by a count per lane,
// so there the loop stays scalar and each instruction of it counts: a lane narrower than 8
// bytes is sign-extended into a wider unsigned one (a conversion, modulo 2^n), whose logical
// shift brings copies of the sign bit in from the left: one shift, as many instructions as
// a signed `>>`. An 8-byte lane, which has no wider one, is inverted when negative (leaving
// a non-negative value, whose logical shift is its arithmetic one), shifted, inverted back.
template <typename U>
inline U shift_right_arithmetic(U x, uint64_t count) {
  count = count < kBits<U> ? count : kBits<U> - 1;
  if constexpr (sizeof(U) < 8) {
    using Wide = std::conditional_t<(sizeof(U) < 4), uint32_t, uint64_t>;
    const auto sign_extended =
        static_cast<Wide>(static_cast<std::make_signed_t<Wide>>(static_cast<std::make_signed_t<U>>(x)));
    return static_cast<U>(sign_extended >> count);
  } else {
    const U sign_fill = U(0) - (x >> (kBits<U> - 1));  // 0, or all ones when negative
    return static_cast<U>(((x ^ sign_fill) >> count) ^ sign_fill);
  }
}

// f(x_row, count_row, out_row) for each row of `rows`; count (and its rows) may be null.
// `rows` is taken by value, and the loops below copy what they read of it: a store through
// a byte pointer may alias anything the compiler cannot see is local, and would make it
// reload the length after every element (and give up vectorizing).
template <typename F>
inline void for_each_row(const Rows rows, const void* x, const void* count, void* out, const F& f) {
  const char* x_bytes = static_cast<const char*>(x);
  const char* count_bytes = static_cast<const char*>(count);
  char* out_bytes = static_cast<char*>(out);
  for (int64_t r = 0; r < rows.rows; ++r) {
    f(x_bytes + r * rows.x_stride, count_bytes ? count_bytes + r * rows.count_stride : nullptr,
      out_bytes + r * rows.out_stride);
  }
}

// out[i] = f(x[i], count[i]) on every row, for lanes of type U.
template <typename U, typename F>
void map_lanes(const Rows& rows, const void* x, const void* count, void* out, const F& f) {
  const int64_t n = rows.n;
  for_each_row(rows, x, count, out, [n, &f](const char* x_row, const char* count_row, char* out_row) {
    const U* a = reinterpret_cast<const U*>(x_row);
    const U* c = reinterpret_cast<const U*>(count_row);
    U* o = reinterpret_cast<U*>(out_row);
    // Unrolled: where a count per lane keeps the loop scalar (x86-64's baseline), the loop's
    // own compare and branch would otherwise be a quarter of its instructions.
#pragma GCC unroll 4
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], c[i]);
  });
}

// out[i] = f(x[i]) on every row, for lanes of type U and outputs of type O.
template <typename U, typename O = U, typename F>
void map_lanes(const Rows& rows, const void* x, void* out, const F& f) {
  const int64_t n = rows.n;
  for_each_row(rows, x, nullptr, out, [n, &f](const char* x_row, const char*, char* out_row) {
    const U* a = reinterpret_cast<const U*>(x_row);
    O* o = reinterpret_cast<O*>(out_row);
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
  });
}

// out[i] = f(x[i], count[i]) on every row, for lanes of type U whose elements are `steps`
// apart. Unaligned reads and writes (memcpy), as a strided view's data may be. An input not
// marked strided, and `out` unless both inputs are, take contiguous elements: the compiler
// then steps one index for them, where a pointer per array would not all stay in registers.
template <typename U, bool StridedX, bool StridedCount, typename F>
void map_strided_lanes(const Rows& rows, const Steps& steps, const void* x, const void* count, void* out,
                       const F& f) {
  const int64_t n = rows.n;
  const Steps s = steps;  // by value, for the reason for_each_row gives
  for_each_row(rows, x, count, out, [n, s, &f](const char* x_row, const char* count_row, char* out_row) {
    const int64_t x_step = StridedX ? s.x : int64_t(sizeof(U));
    const int64_t count_step = StridedCount ? s.count : int64_t(sizeof(U));
    const int64_t out_step = StridedX && StridedCount ? s.out : int64_t(sizeof(U));
    const auto element = [&](int64_t i) {
      U a, c;
      std::memcpy(&a, x_row + i * x_step, sizeof(U));
      std::memcpy(&c, count_row + i * count_step, sizeof(U));
      const U o = f(a, c);
      std::memcpy(out_row + i * out_step, &o, sizeof(U));
    };
    // Four elements a step, each at a constant multiple of the step from the step's first: the
    // compiler keeps those offsets in registers and advances one pointer per operand per step.
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      element(i);
      element(i + 1);
      element(i + 2);
      element(i + 3);
    }
    for (; i < n; ++i) element(i);
  });
}

// The loop of map_strided_lanes for these steps: one input strided and out contiguous (a
// transposed or every-other-element operand into a new output: the common cases), or any.
template <typename U, typename F>
void map_strided_lanes(const Rows& rows, const Steps& steps, const void* x, const void* count, void* out,
                       const F& f) {
  constexpr int64_t size = sizeof(U);
  if (steps.out == size && steps.count == size) return map_strided_lanes<U, true, false>(rows, steps, x, count, out, f);
  if (steps.out == size && steps.x == size) return map_strided_lanes<U, false, true>(rows, steps, x, count, out, f);
  map_strided_lanes<U, true, true>(rows, steps, x, count, out, f);
}

// The shift `Op` of one lane by its own count, any count.
template <typename U, ShiftOp Op>
inline U shift_lane(U x, U count) {
  if constexpr (Op == ShiftOp::Left) return shift_left(x, count);
  if constexpr (Op == ShiftOp::RightLogical) return shift_right_logical(x, count);
  if constexpr (Op == ShiftOp::RightArithmetic) return shift_right_arithmetic(x, count);
}

// A count that is out of range for every element is settled once, before any loop: the
// output is all zeros (left, logical right), or, for the arithmetic right shift, the count
// becomes width - 1, which leaves exactly the sign fill. Returns true when `out` is done;
// otherwise `count` is in range for the loops that follow (a shift by one broadcast count).
inline bool settle_out_of_range_count(ShiftOp op, int width, uint64_t& count, void* out, const Rows& rows) {
  const uint64_t bits = 8 * static_cast<uint64_t>(width);
  if (count < bits) return false;
  if (op == ShiftOp::RightArithmetic) {
    count = bits - 1;
    return false;
  }
  const size_t row_bytes = static_cast<size_t>(rows.n) * width;
  for_each_row(rows, out, nullptr, out, [row_bytes](const char*, const char*, char* out_row) {
    std::memset(out_row, 0, row_bytes);
  });
  return true;
}

template <typename U>
void shift_lanes_by_scalar(ShiftOp op, const void* x, unsigned c, void* out, const Rows& rows) {
  switch (op) {
    case ShiftOp::Left:
      return map_lanes<U>(rows, x, out, [c](U a) { return static_cast<U>(static_cast<Promoted<U>>(a) << c); });
    case ShiftOp::RightLogical:
      return map_lanes<U>(rows, x, out, [c](U a) { return static_cast<U>(a >> c); });
    case ShiftOp::RightArithmetic:
      return map_lanes<U>(rows, x, out, [c](U a) { return shift_right_arithmetic_in_range(a, c); });
  }
}

template <typename U>
void signbit_lanes(const void* x, bool* out, const Rows& rows) {
  map_lanes<U, bool>(rows, x, out, [](U a) { return static_cast<bool>(a >> (kBits<U> - 1)); });
}

// The table's slots take untyped pointers, a lane width in bytes and the op, dispatched here.
// The portable loops leave `streaming` to the compiler: it has no portable spelling.
inline void shift(ShiftOp op, int width, const void* x, const void* count, void* out, const Rows& rows,
                  bool /*streaming*/) {
  with_width_and_op(width, op, [&](auto w, auto o) {
    using U = Lane<decltype(w)::value>;
    map_lanes<U>(rows, x, count, out, [](U a, U c) { return shift_lane<U, decltype(o)::value>(a, c); });
  });
}

inline void shift_strided(ShiftOp op, int width, const void* x, const void* count, void* out, const Rows& rows,
                          const Steps& steps) {
  with_width_and_op(width, op, [&](auto w, auto o) {
    using U = Lane<decltype(w)::value>;
    map_strided_lanes<U>(rows, steps, x, count, out,
                         [](U a, U c) { return shift_lane<U, decltype(o)::value>(a, c); });
  });
}

inline void shift_by_scalar(ShiftOp op, int width, const void* x, uint64_t count, void* out, const Rows& rows,
                            bool /*streaming*/) {
  if (settle_out_of_range_count(op, width, count, out, rows)) return;
  const unsigned c = static_cast<unsigned>(count);
  switch (width) {
    case 1: return shift_lanes_by_scalar<uint8_t>(op, x, c, out, rows);
    case 2: return shift_lanes_by_scalar<uint16_t>(op, x, c, out, rows);
    case 4: return shift_lanes_by_scalar<uint32_t>(op, x, c, out, rows);
    case 8: return shift_lanes_by_scalar<uint64_t>(op, x, c, out, rows);
  }
}

// Each row by its own count, through shift_by_scalar (the portable level's per-row cost is a
// few switches; the vector levels have their own, simd_loops.h).
inline void shift_by_row_count(ShiftOp op, int width, const void* x, const void* count, void* out, const Rows& rows,
                               bool streaming) {
  const Rows one_row{rows.n, 1, 0, 0, 0};
  for_each_row(rows, x, count, out, [&](const char* x_row, const char* count_row, char* out_row) {
    shift_by_scalar(op, width, x_row, load_count(width, count_row), out_row, one_row, streaming);
  });
}

inline void signbit(int width, const void* x, bool* out, const Rows& rows) {
  switch (width) {
    case 1: return signbit_lanes<uint8_t>(x, out, rows);
    case 2: return signbit_lanes<uint16_t>(x, out, rows);
    case 4: return signbit_lanes<uint32_t>(x, out, rows);
    case 8: return signbit_lanes<uint64_t>(x, out, rows);
  }
}

// ---- bitwise_count ----------------------------------------------------------------------

// The magnitude of a signed lane in the unsigned type of its width: (x ^ s) - s, s its sign
// fill (0, or all ones when negative), modulo 2^width; the minimum's, 2^(width-1), is its own
// bit pattern.
template <typename U>
inline U magnitude(U x) {
  const U sign_fill = static_cast<U>(U(0) - static_cast<U>(x >> (kBits<U> - 1)));
  return static_cast<U>(static_cast<U>(x ^ sign_fill) - sign_fill);
}

// The number of 1 bits of x, without a popcount instruction (x86-64's baseline has none):
// the counts of bit pairs, then of nibbles, then of bytes, side by side in x (SWAR), and the
// bytes' counts summed by shifts and adds, which SSE2 vectorizes (it has no 64-bit multiply).
// Every step is brought back to U, so that the compiler computes narrow lanes in narrow
// vector lanes (computed as ints, bytes took four times the vectors).
template <typename U>
inline uint8_t count_ones(U x) {
  constexpr U kOnes = static_cast<U>(~U(0));
  constexpr U kPairs = kOnes / 3, kNibbles = kOnes / 5, kBytes = kOnes / 17;  // 0x55.., 0x33.., 0x0f..
  U v = x;
  v = static_cast<U>(v - ((v >> 1) & kPairs));
  v = static_cast<U>((v & kNibbles) + ((v >> 2) & kNibbles));
  v = static_cast<U>((v + (v >> 4)) & kBytes);
  if constexpr (sizeof(U) >= 2) v = static_cast<U>(v + (v >> 8));
  if constexpr (sizeof(U) >= 4) v = static_cast<U>(v + (v >> 16));
  if constexpr (sizeof(U) >= 8) v = static_cast<U>(v + (v >> 32));
  return static_cast<uint8_t>(v);  // the low byte: the sum of all bytes' counts
}

#if defined(__aarch64__)
// NEON (the includer includes <arm_neon.h>), where GCC (12) vectorizes popcount with `cnt` only
// for bytes: cnt counts each byte's bits, and addp (the sums of adjacent bytes of two
// vectors, in order) sums a wider lane's byte counts while it narrows them.
//
// Byte j of the result: the number of 1 bits of bytes [j * Group, (j + 1) * Group) of the
// 16 * Group bytes at p, lanes of type U taken by magnitude when Signed.
template <typename U, bool Signed, int Group>
inline uint8x16_t group_counts(const uint8_t* p) {
  if constexpr (Group == 1) {
    uint8x16_t v = vld1q_u8(p);
    if constexpr (Signed && sizeof(U) == 1) v = vreinterpretq_u8_s8(vabsq_s8(vreinterpretq_s8_u8(v)));
    if constexpr (Signed && sizeof(U) == 2) v = vreinterpretq_u8_s16(vabsq_s16(vreinterpretq_s16_u8(v)));
    if constexpr (Signed && sizeof(U) == 4) v = vreinterpretq_u8_s32(vabsq_s32(vreinterpretq_s32_u8(v)));
    if constexpr (Signed && sizeof(U) == 8) v = vreinterpretq_u8_s64(vabsq_s64(vreinterpretq_s64_u8(v)));
    return vcntq_u8(v);
  } else {
    return vpaddq_u8(group_counts<U, Signed, Group / 2>(p), group_counts<U, Signed, Group / 2>(p + 8 * Group));
  }
}
#endif

template <typename U, bool Signed>
void count_lanes(const void* x, uint8_t* out, const Rows& rows) {
  const auto count = [](U a) { return count_ones(Signed ? magnitude(a) : a); };
#if defined(__aarch64__)
  const int64_t n = rows.n;
  for_each_row(rows, x, nullptr, out, [n, count](const char* x_row, const char*, char* out_row) {
    const uint8_t* a = reinterpret_cast<const uint8_t*>(x_row);
    uint8_t* o = reinterpret_cast<uint8_t*>(out_row);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) vst1q_u8(o + i, group_counts<U, Signed, sizeof(U)>(a + i * sizeof(U)));
    for (; i < n; ++i) {
      U lane;
      std::memcpy(&lane, a + i * sizeof(U), sizeof(U));
      o[i] = count(lane);
    }
  });
#else
  map_lanes<U, uint8_t>(rows, x, out, count);
#endif
}

// f(width, is_signed), both as compile-time constants (std::integral_constant), for a lane
// width in bytes and whether the lanes are signed.
template <typename F>
inline void with_width_and_sign(int width, bool is_signed, const F& f) {
  const auto with_sign = [&](auto w) {
    if (is_signed) return f(w, std::true_type{});
    return f(w, std::false_type{});
  };
  switch (width) {
    case 1: return with_sign(std::integral_constant<int, 1>{});
    case 2: return with_sign(std::integral_constant<int, 2>{});
    case 4: return with_sign(std::integral_constant<int, 4>{});
    case 8: return with_sign(std::integral_constant<int, 8>{});
  }
}

inline void bitwise_count(int width, bool is_signed, const void* x, uint8_t* out, const Rows& rows) {
  with_width_and_sign(width, is_signed, [&](auto w, auto s) {
    count_lanes<Lane<decltype(w)::value>, decltype(s)::value>(x, out, rows);
  });
}

// The portable `shift` reads strided operands in place on x86-64, where it is a scalar loop
// (SSE2 has no shift by a count per lane) and contiguous copies would cost more than they
// save. On aarch64 the compiler vectorizes it with NEON, and the copies pay, as at the x86
// vector levels (kernels.h).
inline bool strided_shift_in_place(int /*width*/, int64_t /*step*/) {
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

// ---- Packing (kernels.h's PackFormat) ----

// The shift of field k of a byte of `Bits`-bit fields.
template <int Bits, bool Little>
constexpr int field_shift(int k) {
  return Little ? k * Bits : (8 / Bits - 1 - k) * Bits;
}

// The field of the `Width`-byte element at p: 1 for a nonzero one (packbits), else its low
// `Bits` bits.
template <int Width, int Bits, bool Nonzero>
inline unsigned field_of(const char* p) {
  Lane<Width> e;
  std::memcpy(&e, p, Width);
  if constexpr (Nonzero) return e != 0;
  return static_cast<unsigned>(e & Lane<Width>((1u << Bits) - 1));
}

// The byte of the first `fields` elements `step` bytes apart from x (the rest are 0 fields).
template <int Width, int Bits, bool Little, bool Nonzero>
inline uint8_t pack_byte(const char* x, int fields, int64_t step) {
  unsigned byte = 0;
  for (int k = 0; k < fields; ++k) byte |= field_of<Width, Bits, Nonzero>(x + k * step) << field_shift<Bits, Little>(k);
  return static_cast<uint8_t>(byte);
}

// Eight bytes' nonzero bits as one byte, element j in bit j (Little) or 7 - j: the top bit
// of each byte is set where it is nonzero, then one multiply gathers the eight top bits into
// the top byte (each product bit lands alone: no carries).
template <bool Little>
inline uint8_t nonzero_byte_of_8(const char* x) {
  uint64_t v;
  std::memcpy(&v, x, 8);
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  const uint64_t top = (((v & kLow7) + kLow7) | v) & ~kLow7;  // 0x80 in each nonzero byte
  const uint64_t ones = top >> 7;
  return static_cast<uint8_t>((ones * (Little ? 0x0102040810204080ULL : 0x8040201008040201ULL)) >> 56);
}

template <int Width, int Bits, bool Little, bool Nonzero>
void pack_rows(const void* x, uint8_t* out, const PackRows& rows) {
  constexpr int kPerByte = 8 / Bits;
  const int64_t bytes = rows.bytes;
  const int64_t n = rows.n;
  for (int64_t r = 0; r < rows.rows; ++r) {
    const char* a = static_cast<const char*>(x) + r * rows.x_stride;
    uint8_t* o = out + r * rows.out_stride;
    const int64_t full = n / kPerByte;
    if constexpr (Width == 1 && Bits == 1 && Nonzero) {
      for (int64_t b = 0; b < full; ++b) o[b] = nonzero_byte_of_8<Little>(a + b * 8);
    } else {
      for (int64_t b = 0; b < full; ++b) o[b] = pack_byte<Width, Bits, Little, Nonzero>(a + b * kPerByte * Width, kPerByte, Width);
    }
    for (int64_t b = full; b < bytes; ++b) {
      const int64_t fields = std::min<int64_t>(kPerByte, std::max<int64_t>(n - b * kPerByte, 0));
      o[b] = pack_byte<Width, Bits, Little, Nonzero>(a + b * kPerByte * Width, static_cast<int>(fields), Width);
    }
  }
}

template <int Width, int Bits, bool Little, bool Nonzero>
void pack_column_bytes(const void* x, uint8_t* out, int64_t n, int64_t field_stride, int fields) {
  const char* a = static_cast<const char*>(x);
  for (int64_t t = 0; t < n; ++t) out[t] = pack_byte<Width, Bits, Little, Nonzero>(a + t * Width, fields, field_stride * Width);
}

// f(width, bits, little, nonzero) as compile-time constants, for a run-time format (nonzero
// only with 1-bit fields, the only ones packbits makes).
template <typename F>
inline void with_pack_format(const PackFormat& format, const F& f) {
  const auto with_nonzero = [&](auto w, auto b, auto l) {
    if constexpr (decltype(b)::value == 1) {
      if (format.nonzero) return f(w, b, l, std::true_type{});
    }
    return f(w, b, l, std::false_type{});
  };
  const auto with_little = [&](auto w, auto b) {
    if (format.little) return with_nonzero(w, b, std::true_type{});
    return with_nonzero(w, b, std::false_type{});
  };
  const auto with_bits = [&](auto w) {
    switch (format.bits) {
      case 1: return with_little(w, std::integral_constant<int, 1>{});
      case 2: return with_little(w, std::integral_constant<int, 2>{});
      case 4: return with_little(w, std::integral_constant<int, 4>{});
    }
  };
  switch (format.width) {
    case 1: return with_bits(std::integral_constant<int, 1>{});
    case 2: return with_bits(std::integral_constant<int, 2>{});
    case 4: return with_bits(std::integral_constant<int, 4>{});
    case 8: return with_bits(std::integral_constant<int, 8>{});
  }
}

inline void pack(const PackFormat& format, const void* x, uint8_t* out, const PackRows& rows) {
  with_pack_format(format, [&](auto w, auto b, auto l, auto nz) {
    pack_rows<decltype(w)::value, decltype(b)::value, decltype(l)::value, decltype(nz)::value>(x, out, rows);
  });
}

inline void pack_columns(const PackFormat& format, const void* x, uint8_t* out, int64_t n, int64_t field_stride,
                         int fields) {
  with_pack_format(format, [&](auto w, auto b, auto l, auto nz) {
    pack_column_bytes<decltype(w)::value, decltype(b)::value, decltype(l)::value, decltype(nz)::value>(
        x, out, n, field_stride, fields);
  });
}

// Field `k` of `byte`, sign-extended from `Bits` bits when Signed (as a byte's bits).
template <int Bits, bool Little, bool Signed>
inline uint8_t field_in(unsigned byte, int k) {
  constexpr unsigned kMask = (1u << Bits) - 1;
  constexpr unsigned kHalf = 1u << (Bits - 1);
  const unsigned field = (byte >> field_shift<Bits, Little>(k)) & kMask;
  return static_cast<uint8_t>(Signed ? (field ^ kHalf) - kHalf : field);
}

template <int Bits, bool Little, bool Signed>
void unpack_rows(const uint8_t* x, uint8_t* out, const UnpackRows& rows) {
  constexpr int kPerByte = 8 / Bits;
  const int64_t fields = rows.fields;
  const int skip = rows.skip;
  for (int64_t r = 0; r < rows.rows; ++r) {
    const uint8_t* a = x + r * rows.x_stride;
    uint8_t* o = out + r * rows.out_stride;
    int64_t f = 0;
    // The rest of a first byte entered at field `skip`, then whole bytes, then a last part.
    if (skip != 0) {
      for (int k = skip; k < kPerByte && f < fields; ++k) o[f++] = field_in<Bits, Little, Signed>(a[0], k);
      ++a;
    }
    const int64_t whole = (fields - f) / kPerByte;
    for (int64_t b = 0; b < whole; ++b) {
      for (int k = 0; k < kPerByte; ++k) o[f + b * kPerByte + k] = field_in<Bits, Little, Signed>(a[b], k);
    }
    f += whole * kPerByte;
    for (int k = 0; f < fields; ++k) o[f++] = field_in<Bits, Little, Signed>(a[whole], k);
  }
}

template <int Bits, bool Little, bool Signed>
void unpack_column_fields(const uint8_t* x, uint8_t* out, int64_t n, int field) {
  for (int64_t t = 0; t < n; ++t) out[t] = field_in<Bits, Little, Signed>(x[t], field);
}

// f(bits, little, is_signed) as compile-time constants.
template <typename F>
inline void with_unpack_format(const PackFormat& format, const F& f) {
  const auto with_signed = [&](auto b, auto l) {
    if (format.is_signed) return f(b, l, std::true_type{});
    return f(b, l, std::false_type{});
  };
  const auto with_little = [&](auto b) {
    if (format.little) return with_signed(b, std::true_type{});
    return with_signed(b, std::false_type{});
  };
  switch (format.bits) {
    case 1: return with_little(std::integral_constant<int, 1>{});
    case 2: return with_little(std::integral_constant<int, 2>{});
    case 4: return with_little(std::integral_constant<int, 4>{});
  }
}

inline void unpack(const PackFormat& format, const uint8_t* x, uint8_t* out, const UnpackRows& rows) {
  with_unpack_format(format, [&](auto b, auto l, auto s) {
    unpack_rows<decltype(b)::value, decltype(l)::value, decltype(s)::value>(x, out, rows);
  });
}

inline void unpack_columns(const PackFormat& format, const uint8_t* x, uint8_t* out, int64_t n, int field) {
  with_unpack_format(format, [&](auto b, auto l, auto s) {
    unpack_column_fields<decltype(b)::value, decltype(l)::value, decltype(s)::value>(x, out, n, field);
  });
}

// The table of the bodies above, compiled for the including level. A level's table starts
// from it and replaces the slots the level has loops of its own for (kernels_avx2.cpp), so
// a slot no level vectorizes is its body here and its place in this list. A Slot has no
// default constructor: this list cannot leave one out (kernels.h).
// ---- Hamming distances: the compiler's popcount of 8-byte words -------------------------
// A block of kCodeQueries codes of `a` goes against each code of `b`, so that b's words are
// read once per block (from cache) and each loaded word serves kCodeQueries counts. Words are
// read with memcpy (codes need not be 8-byte aligned); a code's last bytes one at a time.
constexpr int64_t kCodeQueries = 4;

inline uint64_t code_word(const uint8_t* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

template <int Queries>
inline void hamming_rows(const CodeBlock& block, int64_t i) {
  const uint8_t* a[Queries];
  for (int q = 0; q < Queries; ++q) a[q] = block.a + (i + q) * block.a_stride;
  const int64_t words = block.bytes / 8;
  for (int64_t j = 0; j < block.n; ++j) {
    const uint8_t* b = block.b + j * block.b_stride;
    int64_t count[Queries] = {};
    for (int64_t w = 0; w < words; ++w) {
      const uint64_t word = code_word(b + 8 * w);
      for (int q = 0; q < Queries; ++q) count[q] += __builtin_popcountll(word ^ code_word(a[q] + 8 * w));
    }
    for (int64_t t = 8 * words; t < block.bytes; ++t) {
      for (int q = 0; q < Queries; ++q) count[q] += __builtin_popcount(static_cast<unsigned>(b[t] ^ a[q][t]));
    }
    for (int q = 0; q < Queries; ++q) block.out[(i + q) * block.out_stride + j] = static_cast<int32_t>(count[q]);
  }
}

// Runs `rows4(i)` on blocks of kCodeQueries of a's codes, then `rows1(i)` on the rest one by one.
template <typename Rows4, typename Rows1>
inline void for_each_query_block(const CodeBlock& block, const Rows4& rows4, const Rows1& rows1) {
  int64_t i = 0;
  for (; i + kCodeQueries <= block.m; i += kCodeQueries) rows4(i);
  for (; i < block.m; ++i) rows1(i);
}

inline void hamming(const CodeBlock& block) {
  for_each_query_block(block, [&](int64_t i) { hamming_rows<kCodeQueries>(block, i); },
                       [&](int64_t i) { hamming_rows<1>(block, i); });
}

constexpr KernelTable portable_table() {
  return {&shift,         &shift_by_scalar,        &shift_by_row_count, &signbit, &shift_strided,
          &strided_shift_in_place, &bitwise_count, &pack, &pack_columns, &unpack, &unpack_columns, &hamming};
}
