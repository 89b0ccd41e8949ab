#!/usr/bin/env bash
# Builds the two .debs with cpack and proves they work without touching this machine's packages: apt
# resolves their dependencies (a simulated install), both are unpacked into a scratch root, the
# unpacked program runs — --version, help, its man page and completion, a shipped suite — and
# examples/cpp-consumer builds and passes its tests with find_package(faultline) from the unpacked
# faultline-dev alone.
# With --install (CI, on a machine that is thrown away) it then installs both with apt for real, as a
# user would, builds examples/cpp-consumer against the system's faultline, runs every shipped suite
# from /usr/share/faultline/suites, reads `man faultline-scenario`, and removes the packages again.
#   scripts/deb-check.sh [--install] [BUILD_DIR]      (default build/default, already built)
set -euo pipefail
install=0
if [[ "${1:-}" == "--install" ]]; then
    install=1
    shift
fi
build=${1:-build/default}
[[ -x "$build/cli/faultline" ]] || { echo "deb-check: build $build first (cmake --build --preset default)" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

(cd "$build" && cpack -G DEB >"$scratch/cpack.log") || { cat "$scratch/cpack.log" >&2; exit 1; }
deb=$(ls -t "$build"/packages/faultline_*.deb | head -n1)
dev_deb=$(ls -t "$build"/packages/faultline-dev_*.deb | head -n1)
for package in "$deb" "$dev_deb"; do
    echo "package: $package ($(du -h "$package" | cut -f1))"
    dpkg-deb --field "$package" Package Version Architecture Depends
done
[[ "$(dpkg-deb --field "$dev_deb" Version)" == "$(dpkg-deb --field "$deb" Version)" ]] ||
    { echo "the two packages' versions differ" >&2; exit 1; }

# Would they install here? apt resolves Depends against the configured Debian archive (no changes made).
if [[ $(id -u) == 0 ]]; then
    apt-get install --simulate --no-install-recommends "$(realpath "$deb")" "$(realpath "$dev_deb")" >"$scratch/apt.log" ||
        { cat "$scratch/apt.log" >&2; echo "deb-check: apt cannot install $deb and $dev_deb" >&2; exit 1; }
    grep -E "^Inst " "$scratch/apt.log" || true
fi

dpkg-deb -x "$deb" "$scratch/root"
dpkg-deb -x "$dev_deb" "$scratch/root"
bin=$scratch/root/usr/bin/faultline
version=$("$bin" --version)
echo "unpacked: $version"
[[ "$version" == "faultline $(dpkg-deb --field "$deb" Version)" ]] || { echo "version mismatch" >&2; exit 1; }
"$bin" run --help | grep -q "Examples:" || { echo "run --help has no examples" >&2; exit 1; }
man -l "$scratch/root/usr/share/man/man1/faultline.1.gz" 2>/dev/null | grep -q "faultline serve" ||
    { echo "the gzipped man page is missing or does not document serve" >&2; exit 1; }
man -l "$scratch/root/usr/share/man/man5/faultline-scenario.5.gz" 2>/dev/null | grep -q "Fault rules" ||
    { echo "faultline-scenario(5) is missing or does not document the fault rules" >&2; exit 1; }
help=$("$bin" --help)
grep -q "faultline run $scratch/root/usr/share/faultline/suites" <<<"$help" ||
    { echo "the installed help does not point at the installed suites" >&2; exit 1; }
grep -q "^License: Apache-2.0" "$scratch/root/usr/share/doc/faultline/copyright" ||
    { echo "the package has no copyright file naming its licence" >&2; exit 1; }
[[ -f "$scratch/root/usr/share/doc/faultline/docs/scenarios.md" ]] || { echo "the docs are not installed" >&2; exit 1; }
man -l "$scratch/root/usr/share/man/man1/faultline.1.gz" 2>/dev/null | grep -q "/usr/share/faultline/suites" ||
    { echo "the man page does not point at the installed suites" >&2; exit 1; }
for control in control.mjs control.py; do
    [[ -f "$scratch/root/usr/share/faultline/controls/$control" ]] || { echo "score's $control is not installed" >&2; exit 1; }
done
[[ -f "$scratch/root/usr/share/zsh/vendor-completions/_faultline" ]] || { echo "no zsh completion" >&2; exit 1; }
bash -c "source '$scratch/root/usr/share/bash-completion/completions/faultline' && complete -p faultline" >/dev/null
"$bin" validate "$scratch/root/usr/share/faultline/suites" >/dev/null
"$bin" run "$scratch/root/usr/share/faultline/suites/status-4xx.good.toml" >"$scratch/run.txt" ||
    { cat "$scratch/run.txt" >&2; echo "the packaged faultline failed a good suite" >&2; exit 1; }
grep -q "^License: Apache-2.0" "$scratch/root/usr/share/doc/faultline-dev/copyright" ||
    { echo "faultline-dev has no copyright file" >&2; exit 1; }

# A C++ project built against the unpacked dev package only (no build tree, no source tree).
cmake -S "$(dirname "$0")/../examples/cpp-consumer" -B "$scratch/consumer" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_PREFIX_PATH="$scratch/root/usr" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$scratch/consumer.log" 2>&1 &&
    cmake --build "$scratch/consumer" -j2 >>"$scratch/consumer.log" 2>&1 &&
    ctest --test-dir "$scratch/consumer" --output-on-failure >>"$scratch/consumer.log" 2>&1 ||
    { cat "$scratch/consumer.log" >&2; echo "examples/cpp-consumer does not build against faultline-dev" >&2; exit 1; }
grep -qE "^faultline_DIR:PATH=$scratch/root/usr/lib/(.*/)?cmake/faultline$" "$scratch/consumer/CMakeCache.txt" ||
    { echo "the consumer found another faultline than the unpacked package's" >&2; exit 1; }
echo "deb-check: ok ($deb and $dev_deb install, unpack and run; cpp-consumer builds against faultline-dev)"
((install)) || exit 0

# For real: apt installs both (and what they depend on), nothing else points at the build tree.
[[ $(id -u) == 0 ]] || { echo "deb-check --install: run as root" >&2; exit 2; }
# Packages found installed (a user's, or left by a run that was killed before its clean-up) are
# replaced by these and left installed afterwards; only what this check installed is removed.
remove_packages() { apt-get remove -y faultline faultline-dev >/dev/null 2>&1 || true; }
if dpkg-query -W faultline faultline-dev >/dev/null 2>&1; then
    echo "deb-check --install: faultline $(dpkg-query -W -f='${Version}' faultline 2>/dev/null) is installed already:" \
         "installing these over it and leaving them installed" >&2
    trap 'rm -rf "$scratch"' EXIT
else
    trap 'remove_packages; rm -rf "$scratch"' EXIT
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall --no-install-recommends "$(realpath "$deb")" "$(realpath "$dev_deb")" \
    >"$scratch/apt-install.log" 2>&1 || { cat "$scratch/apt-install.log" >&2; echo "apt cannot install the packages" >&2; exit 1; }
[[ "$(command -v faultline)" == /usr/bin/faultline ]] || { echo "faultline is not /usr/bin/faultline" >&2; exit 1; }
cmake -S "$(dirname "$0")/../examples/cpp-consumer" -B "$scratch/installed-consumer" -G Ninja \
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$scratch/installed-consumer.log" 2>&1 &&
    cmake --build "$scratch/installed-consumer" -j2 >>"$scratch/installed-consumer.log" 2>&1 &&
    ctest --test-dir "$scratch/installed-consumer" --output-on-failure >>"$scratch/installed-consumer.log" 2>&1 ||
    { cat "$scratch/installed-consumer.log" >&2; echo "examples/cpp-consumer does not build against the installed faultline-dev" >&2; exit 1; }
grep -qE "^faultline_DIR:PATH=/usr/lib/(.*/)?cmake/faultline$" "$scratch/installed-consumer/CMakeCache.txt" ||
    { echo "the consumer did not find the installed faultline" >&2; exit 1; }
(cd "$scratch" && faultline run /usr/share/faultline/suites -j2 --summary >"$scratch/suites.txt" 2>&1) ||
    { cat "$scratch/suites.txt" >&2; echo "the installed faultline does not pass its shipped suites" >&2; exit 1; }
man faultline-scenario 2>/dev/null | grep -q "Fault rules" || { echo "man faultline-scenario does not work" >&2; exit 1; }
echo "deb-check --install: ok (apt installed both; cpp-consumer built against /usr; $(tail -n1 "$scratch/suites.txt" | tr -d '\n'); man faultline-scenario)"
