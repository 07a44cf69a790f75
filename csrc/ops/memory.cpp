#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include "ops/memory.h"

#include <cstdint>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace torchops {

void advise_huge_pages(const at::Tensor& fresh) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (!fresh.defined() || !fresh.is_cpu() || fresh.storage().nbytes() < static_cast<size_t>(kHugePageResultBytes)) {
    return;
  }
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<uintptr_t>(fresh.storage().data());
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + fresh.storage().nbytes()) & ~(kHugePage - 1);
  // A refusal (a kernel without transparent huge pages) leaves the pages as they were.
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
}

}  // namespace torchops
