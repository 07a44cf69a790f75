// The AVX-512 level (F + BW + VL + DQ, 512-bit vectors). Everything below the pragma is
// compiled for AVX-512 and lives in namespace avx512; the dispatcher only picks this table
// on a CPU (and OS) that runs it. The rules: kernels.h and docs/semantics.md.
// At the end, the avx512_bitalg level: this level but for bitwise_count, compiled for AVX-512
// BITALG and VPOPCNTDQ too, in namespace avx512_bitalg.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")
// GCC 12's AVX-512 headers seed results with a self-initialized "undefined" vector, which
// -Wmaybe-uninitialized (and, once the loops are inlined, -Wuninitialized) reports at every
// use; the value is never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace torchops {
namespace avx512 {

#include "kernels/kernels_impl.h"

using Vec = __m512i;
constexpr int64_t kVecBytes = 64;

inline Vec load(const char* p) { return _mm512_loadu_si512(p); }
inline void store(char* p, Vec v) { _mm512_storeu_si512(p, v); }
inline void stream(char* p, Vec v) { _mm512_stream_si512(reinterpret_cast<Vec*>(p), v); }
inline void fence_streaming_stores() { _mm_sfence(); }
// The shifts by one count (vpsllw/d/q and kin) read it from the low 64 bits of an XMM register.
using Count = __m128i;
inline Count count_of(unsigned c) { return _mm_cvtsi32_si128(static_cast<int>(c)); }
inline Vec bytes_of(uint8_t b) { return _mm512_set1_epi8(static_cast<char>(b)); }

// ---- Shifts by a count per lane -------------------------------------------------------
// vpsllv/vpsrlv (w, d, q) read the count as unsigned and give 0 from the width up, and
// vpsrav sign-fills from the width up: exactly the contract, negative counts included
// (they read as huge). Only 8-bit lanes are emulated; tests compare every level with the
// portable one.

// 8-bit lanes through the 16-bit shifts: the low byte of each word is shifted alone
// (count & 0xff), the high byte in place (count >> 8), and a blend keeps the byte that
// belongs to each. A count >= 8 moves every bit out of its byte, so the kept byte is 0.
template <bool Left>
inline Vec shift_8(Vec x, Vec c) {
  const Vec low = _mm512_set1_epi16(0xff);
  const Vec x_lo = _mm512_and_si512(x, low), c_lo = _mm512_and_si512(c, low);
  const Vec x_hi = _mm512_andnot_si512(low, x), c_hi = _mm512_srli_epi16(c, 8);
  const Vec lo = Left ? _mm512_sllv_epi16(x_lo, c_lo) : _mm512_srlv_epi16(x_lo, c_lo);
  const Vec hi = Left ? _mm512_sllv_epi16(x_hi, c_hi) : _mm512_srlv_epi16(x_hi, c_hi);
  return _mm512_mask_blend_epi8(0x5555555555555555ull, hi, lo);
}

inline Vec sign_fill_8(Vec x) { return _mm512_movm_epi8(_mm512_movepi8_mask(x)); }

template <int Width, ShiftOp Op>
inline Vec shift_vec(Vec x, Vec c) {
  if constexpr (Op == ShiftOp::Left) {
    if constexpr (Width == 1) return shift_8<true>(x, c);
    if constexpr (Width == 2) return _mm512_sllv_epi16(x, c);
    if constexpr (Width == 4) return _mm512_sllv_epi32(x, c);
    if constexpr (Width == 8) return _mm512_sllv_epi64(x, c);
  } else if constexpr (Op == ShiftOp::RightLogical) {
    if constexpr (Width == 1) return shift_8<false>(x, c);
    if constexpr (Width == 2) return _mm512_srlv_epi16(x, c);
    if constexpr (Width == 4) return _mm512_srlv_epi32(x, c);
    if constexpr (Width == 8) return _mm512_srlv_epi64(x, c);
  } else {
    if constexpr (Width == 1) {
      // Flipped by its sign fill, shifted logically, flipped back: the sign fills from the left.
      const Vec fill = sign_fill_8(x);
      return _mm512_xor_si512(shift_8<false>(_mm512_xor_si512(x, fill), c), fill);
    }
    if constexpr (Width == 2) return _mm512_srav_epi16(x, c);
    if constexpr (Width == 4) return _mm512_srav_epi32(x, c);
    if constexpr (Width == 8) return _mm512_srav_epi64(x, c);
  }
}

// ---- Shifts by one count for every lane (in range: settled by the caller) --------------
template <int Width, ShiftOp Op>
inline Vec shift_vec_by_scalar(Vec x, Count count, Vec byte_mask) {
  if constexpr (Op == ShiftOp::Left) {
    // 8-bit lanes shift as 16-bit ones; the mask clears the bits that crossed into a neighbour.
    if constexpr (Width == 1) return _mm512_and_si512(_mm512_sll_epi16(x, count), byte_mask);
    if constexpr (Width == 2) return _mm512_sll_epi16(x, count);
    if constexpr (Width == 4) return _mm512_sll_epi32(x, count);
    if constexpr (Width == 8) return _mm512_sll_epi64(x, count);
  } else if constexpr (Op == ShiftOp::RightLogical) {
    if constexpr (Width == 1) return _mm512_and_si512(_mm512_srl_epi16(x, count), byte_mask);
    if constexpr (Width == 2) return _mm512_srl_epi16(x, count);
    if constexpr (Width == 4) return _mm512_srl_epi32(x, count);
    if constexpr (Width == 8) return _mm512_srl_epi64(x, count);
  } else {
    if constexpr (Width == 1) {
      const Vec fill = sign_fill_8(x);
      const Vec flipped = _mm512_xor_si512(x, fill);
      return _mm512_xor_si512(_mm512_and_si512(_mm512_srl_epi16(flipped, count), byte_mask), fill);
    }
    if constexpr (Width == 2) return _mm512_sra_epi16(x, count);
    if constexpr (Width == 4) return _mm512_sra_epi32(x, count);
    if constexpr (Width == 8) return _mm512_sra_epi64(x, count);
  }
}

#include "kernels/simd_loops.h"

// ---- signbit: vpmov*2m collects the top bit of each lane into a mask register, and a
// masked move turns the mask into bytes of 0 / 1. One step reads 64 bytes of input.
void signbit_avx512(int width, const void* x, bool* out, const Rows& rows) {
  switch (width) {
    case 1:
      return run_steps([](const char* a, const char*, char* o) {
        store(o, _mm512_maskz_mov_epi8(_mm512_movepi8_mask(load(a)), bytes_of(1)));
      }, 64, 1, 1, x, nullptr, out, rows);
    case 2:
      return run_steps([](const char* a, const char*, char* o) {
        const __m256i ones = _mm256_set1_epi8(1);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), _mm256_maskz_mov_epi8(_mm512_movepi16_mask(load(a)), ones));
      }, 32, 2, 1, x, nullptr, out, rows);
    case 4:
      return run_steps([](const char* a, const char*, char* o) {
        const __m128i ones = _mm_set1_epi8(1);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_maskz_mov_epi8(_mm512_movepi32_mask(load(a)), ones));
      }, 16, 4, 1, x, nullptr, out, rows);
    case 8:
      return run_steps([](const char* a, const char*, char* o) {
        const __m128i ones = _mm_set1_epi8(1);
        const __mmask16 signs = static_cast<__mmask16>(_mm512_movepi64_mask(load(a)) |
                                                       (_mm512_movepi64_mask(load(a + 64)) << 8));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_maskz_mov_epi8(signs, ones));
      }, 16, 8, 1, x, nullptr, out, rows);
  }
}

