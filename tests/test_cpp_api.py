"""The C++ API (torchops/include/torchops/ops.h, defined in csrc/api.cpp), called from C++.

The library is built with -fvisibility=hidden: only what ops.h declares with TORCHOPS_API is
exported, and nothing else in the project calls these functions from C++. So this file
reads ops.h's declarations (no list of functions here), checks that every overload has its
function among them, then writes a program that calls each declared function with arguments
made for its parameters' types and links it against the installed library: a function that
ops.h declares and the library does not export fails the link, by name. Each call's result
is compared with its overload's through torch.ops.

The program's tests are marked `deploy`, as tests/test_deploy.py's: they build a program
against the library (scripts/sanitize.sh leaves them out).
"""
import os
import re
import subprocess
from collections import namedtuple
from pathlib import Path

import pytest
import torch
import torch.utils.cpp_extension

import torchops
from torchops._contract import DECLARATIONS, FUNCTIONAL_FORM, OVERLOADS, Search

from conftest import _C10_NAMES

HEADER = "torchops/include/torchops/ops.h"
WHERE = f"declare it with TORCHOPS_API in {HEADER} and define it in csrc/api.cpp"

Declaration = namedtuple("Declaration", "name parameters text")  # parameters: ((schema type, name), ...)

# A C++ parameter's type (without const and &) as the schema writes it.
SCHEMA_TYPES = {"at::Tensor": "Tensor", "at::Scalar": "number", "std::string_view": "str",
                "c10::string_view": "str", "bool": "bool", "int64_t": "int", "double": "float",
                "std::optional<int64_t>": "Optional[int]", "c10::optional<int64_t>": "Optional[int]"}
# A C++ parameter's name is the schema's, but where the schema's is a C++ keyword: the one
# such parameter, unpack's `signed`, is `is_signed` in the header.
SCHEMA_NAMES = {"is_signed": "signed"}
# The argument of a parameter of each schema type but Tensor, as (C++, Python): values every
# op of the library takes, so that a call returns a result to compare ("LEFT" is a direction).
# A parameter of that name and type takes its own (a packing op's bitorder, bits, dim, count).
ARGUMENTS = {"number": ("at::Scalar(2)", 2), "str": ('"LEFT"', "LEFT"), "bool": ("true", True),
             "int": ("int64_t{1}", 1), "float": ("1.0", 1.0), "Optional[int]": ("int64_t{0}", 0),
             ("str", "bitorder"): ('"little"', "little"), ("int", "bits"): ("int64_t{2}", 2),
             ("Optional[int]", "dim"): ("std::nullopt", None), ("Optional[int]", "count"): ("int64_t{-3}", -3)}
# The tensor operands, in order (x, then a count): int32, where the op takes it (every op but
# those of packed bytes, whose x is uint8: the same values converted); the count's values in
# [0, 32). A search op's operands are codes, one a row: the same values as 2 rows of 2 bytes.
OPERANDS = ([-8, 3, 7, -1], [1, 2, 0, 3])
CODE_ROWS = 2


def declarations(header):
    """The functions `header` declares with TORCHOPS_API, in order."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", Path(header).read_text(), flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    found = []
    for match in re.finditer(r"TORCHOPS_API\s+[^;(){}]+?\b(\w+)\s*\(([^;{}]*)\)\s*;", text):
        parameters = []
        for parameter in filter(None, (p.strip() for p in match.group(2).split(","))):
            *type_words, name = parameter.split("=")[0].replace("&", " ").split()
            cpp_type = " ".join(word for word in type_words if word != "const")
            parameters.append((SCHEMA_TYPES.get(cpp_type, cpp_type), SCHEMA_NAMES.get(name, name)))
        found.append(Declaration(match.group(1), tuple(parameters), " ".join(match.group(0).split())))
    return found


def cpp_name(overload):
    """The C++ function of an overload, as ATen names them: `bitshift` for bitshift.default and
    bitshift.Scalar, `bitshift_` for the in-place ones, `bitshift_out` for the out= ones."""
    op = overload._schema.name.removeprefix("torchops::")
    return op + "_out" if torch.Tag.out in overload.tags else op


def overload_of(declaration):
    """The overload a declaration calls: the same name and parameters (name and type), or None."""
    for overload in OVERLOADS:
        arguments = {argument.name: str(argument.type) for argument in overload._schema.arguments}
        if cpp_name(overload) == declaration.name and arguments == {n: t for t, n in declaration.parameters}:
            return overload
    return None


@pytest.fixture(scope="module")
def header():
    """The header that the program is compiled against: the installed package's. (A fixture:
    a scratch copy with a declaration that nothing defines shows the link failing.)"""
    return Path(torchops.library_path()).parent / "include" / "torchops" / "ops.h"


def test_every_overload_has_its_function_in_the_header(header):
    # Also what keeps the program's tests from passing on a parse that found nothing.
    declared = declarations(header)
    missing = [f"{overload}: no {cpp_name(overload)} whose parameters are "
               + ", ".join(f"{argument.type} {argument.name}" for argument in overload._schema.arguments)
               for overload in OVERLOADS if not any(overload_of(d) is overload for d in declared)]
    assert not missing, "\n".join(missing) + f"\n{WHERE}"


def _declaration(overload):
    return DECLARATIONS[overload._schema.name.removeprefix("torchops::").removesuffix("_")]


def _operand_dtype(overload):
    """int32, or the first dtype of the op's declaration where it does not take int32."""
    if overload is None:
        return torch.int32
    dtypes = _declaration(overload).dtypes
    return torch.int32 if torch.int32 in dtypes else dtypes[0]


