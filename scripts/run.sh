#!/usr/bin/env bash
# One script for newcomers and CI. Sets up a virtual environment with one torch release
# of requirements-torch.txt and the tools of requirements-dev.txt, builds torchops (its two
# extensions) into it when a source changed, then runs:
#   demo            the specifications' worked examples through the ops, then the quick benchmark (the default)
#   test [ARGS]     the whole test suite; ARGS go to pytest
#   setup           only the set-up (the environment and the build)
#   remove          delete the environment (CI frees the disk of each it is done with)
# Which torch and which Python:
#   TORCHOPS_TORCH=2.15          a release of requirements-torch.txt (default: its first line)
#   TORCHOPS_PYTHON=3.12         the Python to make the environment with: a version (python3.12
#                                on PATH, else pyenv's) or a command (default: python3)
# The default pair lives in .venv, with an editable install: the checkout's torchops/ is the
# package. Any other pair lives in .venv-torch<release>-py<python>, with torchops installed
# into it as a user installs a release (a wheel built from the sdist); its tests
# run from inside that folder, so that no process of theirs finds the checkout's torchops/
# (built for the default torch) on sys.path before the installed one.
# TORCHOPS_VENV names the environment's folder instead.
# TORCHOPS_CUDA_LIBRARIES=stand-ins: a CUDA build of torch without CUDA's packages (3 GB of
# each such environment), with stand-ins for its libraries that answer "no device"
# (scripts/cuda_stand_ins.py): for a machine without a GPU that keeps several environments,
# as CI does. The default, "packages", installs torch as a user does.
# (All in one function: bash reads it whole before running it, so editing this file
# cannot change a run already under way.)
set -euo pipefail