// ---- bitwise_count: Mula's nibble lookup, as at AVX2 -----------------------------------
// vpshufb looks each nibble's number of 1 bits up in a 16-entry table (per 128-bit lane); a
// wider lane is taken by its magnitude first (vpabsb/w/d/q), its bytes' counts are summed
// (vpmaddubsw into words, then vpmaddwd into dwords; vpsadbw per qword) and narrowed to one
// byte per lane by vpmovwb/db/qb, which keep lanes in order. A step reads four vectors.
// CPUs with AVX-512 VPOPCNTDQ and BITALG take the avx512_bitalg level below instead.
inline Vec byte_counts(Vec v) {
  const Vec table = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4));
  const Vec nibble = bytes_of(0x0f);
  const Vec low = _mm512_and_si512(v, nibble);
  const Vec high = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
  return _mm512_add_epi8(_mm512_shuffle_epi8(table, low), _mm512_shuffle_epi8(table, high));
}

template <int Width, bool Signed>
inline Vec lane_magnitudes(Vec v) {
  if constexpr (!Signed) return v;
  if constexpr (Width == 1) return _mm512_abs_epi8(v);
  if constexpr (Width == 2) return _mm512_abs_epi16(v);
  if constexpr (Width == 4) return _mm512_abs_epi32(v);
  if constexpr (Width == 8) return _mm512_abs_epi64(v);
}

