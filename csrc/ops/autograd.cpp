// The ops are not differentiable (csrc/registration.cpp gives every overload an Autograd
// fallthrough), but writes count, as autograd expects of them.
//
// ADInplaceOrView: like PyTorch's generated kernels for in-place and out= ops, the
// overloads that write a tensor (csrc/overloads.h's Kind out and inplace) bump its version
// counter after the write, so that autograd's saved-tensor checks and functionalization see
// the change. The functional overloads keep the default fallthrough. Inference tensors carry
// neither key, so no version is counted for them, as in PyTorch.
#include <torch_headers.h>  // first: precompiled (csrc/torch_headers.h)

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "overloads.h"

namespace torchops {
namespace {

// The kernel of a writing overload: runs the op below ADInplaceOrView, then bumps the
// version of the tensor it wrote, which is the one it returns.
template <class Signature, const c10::TypedOperatorHandle<Signature>& (*Handle)()>
struct CountsVersion;

template <class... Args, const c10::TypedOperatorHandle<at::Tensor&(Args...)>& (*Handle)()>
struct CountsVersion<at::Tensor&(Args...), Handle> {
  static at::Tensor& kernel(c10::DispatchKeySet keys, Args... args) {
    at::Tensor* written = nullptr;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      written = &Handle().redispatch(keys & c10::after_ADInplaceOrView_keyset, args...);
    }
    torch::autograd::increment_version(*written);
    return *written;
  }
};

// hamming_topk.out writes two tensors, values and indices, and returns both.
template <class... Args,
          const c10::TypedOperatorHandle<std::tuple<at::Tensor&, at::Tensor&>(Args...)>& (*Handle)()>
struct CountsVersion<std::tuple<at::Tensor&, at::Tensor&>(Args...), Handle> {
  static std::tuple<at::Tensor&, at::Tensor&> kernel(c10::DispatchKeySet keys, Args... args) {
    std::optional<std::tuple<at::Tensor&, at::Tensor&>> written;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      written.emplace(Handle().redispatch(keys & c10::after_ADInplaceOrView_keyset, args...));
    }
    torch::autograd::increment_version(std::get<0>(*written));
    torch::autograd::increment_version(std::get<1>(*written));
    return *written;
  }
};

template <op::Kind kind, class Signature, const c10::TypedOperatorHandle<Signature>& (*Handle)()>
void count_versions(torch::Library& m, const char* name) {
  if constexpr (kind != op::Kind::functional) m.impl(name, TORCH_FN((CountsVersion<Signature, Handle>::kernel)));
}

}  // namespace

TORCH_LIBRARY_IMPL(torchops, ADInplaceOrView, m) {
#define TORCHOPS_COUNT_VERSIONS(function, Signature, kind, name, overload, schema) \
  count_versions<op::Kind::kind, op::Signature, &op::function>(m, TORCHOPS_OVERLOAD_NAME(name, overload));
  TORCHOPS_FOR_EACH_OVERLOAD(TORCHOPS_COUNT_VERSIONS)
#undef TORCHOPS_COUNT_VERSIONS
}

}  // namespace torchops
