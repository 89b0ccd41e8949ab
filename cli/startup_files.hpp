// How a long-running server command (`serve`, `proxy`) tells a script where it listens, without a
// banner to scrape: `--ready-file PATH` (a JSON object: pid, seed, URLs, ports, the control token,
// and the proxy's named proxies), `--env-file PATH` (shell `export` lines to `source`) and
// `--print-env` (the same lines on stdout, which is then closed, so `eval "$(faultline serve
// --print-env … &)"` returns once the server listens). Each is published once every port listens,
// a file atomically (a temporary file beside it, then rename(2)) with mode 0600 since it holds the
// token, and the files are removed when the command ends: a file left by a process that is gone
// would point a script at a dead port. The files describe the start: proxies created or deleted
// later are listed by the control API (GET /__faultline/proxies), not rewritten here.
#pragma once

#include <boost/json/array.hpp>

#include <CLI/App.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace faultline::cli {

struct startup_file_options {
    std::string ready_file;
    std::string env_file;
    bool print_env = false;
};

// Declares --ready-file, --env-file and --print-env on `cmd`.
void add_startup_file_options(CLI::App& cmd, startup_file_options& options);

// Where a started server listens, as the ready file and the environment lines tell it.
struct ready_state {
    long pid = 0;
    std::uint64_t seed = 0;
    std::string url;  // "http://127.0.0.1:P" (a proxy's: its default proxy)
    std::uint16_t port = 0;
    std::optional<std::string> control_url;  // nullopt: no control API
    std::optional<std::uint16_t> control_port;
    std::optional<std::string> token;        // nullopt: the control API takes none
    std::optional<std::string> ca;           // TLS: the CA file clients are to trust (FAULTLINE_CA)
    std::optional<boost::json::array> proxies;  // `proxy` only: one object per named proxy
};

// The ready file's JSON object, one line.
std::string ready_json(const ready_state& state);
// `export FAULTLINE_URL='…'` lines (FAULTLINE_CONTROL_URL, FAULTLINE_CONTROL_TOKEN when there are a
// control API and a token, FAULTLINE_CA with TLS, FAULTLINE_PID), each value single-quoted for the shell.
std::string environment_lines(const ready_state& state);

// Publishes a ready_state as the options ask, once, and removes the files it wrote when destroyed.
// A file that cannot be written is a harness error: it prints why and throws CLI::RuntimeError(3).
class startup_files {
public:
    startup_files(const startup_file_options& options, std::string command);
    ~startup_files();
    startup_files(const startup_files&) = delete;
    startup_files& operator=(const startup_files&) = delete;

    // The environment lines on stdout when --print-env asked (stdout is then closed onto /dev/null:
    // whoever reads it sees its end), then the files.
    void publish(const ready_state& state);
    // Whether stdout is given to the environment lines (the human banner then goes to stderr).
    bool stdout_taken() const { return options_.print_env; }

private:
    startup_file_options options_;
    std::string command_;
    std::vector<std::string> written_;
};

}  // namespace faultline::cli
