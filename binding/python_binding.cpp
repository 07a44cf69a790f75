// torchops._binding: compiled functions of the typed Python API (torchops/ops.py), so that a
// Python call costs what a call of one of PyTorch's own functions costs.
//
// Each compiled function parses its arguments on CPython's vectorcall protocol and calls
// the registered operator through its typed dispatcher handle (csrc/overloads.h): the same
// checks, errors, kernels, version counters and dispatch keys (tracing, fake tensors,
// TorchDispatchModes, functorch, inference mode) as torch.ops.torchops.*, without
// torch.ops's generic argument parsing and boxing. It takes a call only where that is
// exactly equivalent to the typed API in torchops/ops.py: every tensor a plain torch.Tensor
// (no subclass, so no __torch_function__), no TorchFunctionMode active, and arguments of
// the common kinds (a tensor or Python int count, a Python int or None for an int argument,
// a str, a bool, a tuple or list of two out tensors). Every other call (a subclass such as DTensor, a mode, a NumPy bool or
// integer, a Python-int x, any wrong argument) goes, as it is, to that Python function: its
// twin, which reaches the op through torch.ops and owns every argument check and message of
// the typed API.
//
// A call the compiled function takes is dispatched once, failing or not. Every check the
// twin makes before calling the op passes for it (that is what taking it means), so the
// only errors left are the op's, and the compiled function says them as the twin does: a
// message that names the op (torchops.bitshift: ...) names the function the user called
// instead, keeping its type.
//
// The operator library (torchops/_C) is LibTorch-only; this module is the one part of
// torchops linked against libtorch_python, and it must be imported after the library is
// loaded (torchops/_fastpath.py does both).
#include <ATen/PythonTorchFunctionTLS.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/python_headers.h>

#include <array>
#include <atomic>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "overloads.h"

namespace torchops::binding {
namespace {

// A compiled function's answer meaning "not mine": the call goes to the twin.
PyObject* const kTwin = reinterpret_cast<PyObject*>(1);

// The arguments of one call, one slot per parameter in the order of the signature;
// nullptr where the caller left a parameter out.
constexpr int kMaxParams = 7;
using Slots = PyObject* [kMaxParams];

struct Param {
  const char* name;
  const char* default_value = nullptr;  // as Python source, for the text signature; nullptr: required
};

struct Function {
  const char* name;
  std::vector<Param> params;  // positional-or-keyword first, then keyword-only
  int positional;             // how many params may be passed by position
  PyObject* (*call)(const Slots& args);
  // Set by _connect: the twin, the name messages give ("torchops.bitshift", a str), the
  // parameter names as interned str, the text signature.
  PyObject* twin = nullptr;
  PyObject* called = nullptr;
  std::vector<PyObject*> interned{};
  std::string doc{};
  PyMethodDef def{};
};

std::atomic<bool> use_torch_ops{false};

// No __torch_function__ handling would run for this call: no TorchFunctionMode, and no
// pending "skip the next __torch_function__" request (torch.ops would consume it).
bool no_torch_function_handling() {
  return !at::impl::torch_function_mode_enabled() && !at::impl::PythonTorchFunctionTLS::peek_skip_next();
}

// A torch.Tensor, not a subclass. A tensor of another layout (sparse) is called as any other:
// it reaches the op's device-generic entry, which refuses it in the words the twin would.
bool plain_tensor(PyObject* object) {
  return THPVariable_CheckExact(object);
}

bool absent_or_none(PyObject* object) {
  return object == nullptr || object == Py_None;
}

// A bool flag, or absent (its default). Anything else (None, 1, a NumPy bool) is the twin's
// to accept or refuse.
bool flag(PyObject* object, bool* value, bool default_value = true) {
  if (object == nullptr) {
    *value = default_value;
    return true;
  }
  *value = object == Py_True;
  return object == Py_True || object == Py_False;
}

// A Python int that fits int64_t, or absent (its default). Anything else (a bool, a NumPy
// integer, an int beyond int64) is the twin's.
bool int_arg(PyObject* object, int64_t* value, int64_t default_value) {
  if (object == nullptr) {
    *value = default_value;
    return true;
  }
  if (!PyLong_CheckExact(object)) return false;
  int overflow = 0;
  const long long parsed = PyLong_AsLongLongAndOverflow(object, &overflow);
  if (overflow != 0) return false;
  *value = static_cast<int64_t>(parsed);
  return true;
}

// The same for an `int?` parameter: None too.
bool optional_int_arg(PyObject* object, std::optional<int64_t>* value, std::optional<int64_t> default_value) {
  if (object == nullptr) {
    *value = default_value;
    return true;
  }
  if (object == Py_None) {
    *value = std::nullopt;
    return true;
  }
  int64_t parsed = 0;
  if (!int_arg(object, &parsed, 0)) return false;
  *value = parsed;
  return true;
}

// Counts below 0 or from 64 up are out of range for every dtype, so a Python-int count is
// clamped to [-1, 64], as the twin does (any value, 2**70 included, gives the same result).
at::Scalar clamped_count(PyObject* y) {
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(y, &overflow);
  if (overflow != 0) value = overflow > 0 ? 64 : -1;
  return at::Scalar(static_cast<int64_t>(value < -1 ? -1 : value > 64 ? 64 : value));
}

// Holds the GIL released for the op, as PyTorch's own bindings do: other Python threads run
// meanwhile. Anything below that needs Python (a mode, a subclass) takes it back.
class ReleasedGil {
 public:
  ReleasedGil() : state_(PyEval_SaveThread()) {}
  ~ReleasedGil() { PyEval_RestoreThread(state_); }
  ReleasedGil(const ReleasedGil&) = delete;
  ReleasedGil& operator=(const ReleasedGil&) = delete;

