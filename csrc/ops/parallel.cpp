#include "ops/parallel.h"

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

bool runs_on_calling_thread(int64_t n) {
  return n < at::internal::GRAIN_SIZE || at::get_num_threads() == 1;
}

}  // namespace torchops
