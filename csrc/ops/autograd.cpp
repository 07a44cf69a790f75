// The ops are not differentiable (csrc/registration.cpp gives every overload an Autograd
// fallthrough), but writes count, as autograd expects of them.
//
// ADInplaceOrView: like PyTorch's generated kernels for in-place and out= ops, the
// overloads that write a tensor bump its version counter after the write, so that
// autograd's saved-tensor checks and functionalization see the change. The functional
// overloads keep the default fallthrough. Inference tensors carry neither key, so no
// version is counted for them, as in PyTorch.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/library.h>

#include <tuple>

#include "overloads.h"

namespace torchops {
namespace {

// The kernel of a writing overload: runs the op below ADInplaceOrView, then bumps the
// version of argument number `Written` (x for in-place, out for out=).
template <class Signature, const c10::TypedOperatorHandle<Signature>& (*Handle)(), size_t Written>
struct CountsVersion;

template <class... Args, const c10::TypedOperatorHandle<void(Args...)>& (*Handle)(), size_t Written>
struct CountsVersion<void(Args...), Handle, Written> {
  static void kernel(c10::DispatchKeySet keys, Args... args) {
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      Handle().redispatch(keys & c10::after_ADInplaceOrView_keyset, args...);
    }
    torch::autograd::increment_version(std::get<Written>(std::forward_as_tuple(args...)));
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(torchops, ADInplaceOrView, m) {
  m.impl("bitshift_", TORCH_FN((CountsVersion<op::BitshiftInplace, &op::bitshift_inplace, 0>::kernel)));
  m.impl("bitshift_.Scalar",
         TORCH_FN((CountsVersion<op::BitshiftScalarInplace, &op::bitshift_scalar_inplace, 0>::kernel)));
  m.impl("bitshift.out", TORCH_FN((CountsVersion<op::BitshiftOut, &op::bitshift_out, 4>::kernel)));
  m.impl("bitshift.Scalar_out", TORCH_FN((CountsVersion<op::BitshiftScalarOut, &op::bitshift_scalar_out, 4>::kernel)));
  m.impl("signbit.out", TORCH_FN((CountsVersion<op::SignbitOut, &op::signbit_out, 1>::kernel)));
}

}  // namespace torchops
