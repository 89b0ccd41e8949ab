# Sourced by the real-client test scripts: a scratch directory, servers started in the background
# and waited for through their --env-file (bounded), and every one of them killed at exit.
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Starts a server command in the background and sources its environment lines (bounded wait).
start() {
    local env_file=$1; shift
    "$@" --env-file "$env_file" > "$work/out.$$" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [[ -s $env_file ]] && break; sleep 0.1; done
    [[ -s $env_file ]] || fail "no env file from: $* ($(cat "$work/out.$$"))"
    # shellcheck disable=SC1090
    source "$env_file"
}
