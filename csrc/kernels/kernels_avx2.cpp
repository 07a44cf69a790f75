// The AVX2 level (AVX2 + FMA, 256-bit vectors). Everything below the pragma is compiled
// for AVX2 and lives in namespace avx2; the dispatcher only picks this table on a CPU
// (and OS) that runs it. The rules: kernels.h and docs/semantics.md.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace torchops {
namespace avx2 {

#include "kernels/kernels_impl.h"

using Vec = __m256i;
constexpr int64_t kVecBytes = 32;

inline Vec load(const char* p) { return _mm256_loadu_si256(reinterpret_cast<const Vec*>(p)); }
inline void store(char* p, Vec v) { _mm256_storeu_si256(reinterpret_cast<Vec*>(p), v); }
inline void stream(char* p, Vec v) { _mm256_stream_si256(reinterpret_cast<Vec*>(p), v); }
inline void fence_streaming_stores() { _mm_sfence(); }
// The shifts by one count (vpsllw/d/q and kin) read it from the low 64 bits of an XMM register.
using Count = __m128i;
inline Count count_of(unsigned c) { return _mm_cvtsi32_si128(static_cast<int>(c)); }
inline Vec bytes_of(uint8_t b) { return _mm256_set1_epi8(static_cast<char>(b)); }

// ---- Shifts by a count per lane -------------------------------------------------------
// vpsllvd/q and vpsrlvd/q read the count as unsigned and give 0 from the width up, and
// vpsravd sign-fills from 32 up: exactly the contract, negative counts included (they read
// as huge). 64-bit arithmetic and the 8- and 16-bit lanes, which AVX2 cannot shift by a
// per-lane count, are emulated below; tests compare every level with the portable one.

// Arithmetic right shift from a logical one: flipping a negative value (xor with its sign
// fill, all ones or zero) makes it non-negative, a logical shift of that fills with zeros,
// and flipping back turns them into ones.
template <typename LogicalRight>
inline Vec arithmetic_from_logical(Vec x, Vec fill, const LogicalRight& logical_right) {
  return _mm256_xor_si256(logical_right(_mm256_xor_si256(x, fill)), fill);
}

// 16-bit lanes through the 32-bit shifts: the low half of each dword is shifted alone
// (count & 0xffff), the high half in place (count >> 16), and a blend keeps the half that
// belongs to each. A count >= 16 moves every bit out of its half, so the kept half is 0.
inline Vec shift_left_16(Vec x, Vec c) {
  const Vec low = _mm256_set1_epi32(0xffff);
  const Vec lo = _mm256_sllv_epi32(_mm256_and_si256(x, low), _mm256_and_si256(c, low));
  const Vec hi = _mm256_sllv_epi32(_mm256_andnot_si256(low, x), _mm256_srli_epi32(c, 16));
  return _mm256_blend_epi16(hi, lo, 0x55);
}
inline Vec shift_right_logical_16(Vec x, Vec c) {
  const Vec low = _mm256_set1_epi32(0xffff);
  const Vec lo = _mm256_srlv_epi32(_mm256_and_si256(x, low), _mm256_and_si256(c, low));
  const Vec hi = _mm256_srlv_epi32(_mm256_andnot_si256(low, x), _mm256_srli_epi32(c, 16));
  return _mm256_blend_epi16(hi, lo, 0x55);
}
// The arithmetic one the same way, on the top half of each dword, where vpsravd's sign fill
// is the 16-bit lane's: the high half shifted in place, the low half moved up first and
// back down after. A count >= 16 leaves only the sign fill in the kept half.
inline Vec shift_right_arithmetic_16(Vec x, Vec c) {
  const Vec low = _mm256_set1_epi32(0xffff);
  const Vec lo = _mm256_srli_epi32(_mm256_srav_epi32(_mm256_slli_epi32(x, 16), _mm256_and_si256(c, low)), 16);
  const Vec hi = _mm256_srav_epi32(x, _mm256_srli_epi32(c, 16));
  return _mm256_blend_epi16(hi, lo, 0x55);
}

// 8-bit lanes, one bit of the count at a time: bits 2, 1, 0 of the count select a shift by
// 4, 2, 1 (16-bit shifts, masked to stay inside each byte); vpblendvb reads the selecting
// bit from the top of each byte. A count >= 8 (any of bits 3..7 set) gives 0.
template <bool Left>
inline Vec shift_8(Vec x, Vec c) {
  Vec select = _mm256_slli_epi16(c, 5);  // count bit 2 -> bit 7 of its byte
  const Vec by4 = Left ? _mm256_and_si256(_mm256_slli_epi16(x, 4), bytes_of(0xf0))
                       : _mm256_and_si256(_mm256_srli_epi16(x, 4), bytes_of(0x0f));
  x = _mm256_blendv_epi8(x, by4, select);
  select = _mm256_add_epi8(select, select);  // bit 1 -> bit 7
  const Vec by2 = Left ? _mm256_and_si256(_mm256_slli_epi16(x, 2), bytes_of(0xfc))
                       : _mm256_and_si256(_mm256_srli_epi16(x, 2), bytes_of(0x3f));
  x = _mm256_blendv_epi8(x, by2, select);
  select = _mm256_add_epi8(select, select);  // bit 0 -> bit 7
  const Vec by1 = Left ? _mm256_add_epi8(x, x) : _mm256_and_si256(_mm256_srli_epi16(x, 1), bytes_of(0x7f));
  x = _mm256_blendv_epi8(x, by1, select);
  const Vec in_range = _mm256_cmpeq_epi8(_mm256_and_si256(c, bytes_of(0xf8)), _mm256_setzero_si256());
  return _mm256_and_si256(x, in_range);
}

template <int Width, ShiftOp Op>
inline Vec shift_vec(Vec x, Vec c) {
  const auto logical = [&](Vec v) {
    if constexpr (Width == 1) return shift_8<false>(v, c);
    if constexpr (Width == 2) return shift_right_logical_16(v, c);
    if constexpr (Width == 4) return _mm256_srlv_epi32(v, c);
    if constexpr (Width == 8) return _mm256_srlv_epi64(v, c);
  };
  if constexpr (Op == ShiftOp::Left) {
    if constexpr (Width == 1) return shift_8<true>(x, c);
    if constexpr (Width == 2) return shift_left_16(x, c);
    if constexpr (Width == 4) return _mm256_sllv_epi32(x, c);
    if constexpr (Width == 8) return _mm256_sllv_epi64(x, c);
  } else if constexpr (Op == ShiftOp::RightLogical) {
    return logical(x);
  } else {
    if constexpr (Width == 2) return shift_right_arithmetic_16(x, c);
    if constexpr (Width == 4) return _mm256_srav_epi32(x, c);
    const Vec zero = _mm256_setzero_si256();
    Vec fill;
    if constexpr (Width == 1) fill = _mm256_cmpgt_epi8(zero, x);
    if constexpr (Width == 8) fill = _mm256_cmpgt_epi64(zero, x);
    return arithmetic_from_logical(x, fill, logical);
  }
}

// ---- Shifts by one count for every lane (in range: settled by the caller) --------------
template <int Width, ShiftOp Op>
inline Vec shift_vec_by_scalar(Vec x, Count count, Vec byte_mask) {
  const auto logical = [&](Vec v) {
    if constexpr (Width == 1) return _mm256_and_si256(_mm256_srl_epi16(v, count), byte_mask);
    if constexpr (Width == 2) return _mm256_srl_epi16(v, count);
    if constexpr (Width == 4) return _mm256_srl_epi32(v, count);
    if constexpr (Width == 8) return _mm256_srl_epi64(v, count);
  };
  if constexpr (Op == ShiftOp::Left) {
    if constexpr (Width == 1) return _mm256_and_si256(_mm256_sll_epi16(x, count), byte_mask);
    if constexpr (Width == 2) return _mm256_sll_epi16(x, count);
    if constexpr (Width == 4) return _mm256_sll_epi32(x, count);
    if constexpr (Width == 8) return _mm256_sll_epi64(x, count);
  } else if constexpr (Op == ShiftOp::RightLogical) {
    return logical(x);
  } else {
    if constexpr (Width == 2) return _mm256_sra_epi16(x, count);
    if constexpr (Width == 4) return _mm256_sra_epi32(x, count);
    const Vec zero = _mm256_setzero_si256();
    Vec fill;
    if constexpr (Width == 1) fill = _mm256_cmpgt_epi8(zero, x);
    if constexpr (Width == 8) fill = _mm256_cmpgt_epi64(zero, x);
    return arithmetic_from_logical(x, fill, logical);
  }
}

#include "kernels/simd_loops.h"

// ---- signbit: sign masks (0 / -1) narrowed to bytes, then & 1 --------------------------
// vpacks* narrow within each 128-bit half; the permutes put the halves back in order.
inline __m128i narrow_16_to_8(Vec v) {  // 16 words (0 / -1), in order -> 16 bytes
  return _mm_packs_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

// The sign of a qword is the sign of its high dword: the high dwords of p and q, in the
// order [p0 p1 q0 q1 | p2 p3 q2 q3] (qword indices).
inline Vec high_dwords(Vec p, Vec q) {
  return _mm256_castps_si256(
      _mm256_shuffle_ps(_mm256_castsi256_ps(p), _mm256_castsi256_ps(q), _MM_SHUFFLE(3, 1, 3, 1)));
}

void signbit_avx2(int width, const void* x, bool* out, const Rows& rows) {
  const Vec one = bytes_of(1);
  const Vec zero = _mm256_setzero_si256();
  // The steps take the constants by value (not [&]): a store through char* could alias a
  // reference's target, and the compiler would reload them for every step.
  switch (width) {
    case 1:
      return run_steps([one, zero](const char* a, const char*, char* o) {
        store(o, _mm256_and_si256(_mm256_cmpgt_epi8(zero, load(a)), one));
      }, 32, 1, 1, x, nullptr, out, rows);
    case 2:
      return run_steps([one](const char* a, const char*, char* o) {
        const Vec words = _mm256_packs_epi16(_mm256_srai_epi16(load(a), 15), _mm256_srai_epi16(load(a + 32), 15));
        store(o, _mm256_and_si256(_mm256_permute4x64_epi64(words, 0xd8), one));
      }, 32, 2, 1, x, nullptr, out, rows);
    case 4:
      return run_steps([one](const char* a, const char*, char* o) {
        const Vec ab = _mm256_packs_epi32(_mm256_srai_epi32(load(a), 31), _mm256_srai_epi32(load(a + 32), 31));
        const Vec cd = _mm256_packs_epi32(_mm256_srai_epi32(load(a + 64), 31), _mm256_srai_epi32(load(a + 96), 31));
        const Vec bytes = _mm256_packs_epi16(ab, cd);
        const Vec order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        store(o, _mm256_and_si256(_mm256_permutevar8x32_epi32(bytes, order), one));
      }, 32, 4, 1, x, nullptr, out, rows);
    case 8:
      return run_steps([](const char* a, const char*, char* o) {
        const Vec ab = _mm256_srai_epi32(high_dwords(load(a), load(a + 32)), 31);
        const Vec cd = _mm256_srai_epi32(high_dwords(load(a + 64), load(a + 96)), 31);
        const Vec order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        const Vec words = _mm256_permutevar8x32_epi32(_mm256_packs_epi32(ab, cd), order);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_and_si128(narrow_16_to_8(words), _mm_set1_epi8(1)));
      }, 16, 8, 1, x, nullptr, out, rows);
  }
}

// ---- bitwise_count: Mula's nibble lookup -----------------------------------------------
// vpshufb looks each nibble's number of 1 bits up in a 16-entry table (one per 128-bit half),
// and a byte's count is its two nibbles'. A wider lane is taken by its magnitude first
// (vpabsb/w/d; for 64 bits, which have no vpabsq before AVX-512, the xor and subtraction of
// its sign fill), its bytes' counts are summed (vpmaddubsw adds pairs of bytes into words,
// vpsadbw the eight bytes of each qword), and the sums narrowed to one byte per lane, in order.
// A step reads four vectors.
inline Vec byte_counts(Vec v) {
  const Vec table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                     0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const Vec nibble = bytes_of(0x0f);
  const Vec low = _mm256_and_si256(v, nibble);
  const Vec high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
  return _mm256_add_epi8(_mm256_shuffle_epi8(table, low), _mm256_shuffle_epi8(table, high));
}

// The counts of the bytes of the vector at p, its `Width`-byte lanes taken by magnitude when Signed.
template <int Width, bool Signed>
inline Vec load_byte_counts(const char* p) {
  Vec v = load(p);
  if constexpr (Signed && Width == 1) v = _mm256_abs_epi8(v);
  if constexpr (Signed && Width == 2) v = _mm256_abs_epi16(v);
  if constexpr (Signed && Width == 4) v = _mm256_abs_epi32(v);
  if constexpr (Signed && Width == 8) {
    const Vec sign_fill = _mm256_cmpgt_epi64(_mm256_setzero_si256(), v);
    v = _mm256_sub_epi64(_mm256_xor_si256(v, sign_fill), sign_fill);
  }
  return byte_counts(v);
}

// The counts of the lanes of the four vectors at a, as bytes at o.
template <int Width, bool Signed>
inline void bitwise_count_step(const char* a, char* o) {
  const Vec ones = bytes_of(1);
  const auto counts = [a](int v) { return load_byte_counts<Width, Signed>(a + v * kVecBytes); };
  if constexpr (Width == 1) {
    for (int v = 0; v < 4; ++v) store(o + v * kVecBytes, counts(v));
  } else if constexpr (Width == 2) {
    // Words, narrowed by vpackuswb within each half, then the halves' qwords put in order.
    for (int v = 0; v < 4; v += 2) {
      const Vec words = _mm256_packus_epi16(_mm256_maddubs_epi16(counts(v), ones),
                                            _mm256_maddubs_epi16(counts(v + 1), ones));
      store(o + v / 2 * kVecBytes, _mm256_permute4x64_epi64(words, 0xd8));
    }
  } else if constexpr (Width == 4) {
    // The words of two vectors packed into bytes, whose pairs are the dwords' counts: per half,
    // vector p's four lanes then q's; packed again with r's and s's, and the dwords put in order.
    const auto pairs = [&](int v) {
      return _mm256_maddubs_epi16(_mm256_packus_epi16(_mm256_maddubs_epi16(counts(v), ones),
                                                      _mm256_maddubs_epi16(counts(v + 1), ones)),
                                  ones);
    };
    const Vec bytes = _mm256_packus_epi16(pairs(0), pairs(2));
    store(o, _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  } else {
    // Each qword's count in its low byte; the four vectors' side by side in each qword (bytes
    // 0..3), then gathered per half so that dword v holds vector v's lanes (0, 1 from the low
    // half, 2, 3 from the high), and the halves merged.
    const Vec zero = _mm256_setzero_si256();
    const auto sums = [&](int v) { return _mm256_sad_epu8(counts(v), zero); };
    const Vec side_by_side = _mm256_or_si256(
        _mm256_or_si256(sums(0), _mm256_slli_epi64(sums(1), 8)),
        _mm256_or_si256(_mm256_slli_epi64(sums(2), 16), _mm256_slli_epi64(sums(3), 24)));
    const Vec gather = _mm256_setr_epi8(0, 8, -1, -1, 1, 9, -1, -1, 2, 10, -1, -1, 3, 11, -1, -1,
                                        -1, -1, 0, 8, -1, -1, 1, 9, -1, -1, 2, 10, -1, -1, 3, 11);
    const Vec gathered = _mm256_shuffle_epi8(side_by_side, gather);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o),
                     _mm_or_si128(_mm256_castsi256_si128(gathered), _mm256_extracti128_si256(gathered, 1)));
  }
}

