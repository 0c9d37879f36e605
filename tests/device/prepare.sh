#!/bin/bash
# Puts stripped copies of what tests/device/run-on-gpu.sh needs into .devlibs/ (ignored by git; carried to the GPU
# machine): the device test binary, the fake NVML, gcm and the Debian shared libraries gcm links against.
set -euo pipefail
cd "$(dirname "$0")/../.."
ninja -C build gcm nvml_device_tests fake_nvml
rm -rf .devlibs && mkdir -p .devlibs/fake
strip -o .devlibs/gcm build/gcm
strip -o .devlibs/nvml_device_tests build/tests/device/nvml_device_tests
strip -o .devlibs/fake/libnvidia-ml.so.1 build/fake_nvml/libnvidia-ml.so.1
ldd build/gcm | awk '/=> \// {print $3}' | grep -v -E '/(libc|libm|ld-linux[^/]*)\.so' | xargs -I{} cp -L {} .devlibs/
grep -qx '/.devlibs/' .git/info/exclude 2>/dev/null || echo '/.devlibs/' >> .git/info/exclude
du -sh .devlibs