template <int Width, bool Signed>
inline void bitwise_count_step(const char* a, char* o) {
  const Vec ones = bytes_of(1);
  for (int v = 0; v < 4; ++v) {
    const Vec counts = byte_counts(lane_magnitudes<Width, Signed>(load(a + v * kVecBytes)));
    if constexpr (Width == 1) {
      store(o + v * 64, counts);
    } else if constexpr (Width == 2) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + v * 32),
                          _mm512_cvtepi16_epi8(_mm512_maddubs_epi16(counts, ones)));
    } else if constexpr (Width == 4) {
      const Vec dwords = _mm512_madd_epi16(_mm512_maddubs_epi16(counts, ones), _mm512_set1_epi16(1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + v * 16), _mm512_cvtepi32_epi8(dwords));
    } else {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(o + v * 8),
                       _mm512_cvtepi64_epi8(_mm512_sad_epu8(counts, _mm512_setzero_si512())));
    }
  }
}

void bitwise_count_avx512(int width, bool is_signed, const void* x, uint8_t* out, const Rows& rows) {
  with_width_and_sign(width, is_signed, [&](auto w, auto s) {
    constexpr int kWidth = decltype(w)::value;
    run_steps([](const char* a, const char*, char* o) { bitwise_count_step<kWidth, decltype(s)::value>(a, o); },
              4 * kVecBytes / kWidth, kWidth, 1, x, nullptr, out, rows);
  });
}

// ---- Packing: 1-bit fields of bytes (packbits, pack(x, 1) of 8-bit dtypes, unpackbits) --
// A mask register per 64 elements: vptestmb sets bit i for element i (nonzero, or its low
// bit), which is the little bit order; the big one reverses each group of 8 bytes first.
// Unpacking is the converse: 8 bytes are a mask (field_mask_of), vmovdqu8 with it writes
// the fields. Every other format is the portable loop's.

// Each group of 8 bytes in reverse order (vpshufb indexes within 128-bit lanes).
inline Vec reverse_each_8(Vec v) {
  const Vec order = _mm512_set_epi64(0x08090a0b0c0d0e0fLL, 0x0001020304050607LL, 0x08090a0b0c0d0e0fLL,
                                     0x0001020304050607LL, 0x08090a0b0c0d0e0fLL, 0x0001020304050607LL,
                                     0x08090a0b0c0d0e0fLL, 0x0001020304050607LL);
  return _mm512_shuffle_epi8(v, order);
}

template <bool Little, bool Nonzero>
inline uint64_t field_mask(Vec v) {
  if constexpr (!Little) v = reverse_each_8(v);
  return Nonzero ? _mm512_test_epi8_mask(v, v) : _mm512_test_epi8_mask(v, _mm512_set1_epi8(1));
}

