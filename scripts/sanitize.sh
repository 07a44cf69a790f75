#!/usr/bin/env bash
# The test suite under sanitizers:
#   bash scripts/sanitize.sh [undefined|address,undefined] [pytest args]     (default: undefined)
# Builds an instrumented copy of torchops (the operator library and the Python binding) in
# build/sanitize/<sanitizers>/lib (apart from the in-place build in torchops/, which stays as
# it is), runs tests/ against that copy with the sanitizer runtime preloaded into Python,
# and fails if pytest fails or if any process of the run (the tests start Python
# subprocesses too) wrote a sanitizer report. Needs .venv (made
# by scripts/run.sh). One run covers every kernel level: the suite sweeps them in-process.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=$root/${TORCHOPS_VENV:-.venv}/bin/python
sanitize=${1:-undefined}
shift || true
case "$sanitize" in
  undefined | address,undefined) ;;
  *) echo "usage: scripts/sanitize.sh [undefined|address,undefined] [pytest args]" >&2; exit 2 ;;
esac
if [ ! -x "$python" ]; then
  echo "sanitize: no $python; run 'bash scripts/run.sh test' once to set up the environment" >&2
  exit 2
fi

dir=$root/build/sanitize/${sanitize/,/-}
lib=$dir/lib
mkdir -p "$dir"
echo "Building torchops with -fsanitize=$sanitize into $lib (1 to 2 minutes the first time)..."
# --force only stops setuptools from skipping the step on the .so's date (which ignores the
# headers); ninja still recompiles just the objects whose sources or headers changed.
TORCHOPS_SANITIZE=$sanitize "$python" setup.py --quiet build_py --build-lib "$lib" \
  build_ext --build-lib "$lib" --build-temp "$dir/temp" --force >"$dir.log" 2>&1 \
  || { cat "$dir.log" >&2; echo "sanitize: the build failed" >&2; exit 1; }
# Both extensions: the operator library (_C) and the Python binding (_binding).
for extension in "$lib"/torchops/_C*.so "$lib"/torchops/_binding*.so; do
  symbols=$(nm -D --undefined-only "$extension")
  if ! grep -q __ubsan_handle_ <<<"$symbols" || { [[ $sanitize == *address* ]] && ! grep -q __asan_init <<<"$symbols"; }; then
    echo "sanitize: $extension lacks the $sanitize instrumentation" >&2
    exit 1
  fi
done

runtimes=()
[[ $sanitize == *address* ]] && runtimes+=("$(g++ -print-file-name=libasan.so)")
runtimes+=("$(g++ -print-file-name=libubsan.so)")
for runtime in "${runtimes[@]}"; do
  [ -f "$runtime" ] || { echo "sanitize: g++ does not know where $runtime is" >&2; exit 1; }
done

# Every process of the run writes its reports to $reports/<tool>.<pid>, so that a report
# from a subprocess whose failure a test expects (a refused TORCHOPS_CPU_CAPABILITY) is
# not lost. detect_leaks=0: CPython and PyTorch keep their allocations until exit by design.
# allocator_may_return_null=1: a request beyond memory fails as malloc's NULL, as without ASan
# (the hostile tests ask for results no memory holds; ASan would abort the process instead).
reports=$dir/reports
rm -rf "$reports"
mkdir -p "$reports"
export LD_PRELOAD="${runtimes[*]}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0:allocator_may_return_null=1:log_path=$reports/asan"
# The sanitized copy first on sys.path, and PYTHONSAFEPATH=1 so that neither pytest nor a
# test's `python -c` subprocess puts the checkout (and its torchops/) in front of it; the
# venv's editable install of the normal build only answers after sys.path.
export PYTHONPATH=$lib${PYTHONPATH:+:$PYTHONPATH}
export PYTHONSAFEPATH=1
export TORCHOPS_SANITIZED_LIB=$lib

status=0
# The plugin checks, once the tests are collected (conftest has imported torchops), that
# the torchops extensions mapped into this process (the library and the binding) are the
# sanitized copies, and that the sanitizer runtime is there too.
# -m 'not deploy': those tests build C++ programs against the library (a sanitized one
# would need the sanitizer runtime at link time) and test packaging, not the kernels. A
# later -m among the arguments replaces it.
"$python" - tests -p no:cacheprovider -m "not deploy" "$@" <<'EOF' || status=$?
import os, sys
import pytest

class SanitizedLibraryCheck:
    def pytest_collection_finish(self, session):
        import torchops
        from torchops import _binding
        lib = os.path.realpath(os.environ["TORCHOPS_SANITIZED_LIB"])
        mapped = {line.split()[-1] for line in open("/proc/self/maps") if "/" in line}
        loaded = {path for path in mapped if path.split(os.sep)[-2:-1] == ["torchops"] and ".so" in path}
        runtimes = {os.path.basename(path) for path in mapped if "/libubsan.so" in path or "/libasan.so" in path}
        expected = {os.path.realpath(torchops._library_path), os.path.realpath(_binding.__file__)}
        if not all(path.startswith(lib + os.sep) for path in expected) or loaded != expected or not runtimes \
                or torchops.call_path() != "binding":
            pytest.exit(f"sanitize: wrong torchops extensions: expected {sorted(expected)} in {lib} and the "
                        f"binding in use ({torchops.call_path()}), mapped {sorted(loaded)}, "
                        f"sanitizer runtimes {sorted(runtimes)}", returncode=3)
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_line(f"sanitize: testing {', '.join(sorted(expected))} with {', '.join(sorted(runtimes))}")

sys.exit(pytest.main(sys.argv[1:], plugins=[SanitizedLibraryCheck()]))
EOF

if [ -n "$(ls -A "$reports")" ]; then
  cat "$reports"/* >&2
  echo "sanitize: sanitizer reports above (also in $reports)" >&2
  exit 1
fi
if [ "$status" -eq 5 ]; then
  echo "sanitize: pytest collected no tests" >&2
fi
exit "$status"
