#!/usr/bin/env bash
# run.sh DIR [cpu|gpu] - run the test binary of a build variant from the repository root and
# print the closing line "N passed, N failed, N skipped". Exit status 1 when anything failed.
set -u
dir=${1:-build}
filter=${2:-}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
export REDTUNE_BIN="$top/$dir/redtune"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
CMOCKA_MESSAGE_OUTPUT=TAP "$dir/tests/all" $filter 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# The templates under nvcc (build.ninja sets RT_TEMPLATES): one TAP line per family.
templates=${RT_TEMPLATES:-no}
[ "$templates" != no ] && [ -n "${CHECK_TEMPLATES:-}" ] && templates=$CHECK_TEMPLATES
if [ "$templates" = quick ] || [ "$templates" = full ]; then
    tlog=$(mktemp)
    REDTUNE="$REDTUNE_BIN" tools/check_templates.sh --tap $([ "$templates" = quick ] && echo --quick) \
        >"$tlog" 2>&1
    tstatus=$?
    cat "$tlog" | tee -a "$log"
    if [ "$tstatus" != 0 ] && [ "$tstatus" != 2 ] && ! grep -qE '^not ok [0-9]+' "$tlog"; then
        echo "not ok 0 - tools/check_templates.sh exited with status $tstatus" | tee -a "$log"
    fi
    rm -f "$tlog"
fi
# The whole suite of the normal build (`ninja test`) ends with what the shared and static
# libraries export, an application linking the static one, what libredtune carries (no
# database writes, no Lua), tools/ship_into_row.py with merge, axis_cols' IL = 2 unsplit
# compiled as IL = 1 (NVRTC; skipped without it), every shape of the segmented harness
# through NVRTC (tools/check_seg_harness.sh), the shipped database's report
# in a headless browser where Chromium is installed, the short fuzzing runs and a staged
# install (CMake example, man page).
if [ "$dir" = build ] && [ -z "$filter" ]; then
    tools/check_exports.sh 2>&1 | tee -a "$log"
    tools/check_exports.sh build/libredtune.a 2>&1 | tee -a "$log"
    tools/check_static_link.sh 2>&1 | tee -a "$log"
    tools/check_runtime.sh 2>&1 | tee -a "$log"
    python3 tools/check_ship_into_row.py "$REDTUNE_BIN" 2>&1 | tee -a "$log"
    python3 tools/check_axis_il_ptx.py "$REDTUNE_BIN" 2>&1 | tee -a "$log"
    tools/check_seg_harness.sh 2>&1 | tee -a "$log"
    tools/check_report_browser.sh 2>&1 | tee -a "$log"
    tests/fuzz/run.sh 2>&1 | tee -a "$log"
    tests/install_test.sh 2>&1 | tee -a "$log"
fi
# The Python package (python/tests with pytest, over build/python that `ninja python` stages):
# a TAP line per test through the rt_tap plugin; test_gpu*.py skip without a GPU, torch, CuPy.
if [ "$dir" = build ]; then
    case "$filter" in
        cpu) pytests="python/tests/test_cpu_*.py" ;;
        gpu) pytests="python/tests/test_gpu*.py" ;;
        *) pytests=python/tests ;;
    esac
    py=
    for p in ${PYTHON:-} python3 /usr/bin/python3; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import pytest' 2>/dev/null; then
            py=$p
            break
        fi
    done
    if [ -z "$py" ]; then
        echo "not ok 0 - python: $pytests # SKIP no python3 with pytest (python3-pytest)" | tee -a "$log"
    else
        plog=$(mktemp)
        PYTHONPATH="$top/build/python:$top/python/tests${PYTHONPATH:+:$PYTHONPATH}" \
            PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 REDTUNE_TAP="$plog" "$py" -m pytest -q -p rt_tap -p no:cacheprovider $pytests \
            > "$plog.out" 2>&1
        pstatus=$?
        cat "$plog" | tee -a "$log"
        # A pytest that fails without a failed test (a collection error): show it, count it.
        pfailed=$(grep -E '^not ok [0-9]+' "$plog" | grep -cv '# SKIP')
        if [ "$pstatus" != 0 ] && [ "$pstatus" != 5 ] && [ "$pfailed" -eq 0 ]; then
            cat "$plog.out"
            echo "not ok 0 - python: pytest exited with status $pstatus" | tee -a "$log"
        fi
        rm -f "$plog" "$plog.out"
    fi
fi
passed=$(grep -cE '^ok [0-9]+' "$log")
skipped=$(grep -cE '^not ok [0-9]+ # SKIP' "$log")
failed=$(grep -E '^not ok [0-9]+' "$log" | grep -cv '# SKIP')
# A crash leaves no "not ok" line for the test that died: count it.
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    echo "# the test binary exited with status $status"
    failed=1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
