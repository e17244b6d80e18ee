#!/usr/bin/env bash
# device_prep.sh - before a device run: build, and put next to the build the one shared library
# the test binary needs that the GPU machines (Ubuntu 24.04) lack (libcmocka.so.0).
set -eu
cd "$(dirname "$0")/.."
ninja
mkdir -p build/devlib
cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 build/devlib/
