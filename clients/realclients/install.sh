#!/usr/bin/env bash
# Installs what the real-client matrix runs: the Debian clients (curl, wget, python3-urllib3,
# python3-requests, python3-grpcio, nodejs, npm, strace — only those missing; `apt-get update` once, only then) and the
# npm clients pinned in package-lock.json (`npm ci` into clients/realclients/node_modules, git-ignored).
set -euo pipefail
cd "$(dirname "$0")"

packages=(curl wget python3 python3-urllib3 python3-requests python3-grpcio nodejs strace)
command -v npm >/dev/null || packages+=(npm)
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

# npm ci again only when the lock changed since the last install.
if ! cmp -s package-lock.json node_modules/.package-lock.json.installed 2>/dev/null; then
    npm ci --no-audit --no-fund
    cp package-lock.json node_modules/.package-lock.json.installed
fi
