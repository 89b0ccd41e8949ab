#!/usr/bin/env bash
# Installs the Debian packages faultline needs, only those missing: `apt-get update` runs once, and
# only when something has to be installed. `--build-only`: just what building the program needs (the
# container's build stage); `--bench` adds the load tools used by bench/.
set -euo pipefail

# What building the program and its .deb needs (the container's build stage: --build-only).
build_packages=(cmake ninja-build g++ pkg-config
                libboost1.81-dev libboost-json1.81-dev
                libtomlplusplus-dev libcli11-dev
                libssl-dev  # TLS: Asio SSL over OpenSSL (harness/tls)
                libnghttp2-dev  # HTTP/2 on the server's connection (harness/server/src/h2_session.cpp)
                help2man    # the man page, generated from --help (packaging/faultline-man.sh)
                pandoc      # faultline-scenario(5), generated from docs/scenarios.md
                file dpkg-dev)   # cpack's .deb generator runs dpkg-shlibdeps on file's verdicts (scripts/deb-check.sh)
# What the test suite adds.
test_packages=(googletest libgtest-dev libgmock-dev libbenchmark-dev
               curl wget   # real third-party clients: the `faultline score` tests and docs/score.md
               python3-requests python3-urllib3 nodejs   # the docs/guides/ walk-throughs (ctest -R guide_)
               python3-pytest python3-venv python3-wheel   # clients/: the pytest plugin's tests, pip install into a venv offline
               python3-jsonschema   # `faultline schema` checked against the shipped files (cli/tests/schema_check.py)
               zsh         # the zsh completion's test (packaging/completion-test.zsh)
               clang libclang-rt-14-dev   # libFuzzer (scripts/fuzz.sh, the `fuzz` preset)
               chromium   # the HTML report opened headless (reports/tests/browser_check.sh)
               python3-grpcio   # a real gRPC client scored by `faultline score --grpc` (ctest -R grpc_score)
               python3-locust iproute2)   # the fleet test: Locust workers on network-namespace hosts (docs/fleet.md)
case "${1:-}" in
    --build-only) packages=("${build_packages[@]}") ;;
    --bench) packages=("${build_packages[@]}" "${test_packages[@]}" wrk nginx-light nghttp2-client) ;;
    "") packages=("${build_packages[@]}" "${test_packages[@]}") ;;
    --list-build) printf '%s\n' "${build_packages[@]}"; exit 0 ;;   # scripts/dockerfile-check.sh reads it
    *) echo "usage: install-deps.sh [--build-only | --bench]" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if ((${#missing[@]} > 0)); then
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
fi
