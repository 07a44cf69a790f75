#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include "dispatch/capability.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <optional>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace torchops {
namespace {

struct Level {
  const char* name;
  const KernelTable* table;
};

// The levels of the architecture this library is built for, lowest first; the index is the
// level stored in `current_level`. "default" is the portable code compiled for the
// architecture's baseline: on aarch64 that includes NEON, which GCC uses for its loops.
#if defined(__x86_64__)
constexpr char kArchitecture[] = "x86-64";
const Level kLevels[] = {
    {"default", &default_isa::kernel_table},
    {"avx2", &avx2::kernel_table},
    {"avx512", &avx512::kernel_table},
    {"avx512_bitalg", &avx512_bitalg::kernel_table},
};
#else
#if defined(__aarch64__)
constexpr char kArchitecture[] = "aarch64";
#else
constexpr char kArchitecture[] = "this architecture";
#endif
const Level kLevels[] = {{"default", &default_isa::kernel_table}};
#endif
constexpr int kNumLevels = sizeof(kLevels) / sizeof(kLevels[0]);

#if defined(__x86_64__)
// Which register states the OS saves on a context switch (XCR0): a CPU feature is usable
// only if the OS preserves its registers too.
uint64_t xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

int detect_best_level() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  const bool osxsave = ecx & (1u << 27), avx = ecx & (1u << 28), fma = ecx & (1u << 12);
  if (!osxsave || !avx) return 0;
  const uint64_t xcr0 = xgetbv0();
  const bool ymm_saved = (xcr0 & 0x6) == 0x6;     // SSE and AVX state
  const bool zmm_saved = (xcr0 & 0xE6) == 0xE6;   // plus opmask and both ZMM halves
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
  const bool avx2 = ebx & (1u << 5);
  const bool avx512f = ebx & (1u << 16), avx512dq = ebx & (1u << 17);
  const bool avx512bw = ebx & (1u << 30), avx512vl = ebx & (1u << 31);
  const bool avx512_bitalg = ecx & (1u << 12), avx512_vpopcntdq = ecx & (1u << 14);
  if (!(ymm_saved && avx2 && fma)) return 0;
  if (!(zmm_saved && avx512f && avx512dq && avx512bw && avx512vl)) return 1;
  if (!(avx512_bitalg && avx512_vpopcntdq)) return 2;
  return 3;
}
#else
int detect_best_level() { return 0; }
#endif

int best_level() {
  static const int best = detect_best_level();
  return best;
}

// The names of the lowest `count` levels.
std::vector<std::string> names_of_levels(int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.emplace_back(kLevels[i].name);
  return names;
}

std::string comma_list(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  return list;
}

int level_from_name(const std::string& name, const char* source) {
  for (int i = 0; i < kNumLevels; ++i) {
    if (name == kLevels[i].name) {
      TORCH_CHECK_VALUE(i <= best_level(), "torchops: ", source, "'", name,
                        "' is a level this CPU cannot run; this CPU supports: ",
                        comma_list(supported_cpu_capabilities()));
      return i;
    }
  }
  TORCH_CHECK_VALUE(false, "torchops: ", source, "'", name, "' is not a kernel level on ", kArchitecture,
                    " (its levels: ", comma_list(cpu_capabilities()), "); this CPU supports: ",
                    comma_list(supported_cpu_capabilities()));
}

// TORCHOPS_CPU_KERNELS as it was when the library loaded, and what it asks for (nullopt: a
// value that is not a choice, refused by every level query, as a bad
// TORCHOPS_CPU_CAPABILITY is; the CPU kernels stay registered meanwhile).
const std::optional<std::string>& cpu_kernels_setting() {
  static const std::optional<std::string> setting = []() -> std::optional<std::string> {
    const char* value = std::getenv("TORCHOPS_CPU_KERNELS");
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }();
  return setting;
}

std::optional<CpuKernels> parse_cpu_kernels() {
  const std::optional<std::string>& setting = cpu_kernels_setting();
  if (!setting) return CpuKernels::levels;  // unset (an empty value is not a choice either)
  if (*setting == "composite") return CpuKernels::composite;
  if (*setting == "triton") return CpuKernels::triton;
  return std::nullopt;
}

// The level name that stands for the kernels CPU tensors take when they are not the
// compiled levels ("composite", "triton"), or nullptr.
const char* other_path() {
  const std::optional<CpuKernels> kernels = parse_cpu_kernels();
  TORCH_CHECK_VALUE(kernels.has_value(), "torchops: TORCHOPS_CPU_KERNELS='", cpu_kernels_setting().value_or(""),
                    "' is not a choice of CPU kernels (choices: composite, triton; unset for the compiled levels)");
  switch (*kernels) {
    case CpuKernels::composite: return "composite";
    case CpuKernels::triton: return "triton";
    default: return nullptr;
  }
}

// -1 until first use. A bad TORCHOPS_CPU_CAPABILITY throws from every call until fixed,
// rather than being ignored.
std::atomic<int> current_level{-1};

int level_in_use() {
  int level = current_level.load(std::memory_order_acquire);
  if (level < 0) {
    const char* forced = std::getenv("TORCHOPS_CPU_CAPABILITY");
    level = forced != nullptr ? level_from_name(forced, "TORCHOPS_CPU_CAPABILITY=") : best_level();
    int expected = -1;  // a concurrent set_cpu_capability wins
    if (!current_level.compare_exchange_strong(expected, level, std::memory_order_acq_rel)) level = expected;
  }
  return level;
}

}  // namespace

CpuKernels cpu_kernels() {
  return parse_cpu_kernels().value_or(CpuKernels::levels);
}

const KernelTable& active_kernels() {
  return *kLevels[level_in_use()].table;
}

std::string cpu_capability() {
  if (const char* path = other_path()) return path;
  return kLevels[level_in_use()].name;
}

std::vector<std::string> cpu_capabilities() {
  return names_of_levels(kNumLevels);
}

std::vector<std::string> supported_cpu_capabilities() {
  if (const char* path = other_path()) return {path};
  return names_of_levels(best_level() + 1);
}

void set_cpu_capability(const std::string& name) {
  if (const char* path = other_path()) {
    TORCH_CHECK_VALUE(name == path, "torchops: '", name, "' is not the kernel level of this process: ",
                      "TORCHOPS_CPU_KERNELS=", path, " sends every CPU call to the ", path, " kernels");
    return;
  }
  current_level.store(level_from_name(name, ""), std::memory_order_release);
}

}  // namespace torchops
