#!/usr/bin/env bash
# torchops for 64-bit Arm Linux (aarch64), from this x86-64 machine: both extensions
# cross-compiled by Debian's g++-aarch64-linux-gnu against torch's aarch64 wheel, and the
# tests run by an arm64 Python under qemu-user emulation (docs/reliability.md#aarch64).
#   setup          the emulated environment, then the build: a wheel, from the sdist
#   wheel          setup, then print the wheel's path
#   test [ARGS]    setup, then CI's selection under emulation (below); ARGS go to pytest
#                  (paths given, tests/x.py::name, run instead of the selection)
#   test-wide      setup, then the larger selection (below)
# Which torch: TORCHOPS_TORCH=2.15, a release of requirements-torch.txt (default: its first
# line). Everything it makes is under build/aarch64/:
#   sysroot/                    Debian's arm64 Python 3.11 with its libraries (unpacked by
#                               debootstrap's first stage: nothing of it runs to install it)
#   torch-<version>/site/       torch's aarch64 wheel without its CUDA packages, the wheels
#                               it needs, and requirements-dev.txt's test and build tools
#   torch-<version>/cuda/       stand-ins for the CUDA libraries torch links (scripts/cuda_stand_ins.py)
#   torch-<version>/bin/python  the emulated Python: a host script, so that tests can start
#                               sys.executable without binfmt_misc
#   torch-<version>/bin/c++     the cross compiler, as the emulated machine's C++ compiler
#   torch-<version>/dist/       the sdist, the wheel built from it, the build's log
#   torch-<version>/torchops/   that wheel, installed
# Debian's packages it needs (g++-aarch64-linux-gnu, qemu-user-static, debootstrap) are
# installed with apt-get when missing.
# (All in one function: bash reads it whole before running it, so editing this file
# cannot change a run already under way.)
set -euo pipefail