template <bool Little, bool Nonzero>
void pack_bit_rows(const void* x, uint8_t* out, const PackRows& rows) {
  const int64_t n = rows.n, bytes = rows.bytes;
  for (int64_t r = 0; r < rows.rows; ++r) {
    const char* a = static_cast<const char*>(x) + r * rows.x_stride;
    uint8_t* o = out + r * rows.out_stride;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
      const uint64_t m = field_mask<Little, Nonzero>(load(a + i));
      std::memcpy(o + i / 8, &m, 8);
    }
    if (i < n) {  // the tail, read through a mask (nothing past the end): its padding is 0
      const __mmask64 tail = (uint64_t{1} << (n - i)) - 1;
      const uint64_t m = field_mask<Little, Nonzero>(_mm512_maskz_loadu_epi8(tail, a + i));
      std::memcpy(o + i / 8, &m, static_cast<size_t>((n - i + 7) / 8));
    }
    for (int64_t b = (n + 7) / 8; b < bytes; ++b) o[b] = 0;
  }
}

void pack_avx512(const PackFormat& format, const void* x, uint8_t* out, const PackRows& rows) {
  if (format.width != 1 || format.bits != 1) return pack(format, x, out, rows);
  with_pack_format(format, [&](auto, auto, auto little, auto nonzero) {
    pack_bit_rows<decltype(little)::value, decltype(nonzero)::value>(x, out, rows);
  });
}

// The mask of the 64 fields of the 8 bytes of `word`: bit 8b + k is field k of byte b. In
// the little bit order that is the word itself; in the big one field k is bit 7 - k, which a
// test of each lane's bit gives from the word spread over the lanes (lane 8b + k takes byte
// b: vpshufb indexes within 128-bit lanes, each of which holds the word). Reversing each 8
// fields afterwards measured 1.4x this one's time at 16M, reversing the word's bits with
// scalar instructions 2x.
template <bool Little>
inline __mmask64 field_mask_of(int64_t word) {
  if constexpr (Little) return static_cast<__mmask64>(word);
  const Vec byte_of_lane = _mm512_set_epi64(0x0707070707070707LL, 0x0606060606060606LL, 0x0505050505050505LL,
                                            0x0404040404040404LL, 0x0303030303030303LL, 0x0202020202020202LL,
                                            0x0101010101010101LL, 0);
  const Vec bit_of_lane = _mm512_set1_epi64(0x0102040810204080LL);
  return _mm512_test_epi8_mask(_mm512_shuffle_epi8(_mm512_set1_epi64(word), byte_of_lane), bit_of_lane);
}

// The fields of each row's bytes: `one` (1, or -1 when signed) where a bit is set, else 0.
template <bool Little>
void unpack_bit_rows(const uint8_t* x, uint8_t* out, const UnpackRows& rows, Vec one) {
  const int64_t fields = rows.fields;
  for (int64_t r = 0; r < rows.rows; ++r) {
    const uint8_t* a = x + r * rows.x_stride;
    char* o = reinterpret_cast<char*>(out + r * rows.out_stride);
    int64_t f = 0;
    for (; f + 64 <= fields; f += 64) {
      int64_t word;
      std::memcpy(&word, a + f / 8, 8);
      store(o + f, _mm512_maskz_mov_epi8(field_mask_of<Little>(word), one));
    }
    if (f < fields) {  // the tail: only its bytes read, only its fields written
      int64_t word = 0;
      std::memcpy(&word, a + f / 8, static_cast<size_t>((fields - f + 7) / 8));
      _mm512_mask_storeu_epi8(o + f, (uint64_t{1} << (fields - f)) - 1,
                              _mm512_maskz_mov_epi8(field_mask_of<Little>(word), one));
    }
  }
}

void unpack_avx512(const PackFormat& format, const uint8_t* x, uint8_t* out, const UnpackRows& rows) {
  if (format.bits != 1 || rows.skip != 0) return unpack(format, x, out, rows);
  const Vec one = _mm512_set1_epi8(format.is_signed ? -1 : 1);
  if (format.little) return unpack_bit_rows<true>(x, out, rows, one);
  return unpack_bit_rows<false>(x, out, rows, one);
}