main() {
  cd "$(dirname "$0")/.."
  job=${1:-demo}
  shift || true
  case "$job" in
    demo | test | setup | remove) ;;
    *) echo "usage: scripts/run.sh [demo|test [pytest args]|setup|remove]" >&2; exit 2 ;;
  esac
  cuda_libraries=${TORCHOPS_CUDA_LIBRARIES:-packages}
  case "$cuda_libraries" in
    packages | stand-ins) ;;
    *) echo "run.sh: TORCHOPS_CUDA_LIBRARIES=$cuda_libraries: neither packages nor stand-ins" >&2; exit 2 ;;
  esac

  pins=$(grep '^torch==' requirements-torch.txt)
  default_pin=$(head -n 1 <<<"$pins")
  pin=$default_pin
  if [ -n "${TORCHOPS_TORCH:-}" ]; then
    release=$(cut -d. -f1,2 <<<"$TORCHOPS_TORCH")
    pin=$(grep -F "torch==$release." <<<"$pins" || true)
    if [ -z "$pin" ]; then
      echo "run.sh: TORCHOPS_TORCH=$TORCHOPS_TORCH is not a supported release; requirements-torch.txt has:" $pins >&2
      exit 2
    fi
  fi
  torch_version=$(cut -d= -f3 <<<"$pin")
  release=$(cut -d. -f1,2 <<<"$torch_version")

  interpreter=${TORCHOPS_PYTHON:-python3}
  if [[ $interpreter =~ ^[0-9]+\.[0-9]+$ ]]; then
    version=$interpreter
    interpreter=
    # pyenv's shim for python3.12 is on PATH even where it cannot run that version.
    for candidate in "python$version" $(ls -d "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/"$version"*/bin/"python$version" 2>/dev/null); do
      if "$candidate" -c '' >/dev/null 2>&1; then
        interpreter=$candidate
        break
      fi
    done
    if [ -z "$interpreter" ]; then
      echo "run.sh: TORCHOPS_PYTHON=$version: no python$version on PATH or in pyenv" >&2
      exit 2
    fi
  fi
  python_version=$("$interpreter" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

  if [ "$pin" = "$default_pin" ] && [ -z "${TORCHOPS_PYTHON:-}" ]; then
    default_venv=.venv
    editable=yes
  else
    default_venv=.venv-torch$release-py$python_version
    editable=no
  fi
  venv=${TORCHOPS_VENV:-$default_venv}
  if [ "$job" = remove ]; then
    echo "Removing $venv..."
    rm -rf "$venv"
    return
  fi
  if [ ! -x "$venv/bin/python" ]; then
    echo "Making $venv (torch $torch_version, Python $python_version)..."
    "$interpreter" -m venv "$venv"
  fi
  venv=$(cd "$venv" && pwd)
  python=$venv/bin/python
  # torch pinned beside the tools, in one resolve: pip never picks a torch of its own (an
  # unpinned one would pull a multi-GB CUDA build).
  if [ "$cuda_libraries" = packages ]; then
    "$python" -m pip install --quiet --disable-pip-version-check "$pin" -r requirements-dev.txt
  else
    # torch alone, then its other requirements with the tools (a resolve that saw torch's
    # requirements would take CUDA's packages), then the stand-ins in torch's lib/ folder,
    # which its libraries' run path names ($ORIGIN). A CPU build needs none: none are made.
    "$python" -m pip install --quiet --disable-pip-version-check --no-deps "$pin"
    site=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
    "$python" -m pip install --quiet --disable-pip-version-check --no-warn-conflicts \
      $("$python" scripts/cuda_stand_ins.py --requirements "$site") -r requirements-dev.txt
    multiarch=$(gcc -print-multiarch)
    "$python" scripts/cuda_stand_ins.py "$site/torch" "/usr/lib/$multiarch:/lib/$multiarch" "$site/torch/lib" >/dev/null
  fi

  # Rebuild when either extension (the operator library _C, the Python binding _binding) is
  # missing, or when the sources (an installed, not editable, package's Python files among
  # them) are not those of the last successful build: the manifest it recorded, every
  # source's path, size and time, taken before it started, so that a source added or edited
  # while a build ran (older than the library that build wrote, and never compiled by it)
  # makes the next set-up build again. A source newer than the library differs from the
  # manifest too.
  if [ "$editable" = yes ]; then
    package=torchops
    sources=(csrc binding setup.py requirements-torch.txt)
  else
    package=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')/torchops
    sources=(csrc binding setup.py requirements-torch.txt torchops)
  fi
  stale=no
  for extension in _C _binding; do
    [ -n "$(ls "$package"/$extension*.so 2>/dev/null)" ] || stale=yes
  done
  # Not sources: what builds write there (the editable build's _build_info.py would mark
  # every installed configuration stale).
  manifest=$venv/torchops-build-sources.txt
  sources_now=$(find "${sources[@]}" -not -type d -not -name '*.so' -not -name '*.pyc' -not -name _build_info.py \
    -printf '%p %s %T@\n' | LC_ALL=C sort)
  [ "$sources_now" = "$(cat "$manifest" 2>/dev/null || true)" ] || stale=yes
  if [ "$stale" = yes ] || ! "$python" -m pip show --quiet torchops >/dev/null 2>&1; then
    echo "Building torchops against torch $torch_version (a few minutes)..."
    # --no-build-isolation: build against the torch installed above, not a fresh unpinned one.
    if [ "$editable" = yes ]; then
      "$python" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps -e .
    else
      # As a user installs a release: a wheel built from the sdist, kept in $venv/dist, where
      # test_packaging takes it (TORCHOPS_TEST_WHEEL below) instead of building a second one.
      # The sdist's egg-info goes there too: nothing is written into the checkout, so that
      # two configurations can set up side by side.
      dist=$venv/dist
      rm -rf "$dist"
      mkdir -p "$dist"
      "$python" setup.py --quiet egg_info --egg-base "$dist" sdist --dist-dir "$dist" >"$dist/sdist.log" 2>&1 \
        || { cat "$dist/sdist.log" >&2; echo "run.sh: making the sdist failed" >&2; exit 1; }
      "$python" -m pip wheel --quiet --disable-pip-version-check --no-build-isolation --no-deps -w "$dist" "$dist"/torchops-*.tar.gz
      "$python" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$dist"/torchops-*.whl
    fi
    printf '%s\n' "$sources_now" >"$manifest"
  fi

  case "$job" in
    demo)
      # matplotlib draws the benchmark's plot; only the demo needs it.
      "$python" -m pip install --quiet --disable-pip-version-check -r benchmarks/requirements.txt
      "$python" examples/demo.py
      echo
      exec "$python" benchmarks/bench.py --quick "$@" ;;
    test)
      # The whole of tests/ unless paths are given (tests/test_x.py::name, the checkout's).
      root=$PWD
      args=()
      paths=no
      for arg in "$@"; do
        if [[ $arg != -* && -e ${arg%%::*} ]]; then arg=$root/$arg; paths=yes; fi
        args+=("$arg")
      done
      [ "$paths" = yes ] || args=("$root/tests" ${args[@]+"${args[@]}"})
      # One test process per core (pytest-xdist, a file's tests in one process: their module
      # fixtures are made once; the files handed out in the order of collection, which puts
      # the longest first: tests/conftest.py), unless TORCHOPS_TEST_WORKERS says otherwise;
      # CI's lanes run one each, two side by side. OpenMP threads that finish a parallel
      # region then sleep instead of spinning on the cores the other processes need.
      workers=${TORCHOPS_TEST_WORKERS:-$(nproc)}
      if [ "$workers" -gt 1 ]; then
        args=(-n "$workers" --dist loadfile --no-loadscope-reorder "${args[@]}")
        export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
      fi
      if [ "$editable" = no ]; then
        wheel=$(ls "$venv"/dist/torchops-*.whl 2>/dev/null || true)
        [ -z "$wheel" ] || export TORCHOPS_TEST_WHEEL=$wheel
        cd "$venv"
      fi
      exec "$python" -m pytest "${args[@]}" ;;
    setup) ;;
  esac
}

main "$@"
