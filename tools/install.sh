#!/usr/bin/env bash
# install.sh PREFIX - what `ninja install` installs, from the build tree, under
# $DESTDIR$PREFIX (tests/install_test.sh stages an install with it too):
#   bin/redtune                       the program
#   share/man/man1/redtune.1          its manual page (tools/man.sh, from --help)
#   include/redtune.h                 the API
#   lib/libredtune.a, lib/libredtune.so.0 (+ libredtune.so), lib/pkgconfig/redtune.pc
#   lib/cmake/redtune/redtuneConfig.cmake, redtuneConfigVersion.cmake   find_package(redtune)
#   share/redtune/redtune.db          the default tuned database (rt_open(NULL) finds it)
set -eu
prefix=${1:?usage: install.sh PREFIX}
d="${DESTDIR:-}$prefix"
install -d "$d/bin" "$d/include" "$d/lib/pkgconfig" "$d/lib/cmake/redtune" \
    "$d/share/redtune" "$d/share/man/man1"
install -m 755 build/redtune "$d/bin/redtune"
install -m 644 build/redtune.1 "$d/share/man/man1/redtune.1"
install -m 644 include/redtune.h "$d/include/redtune.h"
install -m 644 build/libredtune.a "$d/lib/libredtune.a"
install -m 755 build/libredtune.so "$d/lib/libredtune.so.0"
ln -sf libredtune.so.0 "$d/lib/libredtune.so"
install -m 644 build/redtune.pc "$d/lib/pkgconfig/redtune.pc"
install -m 644 cmake/redtuneConfig.cmake "$d/lib/cmake/redtune/redtuneConfig.cmake"
install -m 644 build/cmake/redtuneConfigVersion.cmake \
    "$d/lib/cmake/redtune/redtuneConfigVersion.cmake"
install -m 644 build/redtune.db "$d/share/redtune/redtune.db"
echo "installed redtune into $d"
