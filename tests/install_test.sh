#!/usr/bin/env bash
# install_test.sh - `ninja install` into a staging directory (tools/install.sh with DESTDIR,
# under build/install-test), then: the installed program runs; its manual page carries every
# option of its --help; examples/cmake builds with CMake against the staged prefix
# (find_package(redtune), redtune::redtune) and runs; a find_package asking for another
# major version is refused. One TAP line per check; tests/run.sh counts them.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
work=build/install-test
prefix=/opt/redtune-test
root="$top/$work/root"
n=0
tap() {  # tap STATUS NAME [SKIP REASON]
    n=$((n + 1))
    if [ -n "${3:-}" ]; then echo "not ok $n - install: $2 # SKIP $3"
    elif [ "$1" -eq 0 ]; then echo "ok $n - install: $2"
    else echo "not ok $n - install: $2"; fi
}

rm -rf "$work" && mkdir -p "$work"
DESTDIR="$root" tools/install.sh "$prefix" > "$work/install.log" 2>&1
tap $? "tools/install.sh into DESTDIR (see $work/install.log)"
p="$root$prefix"

"$p/bin/redtune" --version | grep -qx "redtune $(build/redtune --version | awk '{print $2}')"
tap $? "bin/redtune --version"

# Every option and command of --help is a tagged paragraph of the manual page.
missing=
for opt in $(build/redtune --help | sed -n 's/^  \([^ ][^ ]*\).*/\1/p'); do
    grep -qF "\\fB$(printf '%s' "$opt" | sed 's/-/\\-/g')" "$p/share/man/man1/redtune.1" ||
        missing="$missing $opt"
done
[ -z "$missing" ] || echo "# not in redtune.1:$missing"
[ -z "$missing" ]
tap $? "share/man/man1/redtune.1 has every option of --help"

if ! command -v cmake > /dev/null 2>&1; then
    tap 1 "examples/cmake with find_package(redtune)" "no cmake (./configure --install-deps)"
    tap 1 "find_package(redtune 1.0) is refused" "no cmake"
    exit 0
fi
cmake -S examples/cmake -B "$work/app" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_BUILD_TYPE=Release \
    > "$work/cmake.log" 2>&1 && cmake --build "$work/app" >> "$work/cmake.log" 2>&1 &&
    "$work/app/redtune_example" > "$work/app.out" 2>&1 &&
    grep -q "^redtune .*: sum prod min max argmin argmax amax asum sumsq norm2 mean var_mean var_mean_sample std_mean std_mean_sample; f32 f64 i32 u32 i64 u64 f16 bf16 i8 u8$" "$work/app.out"
st=$?
[ $st -eq 0 ] || { tail -20 "$work/cmake.log"; cat "$work/app.out" 2>/dev/null; }
tap $st "examples/cmake builds with find_package(redtune) against the staged prefix and runs"
# The program loaded the staged library (the build tree's RPATH names it), not another one.
ldd "$work/app/redtune_example" | grep -q "$p/lib/libredtune.so.0"
tap $? "examples/cmake links $prefix/lib/libredtune.so.0"

mkdir -p "$work/v2"
printf 'cmake_minimum_required(VERSION 3.13)\nproject(v C)\nfind_package(redtune 1.0 REQUIRED)\n' \
    > "$work/v2/CMakeLists.txt"
cmake -S "$work/v2" -B "$work/v2/b" -DCMAKE_PREFIX_PATH="$p" > "$work/v2.log" 2>&1
[ $? -ne 0 ] && grep -q 'version: 0.1' "$work/v2.log"
tap $? "find_package(redtune 1.0) is refused by redtuneConfigVersion.cmake"
exit 0