 private:
  PyThreadState* state_;
};

PyObject* new_reference(PyObject* object) {
  Py_INCREF(object);
  return object;
}

// The shift every compiled shift function comes down to. x is a plain tensor; the rest as
// parsed.
PyObject* shift(PyObject* x, PyObject* y, c10::string_view direction, PyObject* arithmetic_arg, PyObject* out,
                bool in_place) {
  bool arithmetic = true;
  const bool tensor_count = plain_tensor(y);
  if (!(tensor_count || PyLong_CheckExact(y)) || !flag(arithmetic_arg, &arithmetic) ||
      !(absent_or_none(out) || plain_tensor(out))) {
    return kTwin;
  }
  // One body for both kinds of count (a tensor, or a Python int as a Scalar) and their overloads.
  auto call = [&](const auto& count, const auto& in_place_op, const auto& out_op, const auto& functional_op) {
    const at::Tensor& self = THPVariable_Unpack(x);
    if (in_place) {
      ReleasedGil released;
      in_place_op.call(op::writable(self), count, direction, arithmetic);
    } else if (!absent_or_none(out)) {
      ReleasedGil released;
      out_op.call(self, count, direction, arithmetic, op::writable(THPVariable_Unpack(out)));
    } else {
      at::Tensor result;
      {
        ReleasedGil released;
        result = functional_op.call(self, count, direction, arithmetic);
      }
      return THPVariable_Wrap(std::move(result));
    }
    return new_reference(in_place ? x : out);
  };
  HANDLE_TH_ERRORS
  if (tensor_count) return call(THPVariable_Unpack(y), op::bitshift_inplace(), op::bitshift_out(), op::bitshift());
  return call(clamped_count(y), op::bitshift_scalar_inplace(), op::bitshift_scalar_out(), op::bitshift_scalar());
  END_HANDLE_TH_ERRORS
}

// The direction as the op takes it; false for anything but a str (the twin refuses it).
bool direction_of(PyObject* object, c10::string_view* direction) {
  if (!PyUnicode_CheckExact(object)) return false;
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(object, &size);
  if (data == nullptr) {  // a str with lone surrogates: the twin passes it on to the op
    PyErr_Clear();
    return false;
  }
  *direction = c10::string_view(data, static_cast<size_t>(size));
  return true;
}

// A str argument, or absent (its default); false for anything else.
bool str_arg(PyObject* object, c10::string_view* value, c10::string_view default_value) {
  if (object == nullptr) {
    *value = default_value;
    return true;
  }
  return direction_of(object, value);
}

// bitshift(x, y, direction, arithmetic=True, out=None)
PyObject* bitshift(const Slots& args) {
  c10::string_view direction;
  if (!plain_tensor(args[0]) || !direction_of(args[2], &direction)) return kTwin;
  return shift(args[0], args[1], direction, args[3], args[4], /*in_place=*/false);
}

// bitwise_{left,right}_shift(x, y, is_arithmetic=True, out=None, name=None) and the in-place
// bitwise_{left,right}_shift_ with the same parameters: Paddle's signatures. `name` is
// ignored; the in-place forms leave an `out` to the twin (it must be None or x).
template <bool Left, bool InPlace>
PyObject* paddle_shift(const Slots& args) {
  if (!plain_tensor(args[0]) || (InPlace && !absent_or_none(args[3]))) return kTwin;
  return shift(args[0], args[1], Left ? "LEFT" : "RIGHT", args[2], InPlace ? nullptr : args[3], InPlace);
}

// f(x, out=None) of a unary op, by the handles of its functional and out= overloads
// (csrc/overloads.h's TORCHOPS_FOR_EACH_UNARY_OP).
template <auto Functional, auto Out>
PyObject* unary(const Slots& args) {
  PyObject* const x = args[0];
  PyObject* const out = args[1];
  if (!plain_tensor(x) || !(absent_or_none(out) || plain_tensor(out))) return kTwin;
  HANDLE_TH_ERRORS
  if (!absent_or_none(out)) {
    {
      ReleasedGil released;
      Out().call(THPVariable_Unpack(x), op::writable(THPVariable_Unpack(out)));
    }
    return new_reference(out);
  }
  at::Tensor result;
  {
    ReleasedGil released;
    result = Functional().call(THPVariable_Unpack(x));
  }
  return THPVariable_Wrap(std::move(result));
  END_HANDLE_TH_ERRORS
}

// A packing op's call: x a plain tensor and out absent, None or a plain tensor, else the
// twin's; the rest parsed by the caller into `args`, passed on to the functional or out=
// handle as the schema orders them.
template <class Functional, class Out, class... Args>
PyObject* packing(PyObject* x, PyObject* out, const Functional& functional, const Out& written, const Args&... args) {
  if (!plain_tensor(x) || !(absent_or_none(out) || plain_tensor(out))) return kTwin;
  HANDLE_TH_ERRORS
  if (!absent_or_none(out)) {
    {
      ReleasedGil released;
      written.call(THPVariable_Unpack(x), args..., op::writable(THPVariable_Unpack(out)));
    }
    return new_reference(out);
  }
  at::Tensor result;
  {
    ReleasedGil released;
    result = functional.call(THPVariable_Unpack(x), args...);
  }
  return THPVariable_Wrap(std::move(result));
  END_HANDLE_TH_ERRORS
}

// packbits(x, dim=-1, bitorder='big', out=None)
PyObject* packbits(const Slots& args) {
  std::optional<int64_t> dim;
  c10::string_view bitorder;
  if (!optional_int_arg(args[1], &dim, -1) || !str_arg(args[2], &bitorder, "big")) return kTwin;
  return packing(args[0], args[3], op::packbits(), op::packbits_out(), dim, bitorder);
}

// unpackbits(x, dim=-1, count=None, bitorder='big', out=None)
PyObject* unpackbits(const Slots& args) {
  std::optional<int64_t> dim, count;
  c10::string_view bitorder;
  if (!optional_int_arg(args[1], &dim, -1) || !optional_int_arg(args[2], &count, std::nullopt) ||
      !str_arg(args[3], &bitorder, "big")) {
    return kTwin;
  }
  return packing(args[0], args[4], op::unpackbits(), op::unpackbits_out(), dim, count, bitorder);
}

// pack(x, bits, dim=-1, bitorder='big', out=None)
PyObject* pack(const Slots& args) {
  int64_t bits = 0;
  std::optional<int64_t> dim;
  c10::string_view bitorder;
  if (!int_arg(args[1], &bits, 0) || !optional_int_arg(args[2], &dim, -1) || !str_arg(args[3], &bitorder, "big")) {
    return kTwin;
  }
  return packing(args[0], args[4], op::pack(), op::pack_out(), bits, dim, bitorder);
}

// unpack(x, bits, dim=-1, count=None, bitorder='big', signed=False, out=None)
PyObject* unpack(const Slots& args) {
  int64_t bits = 0;
  std::optional<int64_t> dim, count;
  c10::string_view bitorder;
  bool is_signed = false;
  if (!int_arg(args[1], &bits, 0) || !optional_int_arg(args[2], &dim, -1) ||
      !optional_int_arg(args[3], &count, std::nullopt) || !str_arg(args[4], &bitorder, "big") ||
      !flag(args[5], &is_signed, /*default_value=*/false)) {
    return kTwin;
  }
  return packing(args[0], args[6], op::unpack(), op::unpack_out(), bits, dim, count, bitorder, is_signed);
}

// hamming_distance(x1, x2, out=None): x1 and x2 plain tensors and out absent, None or a plain
// tensor, else the twin's.
PyObject* hamming_distance(const Slots& args) {
  PyObject* const x1 = args[0];
  PyObject* const x2 = args[1];
  PyObject* const out = args[2];
  if (!plain_tensor(x1) || !plain_tensor(x2) || !(absent_or_none(out) || plain_tensor(out))) return kTwin;
  HANDLE_TH_ERRORS
  if (!absent_or_none(out)) {
    {
      ReleasedGil released;
      op::hamming_distance_out().call(THPVariable_Unpack(x1), THPVariable_Unpack(x2),
                                      op::writable(THPVariable_Unpack(out)));
    }
    return new_reference(out);
  }
  at::Tensor result;
  {
    ReleasedGil released;
    result = op::hamming_distance().call(THPVariable_Unpack(x1), THPVariable_Unpack(x2));
  }
  return THPVariable_Wrap(std::move(result));
  END_HANDLE_TH_ERRORS
}

// Set by _connect: hamming_topk's result type, torchops/_twins.py's HammingTopk (a named tuple).
PyObject* hamming_topk_type = nullptr;

// A HammingTopk of two new references, which it takes (nullptr, an error set, if either is
// nullptr). Made as tuple.__new__(HammingTopk, (values, indices)) makes it, in C: the named
// tuple's own __new__ does that in Python code.
PyObject* hamming_topk_result(PyObject* values, PyObject* indices) {
  if (values == nullptr || indices == nullptr) {
    Py_XDECREF(values);
    Py_XDECREF(indices);
    return nullptr;
  }
  PyObject* const pair = PyTuple_New(2);
  if (pair == nullptr) {
    Py_DECREF(values);
    Py_DECREF(indices);
    return nullptr;
  }
  PyTuple_SET_ITEM(pair, 0, values);
  PyTuple_SET_ITEM(pair, 1, indices);
  PyObject* const args = PyTuple_Pack(1, pair);
  Py_DECREF(pair);
  if (args == nullptr) return nullptr;
  PyObject* const result = PyTuple_Type.tp_new(reinterpret_cast<PyTypeObject*>(hamming_topk_type), args, nullptr);
  Py_DECREF(args);
  return result;
}

// hamming_topk(queries, database, k, out=None): queries and database plain tensors, k a
// Python int that fits int64_t, out absent, None or a tuple or list of two plain tensors
// (torch.topk's out=: values, indices), else the twin's. The result is a HammingTopk, of the
// outs themselves for out=.
PyObject* hamming_topk(const Slots& args) {
  PyObject* const queries = args[0];
  PyObject* const database = args[1];
  PyObject* const out = args[3];
  int64_t k = 0;
  if (!plain_tensor(queries) || !plain_tensor(database) || !int_arg(args[2], &k, 0)) return kTwin;
  PyObject* values = nullptr;
  PyObject* indices = nullptr;
  if (!absent_or_none(out)) {
    if (!(PyTuple_CheckExact(out) || PyList_CheckExact(out)) || PySequence_Fast_GET_SIZE(out) != 2) return kTwin;
    values = PySequence_Fast_GET_ITEM(out, 0);
    indices = PySequence_Fast_GET_ITEM(out, 1);
    if (!plain_tensor(values) || !plain_tensor(indices)) return kTwin;
  }
  HANDLE_TH_ERRORS
  if (values != nullptr) {
    // New references before the call: a list's items could change while the GIL is released.
    Py_INCREF(values);
    Py_INCREF(indices);
    try {
      ReleasedGil released;
      op::hamming_topk_out().call(THPVariable_Unpack(queries), THPVariable_Unpack(database), k,
                                  op::writable(THPVariable_Unpack(values)), op::writable(THPVariable_Unpack(indices)));
    } catch (...) {
      Py_DECREF(values);
      Py_DECREF(indices);
      throw;
    }
    return hamming_topk_result(values, indices);
  }
  std::tuple<at::Tensor, at::Tensor> result;
  {
    ReleasedGil released;
    result = op::hamming_topk().call(THPVariable_Unpack(queries), THPVariable_Unpack(database), k);
  }
  return hamming_topk_result(THPVariable_Wrap(std::move(std::get<0>(result))),
                             THPVariable_Wrap(std::move(std::get<1>(result))));
  END_HANDLE_TH_ERRORS
}

// Set by _connect: torchops/_twins.py's say_as(called, error), the one rule for saying an
// op's error as the function the user called.
PyObject* say_as_function = nullptr;

// The raised exception, said as `called` by say_as (its type and traceback kept). Should
// say_as itself fail, the op's error is raised as it is.
void say_as(PyObject* called) {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* error = PyErr_GetRaisedException();
#else
  PyObject *type = nullptr, *error = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &error, &traceback);
  PyErr_NormalizeException(&type, &error, &traceback);
  if (traceback != nullptr) PyException_SetTraceback(error, traceback);
#endif
  PyObject* said = PyObject_CallFunctionObjArgs(say_as_function, called, error, nullptr);
  if (said == nullptr) PyErr_Clear();
  Py_XDECREF(said);
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(error);
#else
  PyErr_Restore(type, error, traceback);
#endif
}

// The typed API, as its signatures read in torchops/ops.py and torchops/_twins.py
// (substitute_in_graph checks that the compiled functions and the twins agree when
// torch.compile first loads; tests/test_binding.py, that all three do).
Function functions[] = {
    {"bitshift", {{"x"}, {"y"}, {"direction"}, {"arithmetic", "True"}, {"out", "None"}}, 5, &bitshift},
    {"bitwise_left_shift", {{"x"}, {"y"}, {"is_arithmetic", "True"}, {"out", "None"}, {"name", "None"}}, 5,
     &paddle_shift<true, false>},
    {"bitwise_right_shift", {{"x"}, {"y"}, {"is_arithmetic", "True"}, {"out", "None"}, {"name", "None"}}, 5,
     &paddle_shift<false, false>},
    {"bitwise_left_shift_", {{"x"}, {"y"}, {"is_arithmetic", "True"}, {"out", "None"}, {"name", "None"}}, 5,
     &paddle_shift<true, true>},
    {"bitwise_right_shift_", {{"x"}, {"y"}, {"is_arithmetic", "True"}, {"out", "None"}, {"name", "None"}}, 5,
     &paddle_shift<false, true>},
#define TORCHOPS_UNARY_FUNCTION(X, name) {#name, {{"x"}, {"out", "None"}}, 2, &unary<&op::name, &op::name##_out>},
    TORCHOPS_FOR_EACH_UNARY_OP(TORCHOPS_UNARY_FUNCTION, )
#undef TORCHOPS_UNARY_FUNCTION
    {"packbits", {{"x"}, {"dim", "-1"}, {"bitorder", "'big'"}, {"out", "None"}}, 4, &packbits},
    {"unpackbits", {{"x"}, {"dim", "-1"}, {"count", "None"}, {"bitorder", "'big'"}, {"out", "None"}}, 5, &unpackbits},
    {"pack", {{"x"}, {"bits"}, {"dim", "-1"}, {"bitorder", "'big'"}, {"out", "None"}}, 5, &pack},
    {"unpack",
     {{"x"}, {"bits"}, {"dim", "-1"}, {"count", "None"}, {"bitorder", "'big'"}, {"signed", "False"}, {"out", "None"}},
     7,
     &unpack},
    {"hamming_distance", {{"x1"}, {"x2"}, {"out", "None"}}, 3, &hamming_distance},
    {"hamming_topk", {{"queries"}, {"database"}, {"k"}, {"out", "None"}}, 4, &hamming_topk},
};

// Fills `slots` from a vectorcall; false if the call does not fit the signature plainly
// (too many positional arguments, an unknown or repeated keyword, a required one missing):
// the twin then raises Python's own TypeError for it.
bool parse(const Function& function, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, Slots& slots) {
  const int count = static_cast<int>(function.params.size());
  if (nargs > function.positional) return false;
  for (int i = 0; i < kMaxParams; ++i) slots[i] = i < nargs ? args[i] : nullptr;
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* const key = PyTuple_GET_ITEM(kwnames, k);
    int index = 0;
    while (index < count && function.interned[index] != key) ++index;  // keywords are interned, usually
    if (index == count) {
      index = 0;
      while (index < count && PyUnicode_Compare(function.interned[index], key) != 0) ++index;
      if (PyErr_Occurred()) PyErr_Clear();
    }
    if (index == count || slots[index] != nullptr) return false;
    slots[index] = args[nargs + k];
  }
  for (int i = 0; i < count; ++i) {
    if (slots[i] == nullptr && function.params[i].default_value == nullptr) return false;
  }
  return true;
}