def _operand_rows(overload):
    """How many rows a tensor operand is viewed as: CODE_ROWS for a search op's codes, else
    None (1-d)."""
    return CODE_ROWS if overload is not None and isinstance(_declaration(overload), Search) else None


def _outs(overload):
    """The names of an overload's outs, in its schema's order (``out``; hamming_topk's
    ``values``, ``indices``); ``out`` for a function that has no overload."""
    if overload is None:
        return ["out"]
    return [argument.name for argument in overload._schema.arguments if argument.is_out]


def _results(result) -> tuple:
    """A call's tensors: a tuple result's (hamming_topk's values, indices), or the one."""
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _calls(header):
    """For each declared function: (its C++ call, its overload or None, the same arguments for
    the overload by name)."""
    calls = []
    for declaration in declarations(header):
        overload = overload_of(declaration)
        cpp, python, operands, dtype = [], {}, iter(OPERANDS), _operand_dtype(overload)
        outs, rows = _outs(overload), _operand_rows(overload)
        for schema_type, name in declaration.parameters:
            argument = ARGUMENTS.get((schema_type, name), ARGUMENTS.get(schema_type))
            if schema_type == "Tensor" and name not in outs:
                values = next(operands, OPERANDS[0])
                converted = "" if dtype == torch.int32 else f".to(at::ScalarType::{_C10_NAMES[dtype]})"
                shaped = "" if rows is None else f".view({{{rows}, -1}})"
                cpp.append(f"ints({{{', '.join(map(str, values))}}}){converted}{shaped}")
                python[name] = torch.tensor(values, dtype=torch.int32).to(dtype)
                if rows is not None:
                    python[name] = python[name].view(rows, -1)
            elif argument is not None:
                cpp.append(argument[0])
                python[name] = argument[1]
            elif schema_type != "Tensor":
                pytest.fail(f"{declaration.text}: tests/test_cpp_api.py has no argument for a parameter of type "
                            f"{schema_type}: add one to its ARGUMENTS")
            else:
                cpp.append(name)  # an out: of its result's dtype, once the inputs are known
        written = [name for name in outs if name in cpp]
        if written:
            # Each out of the dtype of the functional overload's result in its place (the
            # schema's outs and the results are in the same order).
            try:
                dtypes = [result.dtype for result in _results(FUNCTIONAL_FORM[overload](**python))]
            except Exception:  # no overload, or one that refuses these inputs: so does the C++ call
                dtypes = [torch.int32] * len(written)
            for name, out_dtype in zip(written, dtypes):
                python[name] = torch.empty(0, dtype=out_dtype)
                cpp[cpp.index(name)] = f"at::empty({{0}}, at::ScalarType::{_C10_NAMES[out_dtype]})"
        calls.append((f"torchops::{declaration.name}({', '.join(cpp)})", overload, python))
    return calls


PROGRAM = """// Calls every function of torchops/ops.h (written by tests/test_cpp_api.py).
#include <torchops/ops.h>

#include <ATen/ops/empty.h>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <string>
#include <tuple>

namespace {

at::Tensor ints(std::initializer_list<int32_t> values) {
  at::Tensor tensor = at::empty({static_cast<int64_t>(values.size())}, at::kInt);
  std::copy(values.begin(), values.end(), tensor.data_ptr<int32_t>());
  return tensor;
}

// " DTYPE VALUES...", the values as int64 (as double for a floating dtype).
void write(const at::Tensor& result) {
  std::cout << " " << result.scalar_type() << std::setprecision(17);
  if (result.is_floating_point()) {
    const at::Tensor values = result.to(at::kDouble).contiguous();
    for (int64_t i = 0; i < values.numel(); ++i) std::cout << " " << values.data_ptr<double>()[i];
  } else {
    const at::Tensor values = result.to(at::kLong).contiguous();
    for (int64_t i = 0; i < values.numel(); ++i) std::cout << " " << values.data_ptr<int64_t>()[i];
  }
}

// "CALL ok DTYPE VALUES...".
void report(int call, const at::Tensor& result) {
  std::cout << call << " ok";
  write(result);
  std::cout << "\\n";
}

// A tuple of tensors (std::tuple<at::Tensor, at::Tensor>, or an out= function's references):
// "CALL ok DTYPE VALUES... ; DTYPE VALUES...", one part per tensor.
template <class... Results>
void report(int call, const std::tuple<Results...>& results) {
  std::cout << call << " ok";
  std::apply([](const auto&... result) {
    int index = 0;
    ((std::cout << (index++ == 0 ? "" : " ;"), write(result)), ...);
  }, results);
  std::cout << "\\n";
}

// A call the op refuses was still made: "CALL refused MESSAGE'S FIRST LINE".
void refused(int call, const c10::Error& error) {
  const std::string message = error.what_without_backtrace();
  std::cout << call << " refused " << message.substr(0, message.find('\\n')) << "\\n";
}

}  // namespace

int main() {
%s
  return 0;
}
"""