// ---- Hamming distances: the nibble lookup (byte_counts), summed per 64-bit lane by vpsadbw;
// a code's partial last vector is read under a byte mask. avx512_bitalg counts with vpopcntq.
inline __mmask64 bytes_mask(int64_t n) { return ~uint64_t(0) >> (64 - n); }  // 0 < n < 64
using CodeVec = Vec;
constexpr int64_t kCodeVecBytes = kVecBytes;
inline CodeVec code_zero() { return _mm512_setzero_si512(); }
inline CodeVec code_load(const uint8_t* p) { return _mm512_loadu_si512(p); }
inline CodeVec code_load_tail(const uint8_t* p, int64_t n) { return _mm512_maskz_loadu_epi8(bytes_mask(n), p); }
inline CodeVec code_counts(CodeVec a, CodeVec b) {
  return _mm512_sad_epu8(byte_counts(_mm512_xor_si512(a, b)), _mm512_setzero_si512());
}
inline CodeVec code_add(CodeVec a, CodeVec b) { return _mm512_add_epi64(a, b); }
constexpr int kCodeSums = 8;
// The eight vectors' lane sums by a transposing tree: adjacent lanes of pairs of vectors
// (vpunpck), then 128-bit lanes of pairs of those, twice (vshufi64x2): 21 instructions for
// eight sums, where one vector's sum alone takes 7. The sums (at most 8 x 64 x vectors) as int32.
inline void code_store_sums(const CodeVec* v, int32_t* out, int n) {
  CodeVec u[4];
  for (int k = 0; k < 4; ++k) {
    u[k] = _mm512_add_epi64(_mm512_unpacklo_epi64(v[2 * k], v[2 * k + 1]), _mm512_unpackhi_epi64(v[2 * k], v[2 * k + 1]));
  }
  const auto halves = [](CodeVec a, CodeVec b) {
    return _mm512_add_epi64(_mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
  };
  const __m256i sums = _mm512_cvtepi64_epi32(halves(halves(u[0], u[1]), halves(u[2], u[3])));
  if (n == kCodeSums) return _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), sums);
  _mm256_mask_storeu_epi32(out, static_cast<__mmask8>((1u << n) - 1), sums);
}

#include "kernels/hamming_loops.h"

// A constant, so that avx512_bitalg's table can start from it.
constexpr KernelTable kTable = [] {
  KernelTable table = simd_table();
  table.hamming = &hamming_vectors;
  table.signbit = &signbit_avx512;
  table.bitwise_count = &bitwise_count_avx512;
  table.pack = &pack_avx512;
  table.unpack = &unpack_avx512;
  return table;
}();
constinit const KernelTable kernel_table = kTable;

}  // namespace avx512

// ---- The avx512_bitalg level: the avx512 level, but for bitwise_count, which counts with
// AVX-512 VPOPCNTDQ's vpopcntd/q and BITALG's vpopcntb/w (each lane's count in the lane),
// narrowed to one byte per lane by vpmovwb/db/qb. A row's last, partial vector is read and
// written under a mask (a masked-off lane is neither read nor written, nor can it fault).
// Its own namespace and portable loops, compiled for these extensions too; its table takes
// every other slot from namespace avx512.
#pragma GCC push_options
#pragma GCC target("avx512bitalg,avx512vpopcntdq")

