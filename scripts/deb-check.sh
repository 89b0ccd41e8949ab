#!/usr/bin/env bash
# Builds the .deb with cpack and proves it works without touching this machine's packages: apt
# resolves its dependencies (a simulated install), the package is unpacked into a scratch root,
# and the unpacked program runs — --version, help, its man page and completion, a shipped suite.
#   scripts/deb-check.sh [BUILD_DIR]      (default build/default, already built)
set -euo pipefail
build=${1:-build/default}
[[ -x "$build/cli/faultline" ]] || { echo "deb-check: build $build first (cmake --build --preset default)" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

(cd "$build" && cpack -G DEB >"$scratch/cpack.log") || { cat "$scratch/cpack.log" >&2; exit 1; }
deb=$(ls -t "$build"/packages/faultline_*.deb | head -n1)
echo "package: $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --field "$deb" Package Version Architecture Depends

# Would it install here? apt resolves Depends against the configured Debian archive (no changes made).
if [[ $(id -u) == 0 ]]; then
    apt-get install --simulate --no-install-recommends "$(realpath "$deb")" >"$scratch/apt.log" ||
        { cat "$scratch/apt.log" >&2; echo "deb-check: apt cannot install $deb" >&2; exit 1; }
    grep -E "^Inst " "$scratch/apt.log" || true
fi

dpkg-deb -x "$deb" "$scratch/root"
bin=$scratch/root/usr/bin/faultline
version=$("$bin" --version)
echo "unpacked: $version"
[[ "$version" == "faultline $(dpkg-deb --field "$deb" Version)" ]] || { echo "version mismatch" >&2; exit 1; }
"$bin" run --help | grep -q "Examples:" || { echo "run --help has no examples" >&2; exit 1; }
man -l "$scratch/root/usr/share/man/man1/faultline.1.gz" 2>/dev/null | grep -q "faultline serve" ||
    { echo "the gzipped man page is missing or does not document serve" >&2; exit 1; }
help=$("$bin" --help)
grep -q "faultline run $scratch/root/usr/share/faultline/suites" <<<"$help" ||
    { echo "the installed help does not point at the installed suites" >&2; exit 1; }
grep -q "^License: Apache-2.0" "$scratch/root/usr/share/doc/faultline/copyright" ||
    { echo "the package has no copyright file naming its licence" >&2; exit 1; }
[[ -f "$scratch/root/usr/share/doc/faultline/docs/scenarios.md" ]] || { echo "the docs are not installed" >&2; exit 1; }
man -l "$scratch/root/usr/share/man/man1/faultline.1.gz" 2>/dev/null | grep -q "/usr/share/faultline/suites" ||
    { echo "the man page does not point at the installed suites" >&2; exit 1; }
bash -c "source '$scratch/root/usr/share/bash-completion/completions/faultline' && complete -p faultline" >/dev/null
"$bin" validate "$scratch/root/usr/share/faultline/suites" >/dev/null
"$bin" run "$scratch/root/usr/share/faultline/suites/status-4xx.good.toml" >"$scratch/run.txt" ||
    { cat "$scratch/run.txt" >&2; echo "the packaged faultline failed a good suite" >&2; exit 1; }
echo "deb-check: ok ($deb installs, unpacks and runs)"