template <int Index>
PyObject* compiled_function(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  Function& function = functions[Index];
  Slots slots;
  if (!use_torch_ops.load(std::memory_order_relaxed) && no_torch_function_handling() &&
      parse(function, args, nargs, kwnames, slots)) {
    PyObject* const result = function.call(slots);
    if (result == nullptr) say_as(function.called);
    if (result != kTwin) return result;
  }
  return PyObject_Vectorcall(function.twin, args, static_cast<size_t>(nargs), kwnames);
}

constexpr int kFunctionCount = sizeof(functions) / sizeof(functions[0]);

// CPython stores every C function as a PyCFunction; METH_FASTCALL | METH_KEYWORDS tells it
// the real signature.
template <int... Index>
std::array<PyCFunction, sizeof...(Index)> make_compiled_functions(std::integer_sequence<int, Index...>) {
  return {reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&compiled_function<Index>))...};
}

// "bitshift(x, y, direction, arithmetic=True, out=None)\n--\n\n": the form in which
// CPython (and so inspect.signature and help()) reads a builtin's signature.
std::string text_signature(const Function& function) {
  std::string text = std::string(function.name) + "(";
  for (size_t i = 0; i < function.params.size(); ++i) {
    if (i > 0) text += ", ";
    if (static_cast<int>(i) == function.positional) text += "*, ";
    text += function.params[i].name;
    if (function.params[i].default_value != nullptr) text += std::string("=") + function.params[i].default_value;
  }
  return text + ")\n--\n\n";
}

