// Large results on huge pages: the first write to fresh memory takes a page fault per page,
// and with 4 KiB pages those faults, not the kernel, bound a call that makes a result of
// several MB (unpackbits of 16M elements: 3x its time into memory already touched). Linux
// gives a private mapping 2 MiB pages where it is asked to (transparent huge pages in
// "madvise" mode, the common default) or always; PyTorch's CPU allocator asks only under
// THP_MEM_ALLOC_ENABLE=1, NumPy for every large array. docs/performance.md has the figures.
#pragma once

#include <ATen/ATen.h>

namespace torchops {

// The smallest result asked huge pages for: below it a result's aligned 2 MiB interior is
// too small a part of it to matter, and the allocator's small blocks are reused memory.
constexpr int64_t kHugePageResultBytes = int64_t{4} << 20;

// Asks the OS for huge pages under a CPU result this op has just allocated and not yet
// written (the 2 MiB-aligned part of its storage), when it holds at least
// kHugePageResultBytes; nothing elsewhere (another OS, another device, a small result).
// Only the speed of the first writes depends on it.
void advise_huge_pages(const at::Tensor& fresh);

}  // namespace torchops