void bitwise_count_avx2(int width, bool is_signed, const void* x, uint8_t* out, const Rows& rows) {
  with_width_and_sign(width, is_signed, [&](auto w, auto s) {
    constexpr int kWidth = decltype(w)::value;
    run_steps([](const char* a, const char*, char* o) { bitwise_count_step<kWidth, decltype(s)::value>(a, o); },
              4 * kVecBytes / kWidth, kWidth, 1, x, nullptr, out, rows);
  });
}

// ---- Packing: 1-bit fields of bytes (packbits, pack(x, 1) of 8-bit dtypes, unpackbits) --
// vpmovmskb gathers the top bits of 32 bytes, element i in bit i: the little bit order (the
// big one reverses each group of 8 bytes first). Nonzero elements are found by a compare;
// a low bit is moved to the top of its byte by a 16-bit shift by 7 (the other byte's bits
// move within their own byte or out). Unpacking spreads each byte over 8 lanes and tests one
// bit a lane. The rest of a row, and every other format, is the portable loop's.

// Each group of 8 bytes in reverse order (vpshufb indexes within 128-bit lanes).
inline Vec reverse_each_8(Vec v) {
  const Vec order = _mm256_set_epi64x(0x08090a0b0c0d0e0fLL, 0x0001020304050607LL, 0x08090a0b0c0d0e0fLL,
                                      0x0001020304050607LL);
  return _mm256_shuffle_epi8(v, order);
}