def _build(directory, header, calls):
    """Compiles and links the program; returns its path, or fails naming the files to edit."""
    body = "\n".join(f"  try {{\n    report({index}, {call});\n  }} catch (const c10::Error& error) {{\n"
                     f"    refused({index}, error);\n  }}" for index, (call, _, _) in enumerate(calls))
    source, objects, program = directory / "calls.cpp", directory / "calls.o", directory / "calls"
    source.write_text(PROGRAM % body)
    compiler = os.environ.get("CXX", "g++").split()
    includes = [f"-I{path}" for path in [Path(header).parent.parent, *torch.utils.cpp_extension.include_paths()]]
    abi = f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"
    compiled = subprocess.run([*compiler, "-std=c++20", "-O0", abi, *includes, "-c", str(source), "-o", str(objects)],
                              capture_output=True, text=True, timeout=600)
    if compiled.returncode != 0:
        pytest.fail(f"the program that calls every function of {HEADER} does not compile (its arguments are "
                    f"made by tests/test_cpp_api.py from each parameter's type):\n{compiled.stderr[-6000:]}",
                    pytrace=False)
    library, torch_lib = torchops.library_path(), os.path.join(os.path.dirname(torch.__file__), "lib")
    linked = subprocess.run([*compiler, str(objects), "-o", str(program), library, f"-L{torch_lib}", "-lc10",
                             "-ltorch_cpu", f"-Wl,-rpath,{torch_lib}", f"-Wl,-rpath,{os.path.dirname(library)}"],
                            capture_output=True, text=True, timeout=300)
    if linked.returncode != 0:
        undefined = sorted(set(re.findall(r"undefined reference to `([^']*)'", linked.stderr))) or ["a function"]
        pytest.fail(f"the library does not export {', '.join(undefined)}, which {HEADER} declares: define each in "
                    f"csrc/api.cpp with its declaration's signature (only what the header declares with "
                    f"TORCHOPS_API is exported)\n{linked.stderr[-6000:]}", pytrace=False)
    return program


@pytest.fixture(scope="module")
def results(tmp_path_factory, header):
    """[(C++ call, overload or None, Python arguments, the program's line for it)]: one build and run."""
    calls = _calls(header)
    program = _build(tmp_path_factory.mktemp("cpp_api"), header, calls)
    ran = subprocess.run([str(program)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, f"the program that calls every function of {HEADER} failed:\n{ran.stdout}{ran.stderr}"
    lines = dict(line.split(" ", 1) for line in ran.stdout.splitlines())
    return [(call, overload, python, lines.get(str(index))) for index, (call, overload, python) in enumerate(calls)]


def _parsed(line):
    """("ok", (dtype, values), ...) (one part per tensor of the result) or ("refused",), from
    the program's line for a call."""
    kind, _, rest = line.partition(" ")
    if kind != "ok":
        return (kind,)
    parts = []
    for part in rest.split(" ;"):
        dtype, *values = part.split()
        parts.append((dtype, [int(v) if re.fullmatch(r"-?\d+", v) else float(v) for v in values]))
    return (kind, *parts)


def _expected(overload, arguments):
    """What the program should write for a call of `overload` with these arguments, parsed."""
    try:
        result = overload(**arguments)
    except Exception:
        return ("refused",)
    return ("ok", *((_C10_NAMES[tensor.dtype],
                     tensor.to(torch.float64 if tensor.is_floating_point() else torch.int64).flatten().tolist())
                    for tensor in _results(result)))


@pytest.mark.deploy
def test_every_declared_function_is_exported_and_called(results):
    not_called = [call for call, _, _, line in results if line is None]
    assert results and not not_called, f"no result from: {not_called}"


@pytest.mark.deploy
def test_each_function_gives_its_overloads_result(results):
    # A call that the op refuses is refused through torch.ops too.
    compared = [(call, overload, _parsed(line), _expected(overload, python))
                for call, overload, python, line in results if overload is not None]
    for call, overload, got, expected in compared:
        assert got == expected, f"{call} gave {got}; {overload} through torch.ops gives {expected}"
    assert compared


def test_readme_names_every_function_of_the_header(header):
    # README.md's "From C++:" line lists the API's functions for a newcomer.
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    line = " ".join(readme[readme.index("From C++:"):].split("\n\n")[0].split())
    named = set(re.findall(r"`(?:torchops::)?(\w+)`", line))
    missing = sorted({declaration.name for declaration in declarations(header)} - named)
    assert not missing, f"README.md's \"From C++:\" line does not name {', '.join(missing)}: add each there"