namespace avx512_bitalg {

#include "kernels/kernels_impl.h"

template <int Width, bool Signed>
inline __m512i lane_counts(__m512i v) {
  if constexpr (Width == 1) return _mm512_popcnt_epi8(Signed ? _mm512_abs_epi8(v) : v);
  if constexpr (Width == 2) return _mm512_popcnt_epi16(Signed ? _mm512_abs_epi16(v) : v);
  if constexpr (Width == 4) return _mm512_popcnt_epi32(Signed ? _mm512_abs_epi32(v) : v);
  if constexpr (Width == 8) return _mm512_popcnt_epi64(Signed ? _mm512_abs_epi64(v) : v);
}

// The counts of the 64 / Width lanes at a, as bytes at o; only the first `lanes` when
// Partial (lanes < 64 / Width).
template <int Width, bool Signed, bool Partial>
inline void count_vector(const char* a, uint8_t* o, int64_t lanes) {
  const uint64_t mask = Partial ? (uint64_t(1) << lanes) - 1 : ~uint64_t(0);
  __m512i v;
  if constexpr (!Partial) v = _mm512_loadu_si512(a);
  if constexpr (Partial && Width == 1) v = _mm512_maskz_loadu_epi8(mask, a);
  if constexpr (Partial && Width == 2) v = _mm512_maskz_loadu_epi16(static_cast<__mmask32>(mask), a);
  if constexpr (Partial && Width == 4) v = _mm512_maskz_loadu_epi32(static_cast<__mmask16>(mask), a);
  if constexpr (Partial && Width == 8) v = _mm512_maskz_loadu_epi64(static_cast<__mmask8>(mask), a);
  const __m512i counts = lane_counts<Width, Signed>(v);
  if constexpr (Width == 1) {
    if constexpr (Partial) _mm512_mask_storeu_epi8(o, mask, counts);
    else _mm512_storeu_si512(o, counts);
  } else if constexpr (Width == 2) {
    const __m256i bytes = _mm512_cvtepi16_epi8(counts);
    if constexpr (Partial) _mm256_mask_storeu_epi8(o, static_cast<__mmask32>(mask), bytes);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), bytes);
  } else {
    const __m128i bytes = Width == 4 ? _mm512_cvtepi32_epi8(counts) : _mm512_cvtepi64_epi8(counts);
    if constexpr (Partial) _mm_mask_storeu_epi8(o, static_cast<__mmask16>(mask), bytes);
    else if constexpr (Width == 4) _mm_storeu_si128(reinterpret_cast<__m128i*>(o), bytes);
    else _mm_storel_epi64(reinterpret_cast<__m128i*>(o), bytes);
  }
}

template <int Width, bool Signed>
void count_lanes_bitalg(const void* x, uint8_t* out, const Rows& rows) {
  constexpr int64_t kLanes = 64 / Width;
  const int64_t n = rows.n;
  for_each_row(rows, x, nullptr, out, [n](const char* a, const char*, char* out_row) {
    uint8_t* o = reinterpret_cast<uint8_t*>(out_row);
    int64_t i = 0;
#pragma GCC unroll 4
    for (; i + kLanes <= n; i += kLanes) count_vector<Width, Signed, false>(a + i * Width, o + i, kLanes);
    if (i < n) count_vector<Width, Signed, true>(a + i * Width, o + i, n - i);
  });
}

void bitwise_count_bitalg(int width, bool is_signed, const void* x, uint8_t* out, const Rows& rows) {
  with_width_and_sign(width, is_signed, [&](auto w, auto s) {
    count_lanes_bitalg<decltype(w)::value, decltype(s)::value>(x, out, rows);
  });
}

// Hamming distances: avx512's loads and sums, with vpopcntq of each 64-bit lane of a ^ b.
using avx512::CodeVec;
using avx512::kCodeVecBytes;
using avx512::code_zero;
using avx512::code_load;
using avx512::code_load_tail;
using avx512::code_add;
using avx512::kCodeSums;
using avx512::code_store_sums;
inline CodeVec code_counts(CodeVec a, CodeVec b) { return _mm512_popcnt_epi64(_mm512_xor_si512(a, b)); }

#include "kernels/hamming_loops.h"

constinit const KernelTable kernel_table = [] {
  KernelTable table = avx512::kTable;
  table.bitwise_count = &bitwise_count_bitalg;
  table.hamming = &hamming_vectors;
  return table;
}();

}  // namespace avx512_bitalg

#pragma GCC pop_options
}  // namespace torchops

#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif  // defined(__x86_64__)