template <bool Little, bool Nonzero>
inline uint32_t field_mask(Vec v) {
  if constexpr (!Little) v = reverse_each_8(v);
  if constexpr (Nonzero) return ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_setzero_si256())));
  return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_slli_epi16(v, 7)));
}

template <bool Little, bool Nonzero>
void pack_bit_rows(const void* x, uint8_t* out, const PackRows& rows) {
  const int64_t n = rows.n, bytes = rows.bytes;
  for (int64_t r = 0; r < rows.rows; ++r) {
    const char* a = static_cast<const char*>(x) + r * rows.x_stride;
    uint8_t* o = out + r * rows.out_stride;
    int64_t i = 0;
    // 128 elements an iteration, their four masks stored as two words: a vector an iteration
    // ran at 55-74 GB/s, in cache as from memory.
    for (; i + 128 <= n; i += 128) {
      const uint64_t low = field_mask<Little, Nonzero>(load(a + i)) |
                           uint64_t{field_mask<Little, Nonzero>(load(a + i + 32))} << 32;
      const uint64_t high = field_mask<Little, Nonzero>(load(a + i + 64)) |
                            uint64_t{field_mask<Little, Nonzero>(load(a + i + 96))} << 32;
      std::memcpy(o + i / 8, &low, 8);
      std::memcpy(o + i / 8 + 8, &high, 8);
    }
    for (; i + 32 <= n; i += 32) {
      const uint32_t m = field_mask<Little, Nonzero>(load(a + i));
      std::memcpy(o + i / 8, &m, 4);
    }
    pack_rows<1, 1, Little, Nonzero>(a + i, o + i / 8, PackRows{bytes - i / 8, n - i, 1, 0, 0});
  }
}