main() {
  cd "$(dirname "$0")/.."
  root=$PWD
  job=${1:-test}
  shift || true
  case "$job" in
    setup | wheel | test | test-wide) ;;
    *) echo "usage: scripts/aarch64.sh [setup|wheel|test [pytest args]|test-wide]" >&2; exit 2 ;;
  esac

  # The CI selection, on the compiled binding's call path (the torch.ops path adds only
  # Python, the same on every architecture). Under emulation a test takes tens of times
  # longer than here, and one that starts a Python spends about 15 s in `import torch`, so
  # it holds what a new architecture can break, sampled (of a test function with more than 24
  # parametrizations, one in 128 and every value of each parameter of few values (tests/conftest.py): beyond and one_in below; the others whole):
  #   the kernel suites, the test files that carry the `kernels` marker, which .ci/run selects
  #   by it too, so that a new op's suite joins with no edit here (the kernels' answers, every
  #   8- and 16-bit value where a suite sweeps them, the loops' tails at every size and offset
  #   and the row driver's layouts, the contract's examples, errors and hostile inputs); found
  #   by grep rather than pytest's -m, which would leave out the unmarked tests named below
  #   the kernel level's names and detection (test_dispatch), the compiled binding, the
  #   fake kernels and opcheck, TorchScript, and a compiled graph (the generated C++,
  #   compiled for aarch64)
  kernel_suites=($(grep -l 'pytest\.mark\.kernels' tests/test_*.py))
  selection=(
    "${kernel_suites[@]}" tests/test_dispatch.py tests/test_binding.py
    tests/test_torch_integration.py::test_opcheck tests/test_torch_integration.py::test_fake_kernel_output_metadata_matches_real
    tests/test_torchscript.py::test_typed_api_scripted_gives_the_models_answers_and_eagers
    tests/test_torchscript.py::test_typed_api_scripted_on_every_8bit_pair
    tests/test_inductor.py::test_direction_spellings_and_paddle_names
  )
  # test_binding's tests that start a Python to check what an import does (the same Python
  # code on every architecture) are left to the larger selection.
  slow="test_torchops_call_path_environment_variable or test_without_the_binding_module_torchops_works_through_torch_ops"
  slow="not ($slow or test_import_torchops_does_not_import_dynamo_and_compile_still_works)"
  beyond=24
  one_in=128
  # The larger selection: the same suites whole (sampled and on the binding's path as
  # above), compiled graphs included; what needs a GPU, ONNX, C++ programs built for the
  # host (test_deploy, test_onnx, test_packaging) or gigabytes (test_huge) is left out.
  wide=("${kernel_suites[@]}" tests/test_dispatch.py tests/test_binding.py tests/test_torch_integration.py
        tests/test_torchscript.py tests/test_inductor.py tests/test_inductor_ops.py)

  pins=$(grep '^torch==' requirements-torch.txt)
  pin=$(head -n 1 <<<"$pins")
  if [ -n "${TORCHOPS_TORCH:-}" ]; then
    pin=$(grep -F "torch==$(cut -d. -f1,2 <<<"$TORCHOPS_TORCH")." <<<"$pins" || true)
    if [ -z "$pin" ]; then
      echo "aarch64.sh: TORCHOPS_TORCH=$TORCHOPS_TORCH is not a supported release; requirements-torch.txt has:" $pins >&2
      exit 2
    fi
  fi
  torch_version=$(cut -d= -f3 <<<"$pin")

  # The CPU emulated: a Neoverse N1 (AWS Graviton 2, Ampere Altra), a real server CPU,
  # rather than qemu's "max", which has every optional feature at once.
  cpu=neoverse-n1
  base=$root/build/aarch64
  sysroot=$base/sysroot
  env=$base/torch-$torch_version
  python=$env/bin/python
  mkdir -p "$base"
  # The host's tools and the sysroot are shared by every release's environment: one run at
  # a time sets them up (CI builds for two releases side by side).
  exec 8>"$base/setup.lock"
  flock 8

  # ---- the host's tools --------------------------------------------------------------
  packages=()
  command -v aarch64-linux-gnu-g++ >/dev/null || packages+=(g++-aarch64-linux-gnu)
  command -v qemu-aarch64-static >/dev/null || packages+=(qemu-user-static)
  command -v debootstrap >/dev/null || packages+=(debootstrap)
  command -v ninja >/dev/null || packages+=(ninja-build)  # the build runs the host's ninja
  if [ ${#packages[@]} -gt 0 ]; then
    echo "Installing ${packages[*]} (Debian's packages)..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
  fi

  # ---- the emulated system: Debian's arm64 Python ------------------------------------
  # libubsan1: the runtime of what the cross compiler builds with -fsanitize=undefined
  # (test_inductor's test_generated_code_has_no_undefined_behaviour); a sysroot made
  # without it is made again.
  if [ ! -x "$sysroot/usr/bin/python3.11" ] || [ ! -e "$sysroot/usr/lib/aarch64-linux-gnu/libubsan.so.1" ]; then
    echo "Making $sysroot (Debian's arm64 Python 3.11)..."
    rm -rf "$sysroot"
    # --foreign: only download and unpack (the second stage would run arm64 programs).
    # The first stage unpacks the base system; the packages asked for it leaves in apt's
    # cache, so they are unpacked here.
    debootstrap --foreign --arch=arm64 --variant=minbase --include=python3.11,libpython3.11-dev,libgomp1,libubsan1 \
      bookworm "$sysroot" http://deb.debian.org/debian >"$base/debootstrap.log" 2>&1 \
      || { tail -n 20 "$base/debootstrap.log" >&2; echo "aarch64.sh: debootstrap failed" >&2; exit 1; }
    for deb in "$sysroot"/var/cache/apt/archives/*.deb; do dpkg -x "$deb" "$sysroot"; done
    # qemu-user serves the emulated programs the files under the sysroot first: without an
    # aarch64 /proc/cpuinfo they read the host's x86 one, and cpuinfo (in torch) crashes
    # parsing it. This one describes the CPU emulated (a Neoverse N1), once per host CPU.
    mkdir -p "$sysroot/proc"
    for ((processor = 0; processor < $(nproc); processor++)); do
      printf 'processor\t: %d\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n' "$processor"
    done >"$sysroot/proc/cpuinfo"
    # Debian's pyconfig.h includes <aarch64-linux-gnu/python3.11/pyconfig.h>: a folder that
    # holds only that, for the cross compiler (the sysroot's whole include folder would put
    # its C library's headers before the compiler's own).
    mkdir -p "$base/python-include/aarch64-linux-gnu"
    ln -sfn "$sysroot/usr/include/aarch64-linux-gnu/python3.11" "$base/python-include/aarch64-linux-gnu/python3.11"
  fi
  flock -u 8

  # ---- torch for aarch64 and the tools -----------------------------------------------
  if [ ! -f "$env/site/torch/version.py" ] || ! grep -q "__version__ = '$torch_version" "$env/site/torch/version.py"; then
    echo "Making $env (torch $torch_version for aarch64)..."
    rm -rf "$env"
    mkdir -p "$env/bin"
    # pip 23 matches --platform exactly: name every manylinux tag an aarch64 wheel of
    # these packages may carry, or some of them do not resolve.
    platform=()
    for tag in manylinux_2_28 manylinux_2_27 manylinux_2_26 manylinux_2_24 manylinux_2_17 manylinux2014; do
      platform+=(--platform "${tag}_aarch64")
    done
    target=(python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$env/site" --only-binary=:all:
            --python-version 3.11 --implementation cp "${platform[@]}")
    "${target[@]}" --no-deps "$pin"
    # torch's requirements but its GPU packages (CUDA's, which the stand-ins below replace,
    # and Triton, which only GPU code uses); requirements-dev.txt's tools but ninja (the
    # build runs the host's) and the ONNX ones (not in the emulated selections).
    torch_requirements=$(python3 scripts/cuda_stand_ins.py --requirements "$env/site" | grep -v '^triton')
    tools=$(sed -n '/^# onnx/q; /^[a-z]/p' requirements-dev.txt | grep -v '^ninja=')
    "${target[@]}" --upgrade $torch_requirements $tools
    python3 scripts/cuda_stand_ins.py "$env/site/torch" "$sysroot/usr/lib/aarch64-linux-gnu:$sysroot/lib/aarch64-linux-gnu" \
      "$env/cuda" aarch64-linux-gnu-gcc >/dev/null
  fi

  # The C++ compiler of the emulated machine (torch.compile's generated code, the build):
  # the cross compiler, with -march=native (which Inductor passes) meaning the emulated
  # CPU; the cross compiler itself would read the host's /proc/cpuinfo.
  cat >"$env/bin/c++" <<EOF
#!/bin/sh
# aarch64-linux-gnu-g++ as the emulated machine's compiler (scripts/aarch64.sh).
for arg; do shift; [ "\$arg" = -march=native ] && arg=-mcpu=$cpu; set -- "\$@" "\$arg"; done
exec aarch64-linux-gnu-g++ "\$@"
EOF
  # qemu -0 makes argv[0], and so sys.executable, this script. CPLUS_INCLUDE_PATH: the
  # Python headers' pyconfig.h (python-include, above).
  cat >"$python" <<EOF
#!/bin/sh
# Python 3.11 for aarch64 with torch $torch_version, emulated (scripts/aarch64.sh).
export PYTHONHOME="$sysroot/usr" PYTHONPATH="$env/torchops:$env/site" LD_LIBRARY_PATH="$env/cuda" QEMU_CPU=$cpu \\
     CXX="$env/bin/c++" CPLUS_INCLUDE_PATH="$base/python-include"
exec qemu-aarch64-static -L "$sysroot" -0 "\$0" "$sysroot/usr/bin/python3.11" "\$@"
EOF
  chmod +x "$python" "$env/bin/c++"

  # ---- the build: a wheel from the sdist, as a user installs a release ---------------
  dist=$env/dist
  wheel=$(ls "$dist"/torchops-*.whl 2>/dev/null || true)
  if [ -z "$wheel" ] || [ -n "$(find csrc binding setup.py requirements-torch.txt torchops -newer "$wheel" -not -name '*.so' -not -name '*.pyc' -print -quit)" ] \
     || [ ! -d "$env/torchops/torchops" ]; then
    echo "Building torchops for aarch64 against torch $torch_version (a few minutes)..."
    rm -rf "$dist" "$env/torchops"
    mkdir -p "$dist/source"
    "$python" setup.py --quiet egg_info --egg-base "$dist" sdist --dist-dir "$dist" >"$dist/sdist.log" 2>&1 \
      || { cat "$dist/sdist.log" >&2; echo "aarch64.sh: making the sdist failed" >&2; exit 1; }
    tar -xzf "$dist"/torchops-*.tar.gz -C "$dist/source"
    # The emulated Python runs setup.py; the compilers it starts are the host's cross
    # compilers (Debian's arm64 Python links with aarch64-linux-gnu-gcc, as the host's is
    # called; C++ is compiled by bin/c++). The Python headers come from the sysroot, ahead
    # of the host's /usr/include/python3.11 (x86's), which setuptools names too.
    (cd "$dist"/source/torchops-* \
      && CPPFLAGS="-I$sysroot/usr/include/python3.11 -I$base/python-include" \
         "$python" setup.py bdist_wheel --dist-dir "$dist") >"$dist/build.log" 2>&1 \
      || { tail -n 30 "$dist/build.log" >&2; echo "aarch64.sh: the build failed (log: $dist/build.log)" >&2; exit 1; }
    if grep -q ': warning:' "$dist/build.log"; then
      grep -A3 ': warning:' "$dist/build.log" >&2
      echo "aarch64.sh: the build gave compiler warnings (log: $dist/build.log)" >&2
      exit 1
    fi
    rm -rf "$dist/source"
    wheel=$(ls "$dist"/torchops-*.whl)
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$env/torchops" \
      --platform linux_aarch64 --only-binary=:all: "$wheel"
  fi

  case "$job" in
    wheel) echo "$wheel" ;;
    test | test-wide)
      args=()
      paths=no
      for arg in "$@"; do
        if [[ $arg != -* && -e ${arg%%::*} ]]; then arg=$root/$arg; paths=yes; fi
        args+=("$arg")
      done
      export TORCHOPS_TEST_SAMPLED=1 TORCHOPS_TEST_SAMPLED_BEYOND=$beyond TORCHOPS_TEST_SAMPLED_ONE_IN=$one_in \
             TORCHOPS_TEST_CALL_PATHS=binding
      if [ "$paths" = no ] && [ "$job" = test ]; then
        args=("${selection[@]/#/$root/}" -k "$slow" ${args[@]+"${args[@]}"})
      elif [ "$paths" = no ]; then
        args=("${wide[@]/#/$root/}" ${args[@]+"${args[@]}"})
      fi
      # From outside the checkout, so that no process finds its torchops/ (built for x86).
      cd "$env"
      exec "$python" -m pytest ${args[@]+"${args[@]}"} ;;
    setup) ;;
  esac
}

main "$@"
