#!/usr/bin/env bash
# Builds the Dockerfile's image (tag faultline:<version>) and runs it: --version, then a shipped good
# suite inside the container. Exits 77 (skipped) when no container runtime can build here —
# neither docker nor podman, or a docker client without a reachable daemon — saying which.
#   scripts/docker-build.sh [TAG]
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -nE 's/^project\(faultline VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
tag=${1:-faultline:$version}

runtime=""
for candidate in docker podman; do
    if command -v "$candidate" >/dev/null && "$candidate" info >/dev/null 2>&1; then runtime=$candidate; break; fi
done
if [[ -z "$runtime" ]]; then
    if command -v docker >/dev/null; then
        echo "docker-build: skipped: the docker client is installed but no daemon answers (docker info fails)"
    else
        echo "docker-build: skipped: no container runtime (docker or podman) on this machine"
    fi
    exit 77
fi

"$runtime" build -t "$tag" .
"$runtime" run --rm "$tag" --version
"$runtime" run --rm "$tag" run /usr/share/faultline/suites/status-4xx.good.toml
echo "docker-build: $tag built and ran a suite ($("$runtime" image inspect "$tag" --format '{{.Size}}') bytes)"