void pack_avx2(const PackFormat& format, const void* x, uint8_t* out, const PackRows& rows) {
  if (format.width != 1 || format.bits != 1) return pack(format, x, out, rows);
  with_pack_format(format, [&](auto, auto, auto little, auto nonzero) {
    pack_bit_rows<decltype(little)::value, decltype(nonzero)::value>(x, out, rows);
  });
}

// The fields of 4 bytes, each spread over 8 lanes: 1 (-1 when Signed) in each lane whose bit
// (its lane of `bit`) is set in its byte, else 0.
template <bool Signed>
inline Vec fields_of(Vec spread_bytes, Vec bit) {
  const Vec set_bits = _mm256_and_si256(spread_bytes, bit);
  if constexpr (Signed) return _mm256_cmpeq_epi8(set_bits, bit);
  return _mm256_min_epu8(set_bits, _mm256_set1_epi8(1));
}

template <bool Little, bool Signed>
void unpack_bit_rows(const uint8_t* x, uint8_t* out, const UnpackRows& rows) {
  // Lane j of each 8 tests bit j (Little) or 7 - j of the byte spread over them. `spread`
  // puts byte k of 4 in lanes 8k to 8k + 7, and adding 4 to it takes the next 4 bytes
  // (vpshufb indexes within each 128-bit lane, and each lane holds the bytes).
  const Vec spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3,
                                      3, 3, 3, 3, 3);
  const Vec four = _mm256_set1_epi8(4);
  const Vec bit = Little ? _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL))
                         : _mm256_set1_epi64x(static_cast<int64_t>(0x0102040810204080ULL));
  const int64_t fields = rows.fields;
  for (int64_t r = 0; r < rows.rows; ++r) {
    const uint8_t* a = x + r * rows.x_stride;
    char* o = reinterpret_cast<char*>(out + r * rows.out_stride);
    int64_t f = 0;
    // 128 fields an iteration from 16 bytes loaded once into both 128-bit lanes (a vector an
    // iteration from a 4-byte word broadcast from a general register ran at 51-77% of the
    // bandwidth reference: a copy of the output's bytes).
    for (; f + 128 <= fields; f += 128) {
      const Vec bytes = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + f / 8)));
      Vec index = spread;
      for (int k = 0; k < 4; ++k, index = _mm256_add_epi8(index, four)) {
        store(o + f + 32 * k, fields_of<Signed>(_mm256_shuffle_epi8(bytes, index), bit));
      }
    }
    for (; f + 32 <= fields; f += 32) {
      uint32_t word;
      std::memcpy(&word, a + f / 8, 4);
      store(o + f, fields_of<Signed>(_mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(word)), spread), bit));
    }
    unpack_rows<1, Little, Signed>(a + f / 8, out + r * rows.out_stride + f, UnpackRows{fields - f, 0, 1, 0, 0});
  }
}

