#!/usr/bin/env bash
# `pip install` of the package as python.md says, offline, into a new venv (with the system's
# site-packages for pytest and requests), then pytest from that venv with the plugin loaded by its
# pytest11 entry point alone (no -p, no PYTHONPATH), then with -p as well:
#
#   install-and-run.sh PYTHON PACKAGE_DIR WORK_DIR PYTEST_ARGS...
#
# Exit: pytest's, or 1 when the install fails or imports another copy.
set -euo pipefail
python=$1 package=$2 work=$3
shift 3
# The installed copy is under test, not the sources a PYTHONPATH would put first.
unset PYTHONPATH
rm -rf "$work" && mkdir -p "$work"
# pip builds in the directory it is given: a copy keeps build/ and *.egg-info out of the sources.
cp -r "$package" "$work/package"
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-build-isolation --no-index --no-deps "$work/package"
installed=$("$work/venv/bin/python" -c "import faultline; print(faultline.__file__)")
if [[ "$installed" != "$work/venv/"* ]]; then
    echo "import faultline found $installed, not the venv's copy" >&2
    exit 1
fi
cd "$work"
"$work/venv/bin/python" -m pytest -p no:cacheprovider --basetemp="$work/tmp" "$@"
# A suite written for the uninstalled plugin names it with -p: installed, that must not load it twice.
exec "$work/venv/bin/python" -m pytest -p no:cacheprovider -p faultline.pytest_plugin --basetemp="$work/tmp" "$@"