// _connect(twins: dict[str, function], say_as, hamming_topk_type) -> dict[str, builtin
// function]: pairs every compiled function with its twin, keeps say_as for the op's errors
// and the named tuple hamming_topk returns, and makes each a builtin function with the
// signature as its docstring
// (CPython's form, which inspect.signature reads: the typed API's functions carry the docs).
PyObject* connect(PyObject* /*module*/, PyObject* args) {
  PyObject* twins = nullptr;
  PyObject* saying = nullptr;
  PyObject* topk_type = nullptr;
  if (!PyArg_ParseTuple(args, "OOO:_connect", &twins, &saying, &topk_type)) return nullptr;
  if (!PyDict_Check(twins) || !PyCallable_Check(saying) || !PyType_Check(topk_type) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(topk_type), &PyTuple_Type)) {
    PyErr_SetString(PyExc_TypeError,
                    "torchops._binding._connect: expected a dict of the typed API's functions, say_as and "
                    "hamming_topk's result type (a tuple subclass)");
    return nullptr;
  }
  if (PyDict_Size(twins) != kFunctionCount) {
    PyErr_Format(PyExc_KeyError, "torchops._binding._connect: expected twins for the %d typed functions, got %zd",
                 kFunctionCount, PyDict_Size(twins));
    return nullptr;
  }
  const auto compiled_functions = make_compiled_functions(std::make_integer_sequence<int, kFunctionCount>{});
  Py_XSETREF(say_as_function, Py_NewRef(saying));
  Py_XSETREF(hamming_topk_type, Py_NewRef(topk_type));
  PyObject* result = PyDict_New();
  if (result == nullptr) return nullptr;
  for (int i = 0; i < kFunctionCount; ++i) {
    Function& function = functions[i];
    PyObject* twin = PyDict_GetItemString(twins, function.name);
    if (twin == nullptr) {
      PyErr_Format(PyExc_KeyError, "torchops._binding._connect: no twin for %s", function.name);
      Py_DECREF(result);
      return nullptr;
    }
    if (function.twin != nullptr) {
      PyErr_Format(PyExc_RuntimeError, "torchops._binding._connect: %s is already connected", function.name);
      Py_DECREF(result);
      return nullptr;
    }
    function.doc = text_signature(function);
    function.called = PyUnicode_FromFormat("torchops.%s", function.name);
    if (function.called == nullptr) {
      Py_DECREF(result);
      return nullptr;
    }
    for (const Param& param : function.params) function.interned.push_back(PyUnicode_InternFromString(param.name));
    function.twin = twin;
    Py_INCREF(twin);
    function.def = {function.name, compiled_functions[i], METH_FASTCALL | METH_KEYWORDS, function.doc.c_str()};
    PyObject* module_name = PyUnicode_FromString("torchops._binding");
    PyObject* builtin = PyCFunction_NewEx(&function.def, nullptr, module_name);
    Py_XDECREF(module_name);
    if (builtin == nullptr || PyDict_SetItemString(result, function.name, builtin) != 0) {
      Py_XDECREF(builtin);
      Py_DECREF(result);
      return nullptr;
    }
    Py_DECREF(builtin);
  }
  return result;
}