void unpack_avx2(const PackFormat& format, const uint8_t* x, uint8_t* out, const UnpackRows& rows) {
  if (format.bits != 1 || rows.skip != 0) return unpack(format, x, out, rows);
  with_unpack_format(format, [&](auto, auto little, auto is_signed) {
    unpack_bit_rows<decltype(little)::value, decltype(is_signed)::value>(x, out, rows);
  });
}

// ---- Hamming distances: Mula's nibble lookup (byte_counts), summed per 64-bit lane by
// vpsadbw; a code's partial last vector is copied into a zeroed one (AVX2 has no byte mask).
using CodeVec = Vec;
constexpr int64_t kCodeVecBytes = kVecBytes;
inline CodeVec code_zero() { return _mm256_setzero_si256(); }
inline CodeVec code_load(const uint8_t* p) { return load(reinterpret_cast<const char*>(p)); }
inline CodeVec code_load_tail(const uint8_t* p, int64_t n) {
  alignas(32) char padded[kVecBytes] = {};
  std::memcpy(padded, p, static_cast<size_t>(n));
  return load(padded);
}
inline CodeVec code_counts(CodeVec a, CodeVec b) {
  return _mm256_sad_epu8(byte_counts(_mm256_xor_si256(a, b)), _mm256_setzero_si256());
}
inline CodeVec code_add(CodeVec a, CodeVec b) { return _mm256_add_epi64(a, b); }
constexpr int kCodeSums = 4;
// The four vectors' lane sums by a transposing tree: adjacent lanes of pairs of vectors, then
// the two 128-bit halves; the four 64-bit sums (at most 8 x 32 x vectors) as int32.
inline void code_store_sums(const CodeVec* v, int32_t* out, int n) {
  const Vec low = _mm256_add_epi64(_mm256_unpacklo_epi64(v[0], v[1]), _mm256_unpackhi_epi64(v[0], v[1]));
  const Vec high = _mm256_add_epi64(_mm256_unpacklo_epi64(v[2], v[3]), _mm256_unpackhi_epi64(v[2], v[3]));
  const Vec sums = _mm256_add_epi64(_mm256_permute2x128_si256(low, high, 0x20), _mm256_permute2x128_si256(low, high, 0x31));
  const __m128i narrow = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(sums, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
  if (n == kCodeSums) return _mm_storeu_si128(reinterpret_cast<__m128i*>(out), narrow);
  alignas(16) int32_t lanes[kCodeSums];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), narrow);
  for (int s = 0; s < n; ++s) out[s] = lanes[s];
}

#include "kernels/hamming_loops.h"

constinit const KernelTable kernel_table = [] {
  KernelTable table = simd_table();
  table.hamming = &hamming_vectors;
  table.signbit = &signbit_avx2;
  table.bitwise_count = &bitwise_count_avx2;
  table.pack = &pack_avx2;
  table.unpack = &unpack_avx2;
  return table;
}();

}  // namespace avx2
}  // namespace torchops

#pragma GCC pop_options
#endif  // defined(__x86_64__)
