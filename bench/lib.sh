# Shared by the load scripts in bench/ (sourced, not run): a scratch folder in $work, and every child
# the script records in `pids` killed and waited for when the script ends — normally, on an error, or
# on a signal — so no server, proxy or load generator outlives it; and release_faultline, the binary
# to measure.
work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP PIPE  # through the EXIT trap

# A free TCP port on 127.0.0.1 (bound once and released).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The binary to measure: $FAULTLINE when set, else a Release build of the tree in build/bench-server.
release_faultline() {
    if [[ -n "${FAULTLINE:-}" ]]; then
        echo "$FAULTLINE"
        return
    fi
    cmake -S . -B build/bench-server -G Ninja -DCMAKE_BUILD_TYPE=Release -DFAULTLINE_BUILD_TESTS=OFF \
          -DFAULTLINE_BUILD_BENCH=OFF >/dev/null
    cmake --build build/bench-server -j2 --target faultline >/dev/null
    echo build/bench-server/cli/faultline
}