// _use_torch_ops(flag: bool) -> bool: every call goes to the twin while set (tests, and
// TORCHOPS_CALL_PATH=torch.ops); returns the previous setting.
PyObject* set_use_torch_ops(PyObject* /*module*/, PyObject* flag) {
  const int value = PyObject_IsTrue(flag);
  if (value < 0) return nullptr;
  return PyBool_FromLong(use_torch_ops.exchange(value != 0));
}

PyObject* using_torch_ops(PyObject* /*module*/, PyObject* /*unused*/) {
  return PyBool_FromLong(use_torch_ops.load());
}

PyMethodDef module_methods[] = {
    {"_connect", reinterpret_cast<PyCFunction>(&connect), METH_VARARGS, nullptr},
    {"_use_torch_ops", reinterpret_cast<PyCFunction>(&set_use_torch_ops), METH_O, nullptr},
    {"_using_torch_ops", reinterpret_cast<PyCFunction>(&using_torch_ops), METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "torchops._binding",
                          "Compiled functions of torchops's typed API (see torchops/_fastpath.py).", -1,
                          module_methods, nullptr, nullptr, nullptr, nullptr};

}  // namespace
}  // namespace torchops::binding

PyMODINIT_FUNC PyInit__binding() {
  return PyModule_Create(&torchops::binding::module_def);
}
