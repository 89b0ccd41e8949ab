#!/usr/bin/env bash
# Lints the Dockerfile where no container runtime is at hand (hadolint is not in Debian):
#   - every package it (and install-deps.sh --build-only) installs exists in this Debian release,
#   - the runtime image runs as a non-root user, exposes its ports, has a health check and OCI labels
#     whose version is the project's,
#   - its default command starts: the CMD's arguments are run with the built program (addresses
#     moved to 127.0.0.1 on ephemeral ports, paths into a scratch folder), and the HEALTHCHECK's test
#     holds once it listens and fails after it stops.
#   scripts/dockerfile-check.sh [BUILD_DIR]      (default build/default, already built)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
faultline=$build/cli/faultline
[[ -x "$faultline" ]] || { echo "dockerfile-check: build $build first" >&2; exit 2; }
fail() { echo "dockerfile-check: $*" >&2; exit 1; }

# The words after each `apt-get install` up to the next `&&` (continuation lines joined).
packages=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' Dockerfile | grep -oE 'apt-get install[^&]*' |
           sed 's/^apt-get install//' | tr ' ' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' || true)
packages+=" $(bash scripts/install-deps.sh --list-build | tr '\n' ' ')"
for package in $packages; do
    apt-cache show --no-all-versions "$package" >/dev/null 2>&1 || fail "package '$package' is not in this Debian release"
done

runtime=$(sed -n '/^FROM debian:12-slim/,$p' Dockerfile)
user=$(sed -nE 's/^USER +([^ ]+).*/\1/p' <<<"$runtime")
[[ -n "$user" && "$user" != root && "$user" != 0 ]] || fail "the runtime image runs as root (no USER)"
grep -qE '^EXPOSE .*8080.*8081' <<<"$runtime" || fail "the runtime image exposes no service and control port"
version=$(sed -nE 's/^project\(faultline VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
grep -q "^ARG VERSION=$version$" <<<"$runtime" || fail "the image's version is not the project's ($version)"
grep -q 'org.opencontainers.image.version="${VERSION}"' <<<"$runtime" || fail "no OCI version label"
grep -q 'org.opencontainers.image.licenses="Apache-2.0"' <<<"$runtime" || fail "no OCI licence label"
health=$(sed -nE 's/^HEALTHCHECK .* CMD (.*)$/\1/p' <<<"$runtime")
[[ -n "$health" ]] || fail "no HEALTHCHECK"

scratch=$(mktemp -d)
pid=""
cleanup() {
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$scratch"
}
trap cleanup EXIT
mapfile -t args < <(sed -nE 's/^CMD \[(.*)\]$/\1/p' <<<"$runtime" | tr ',' '\n' | sed -E 's/^ *"//; s/" *$//')
((${#args[@]} > 0)) || fail "no CMD"
local_args=()
for arg in "${args[@]}"; do
    arg=${arg//0.0.0.0:[0-9]*/127.0.0.1:0}
    arg=${arg//\/run\/faultline/$scratch}
    local_args+=("${arg//\/reports/$scratch}")
done
health=${health//\/run\/faultline/$scratch}
FAULTLINE_CONTROL_TOKEN=dockerfile-check "$faultline" "${local_args[@]}" >"$scratch/out.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do   # at most 10 s
    bash -c "$health" && break
    kill -0 "$pid" 2>/dev/null || { cat "$scratch/out.txt" >&2; fail "the default command exited: faultline ${args[*]}"; }
    sleep 0.1
done
bash -c "$health" || fail "the health check did not pass within 10 s of: faultline ${args[*]}"
kill -TERM "$pid"
wait "$pid" || fail "the default command did not stop cleanly on SIGTERM"
pid=""
! bash -c "$health" || fail "the health check still passes after the server stopped"
[[ -s "$scratch/journal.jsonl" ]] || fail "the default command wrote no journal into the reports volume"
echo "dockerfile-check: ok ($(wc -w <<<"$packages") packages in Debian, user $user, default command serves and is healthy)"
