"""torch without its CUDA packages: stand-ins for the CUDA libraries a CUDA build of torch
links, so that it imports without them (scripts/aarch64.sh, and scripts/run.sh when
TORCHOPS_CUDA_LIBRARIES=stand-ins; docs/reliability.md#aarch64).

PyPI's torch for Linux is a CUDA build: libtorch_cuda.so and its kin name libcudart.so.13,
libcublas.so.13, libnccl.so.2 and more as needed libraries, and the dynamic loader binds
every symbol when `import torch` loads them. Those packages weigh 3 GB in each environment,
and some of the pinned releases are not on every index for aarch64. torchops runs on the
CPU, so each stand-in only has to satisfy the loader: it carries the soname, the symbol
versions and the symbols that torch's libraries take from it, read off the wheel with
readelf.

Every function returns 100, which is cudaErrorNoDevice and CUDA_ERROR_NO_DEVICE: what the
real libraries answer on a machine without a GPU (torch.cuda.is_available() is then False).
The calls made while the libraries load, which register torch's GPU kernels, ignore it.
On a machine with a GPU, torch with stand-ins sees none.

Usage:
  cuda_stand_ins.py TORCH_PACKAGE SYSTEM_LIB_DIRS OUT_DIR [COMPILER]
    TORCH_PACKAGE    the installed torch/ folder
    SYSTEM_LIB_DIRS  the system's library folders, colon-separated (their libraries are
                     real, not stood in for)
    OUT_DIR          where the stand-ins go: on the library path, or torch's lib/ folder
                     (its libraries' run path has $ORIGIN)
    COMPILER         the C compiler for the machine torch runs on (default: gcc)
  cuda_stand_ins.py --requirements SITE
    prints the requirements of the torch installed in SITE but CUDA's packages, one a
    line (Triton's among them: it runs without them)
"""
import os
import re
import subprocess
import sys
import tempfile
from importlib.metadata import distributions

NO_DEVICE = 100
# The packages torch requires for its CUDA libraries (and CUDA's Python bindings).
CUDA_PACKAGES = ("cuda-", "nvidia-")
# Libraries whose symbols the loader finds for unversioned references: the C and C++ runtimes.
SYSTEM_SYMBOL_SOURCES = ["libc.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libm.so.6"]


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], check=True, capture_output=True, text=True).stdout


def elf_libraries(folder):
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if ".so" in name and os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        yield path


def dynamic_symbols(path):
    """(name, version index or None, defined?, binding, type) of each dynamic symbol."""
    for line in readelf("--dyn-syms", path).splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[0].endswith(":") and fields[7]:
            name, _, version = fields[7].partition("@")
            index = int(fields[8].strip("()")) if version and len(fields) > 8 else None
            yield name, index, fields[6] != "UND", fields[4], fields[3]


def needed_versions(path):
    """version index -> (version name, the library that must define it)."""
    versions, library = {}, None
    for line in readelf("-V", path).splitlines():
        match = re.search(r"File: (\S+)", line)
        if match:
            library = match.group(1)
        match = re.search(r"Name: (\S+)\s+Flags: \S+\s+Version: (\d+)", line)
        if match and library:
            versions[int(match.group(2))] = (match.group(1), library)
    return versions


def stand_ins(torch_package, system_lib_dirs):
    """soname -> {version name or None: {symbol: type}} for each library that neither the
    wheel nor the system has."""
    libraries = list(elf_libraries(torch_package))
    present = {os.path.basename(path) for path in libraries}
    system = {name: os.path.join(folder, name) for folder in system_lib_dirs for name in os.listdir(folder)}
    defined = set()
    for path in libraries + [system[name] for name in SYSTEM_SYMBOL_SOURCES if name in system]:
        defined.update(name for name, _, is_defined, _, _ in dynamic_symbols(path) if is_defined)
    wanted = {}
    for path in libraries:
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", readelf("-d", path))
        missing = [soname for soname in needed if soname not in present and soname not in system]
        if not missing:
            continue
        versions = needed_versions(path)
        for name, index, is_defined, binding, kind in dynamic_symbols(path):
            if is_defined or binding == "WEAK" or name in defined:
                continue
            if index in versions:  # a versioned symbol names its library
                version, soname = versions[index]
                if soname in missing:
                    wanted.setdefault(soname, {}).setdefault(version, {})[name] = kind
            else:  # an unversioned one may come from any of them: each stand-in has it
                for soname in missing:
                    wanted.setdefault(soname, {}).setdefault(None, {})[name] = kind
    return wanted


def build(soname, by_version, out_dir, scratch, compiler):
    symbols = {}
    for names in by_version.values():
        symbols.update(names)
    source = []
    for name, kind in sorted(symbols.items()):
        if kind == "TLS":
            source.append(f"__thread char {name}[256];")
        elif kind == "OBJECT":
            source.append(f"char {name}[256];")
        else:
            source.append(f"int {name}(void) {{ return {NO_DEVICE}; }}")
    c_file = os.path.join(scratch, soname + ".c")
    with open(c_file, "w") as f:
        f.write("\n".join(source) + "\n")
    command = [compiler, "-shared", "-fPIC", "-O1", "-o", os.path.join(out_dir, soname), c_file,
               "-Wl,-soname," + soname]
    versions = [version for version in by_version if version is not None]
    if versions:
        # Unversioned references bind to a default version, so they join the first node.
        script = os.path.join(scratch, soname + ".map")
        with open(script, "w") as f:
            for i, version in enumerate(versions):
                names = list(by_version[version]) + (list(by_version.get(None, {})) if i == 0 else [])
                f.write(f"{version} {{ global: {'; '.join(names)}; local: *; }};\n")
        command.append("-Wl,--version-script=" + script)
    subprocess.run(command, check=True)


def requirements_without_cuda(site):
    torch = next(d for d in distributions(path=[site]) if d.metadata["Name"] == "torch")
    for requirement in torch.requires or []:
        name = requirement.split(";")[0].strip()
        if "extra ==" not in requirement and not name.startswith(CUDA_PACKAGES):
            yield name


def main():
    if sys.argv[1] == "--requirements":
        print("\n".join(requirements_without_cuda(sys.argv[2])))
        return
    torch_package, system_lib_dirs, out_dir = sys.argv[1], sys.argv[2].split(":"), sys.argv[3]
    compiler = sys.argv[4] if len(sys.argv) > 4 else "gcc"
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for soname, by_version in sorted(stand_ins(torch_package, system_lib_dirs).items()):
            build(soname, by_version, out_dir, scratch, compiler)
            print(f"cuda_stand_ins.py: {soname} ({sum(map(len, by_version.values()))} symbols)")


if __name__ == "__main__":
    main()
