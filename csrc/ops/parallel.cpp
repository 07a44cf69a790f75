#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include "ops/parallel.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <pthread.h>

#include <atomic>

namespace torchops {
namespace {

std::atomic<bool> forked_child{false};

void mark_forked_child() { forked_child.store(true, std::memory_order_relaxed); }

// Registered when the library loads, before any fork() that could matter.
[[maybe_unused]] const int atfork_registered = pthread_atfork(nullptr, nullptr, &mark_forked_child);

}  // namespace

void for_each_loop2d(at::TensorIteratorBase& iter, at::TensorIteratorBase::loop2d_t loop, int64_t grain_size) {
  if (forked_child.load(std::memory_order_relaxed)) {
    iter.serial_for_each(loop, {0, iter.numel()});
  } else {
    iter.for_each(loop, grain_size);
  }
}

void for_each_chunk(int64_t chunks, const std::function<void(int64_t begin, int64_t end)>& chunk) {
  if (chunks <= 0) return;
  if (chunks == 1 || at::get_num_threads() == 1 || forked_child.load(std::memory_order_relaxed)) {
    return chunk(0, chunks);
  }
  // An iteration over a byte per chunk, of which only the positions are read.
  at::Tensor ids = at::empty({chunks}, at::kByte);
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(false)
                  .check_all_same_dtype(false)
                  .resize_outputs(false)
                  .add_output(ids)
                  .build();
  const char* base = static_cast<const char*>(ids.const_data_ptr());
  iter.for_each([&](char** data, const int64_t* strides, int64_t size0, int64_t size1) {
    for (int64_t r = 0; r < size1; ++r) {
      const int64_t begin = data[0] + r * strides[1] - base;
      chunk(begin, begin + size0);
    }
  }, /*grain_size=*/1);
}

bool runs_on_calling_thread(int64_t n, int64_t grain_size) {
  return n < grain_size || at::get_num_threads() == 1;
}

}  // namespace torchops
