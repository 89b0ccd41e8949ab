# Shared by the load scripts in bench/ (sourced, not run): a scratch folder in $work, and every child
# the script records in `pids` killed and waited for when the script ends — normally, on an error, or
# on a signal — so no server, proxy or load generator outlives it.
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
