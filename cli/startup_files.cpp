#include "startup_files.hpp"

#include "commands.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <utility>

namespace faultline::cli {

namespace json = boost::json;

void add_startup_file_options(CLI::App& cmd, startup_file_options& options) {
    cmd.add_option("--ready-file", options.ready_file,
                   "Once listening, write the URLs, ports, control token, pid and seed to this file as JSON "
                   "(atomically, mode 0600; removed at exit)");
    cmd.add_option("--env-file", options.env_file,
                   "Once listening, write `export FAULTLINE_URL=...` lines to this file for `source` (mode 0600; "
                   "removed at exit)");
    cmd.add_flag("--print-env", options.print_env,
                 "Once listening, print `export FAULTLINE_URL=...` lines on stdout and close it (the banner goes to "
                 "stderr): eval \"$(faultline ... --print-env &)\"");
}

std::string ready_json(const ready_state& state) {
    json::object out;
    out["pid"] = state.pid;
    out["seed"] = state.seed;
    out["url"] = state.url;
    out["port"] = state.port;
    out["control_url"] = state.control_url ? json::value(*state.control_url) : json::value(nullptr);
    out["control_port"] = state.control_port ? json::value(*state.control_port) : json::value(nullptr);
    out["token"] = state.token ? json::value(*state.token) : json::value(nullptr);
    if (state.ca) out["ca"] = *state.ca;
    if (state.proxies) out["proxies"] = *state.proxies;
    return json::serialize(out) + "\n";
}

namespace {

// 'value' for a POSIX shell: inside single quotes only ' itself needs care ('\'').
std::string shell_quoted(const std::string& value) {
    std::string out = "'";
    for (const char c : value) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    return out + "'";
}

// Writes `text` to `path` atomically: a temporary file in the same directory (so the rename stays on
// one file system), mode 0600, then rename(2). A reader sees the whole file or none.
std::error_code write_atomically(const std::string& path, const std::string& text) {
    const std::filesystem::path target{path};
    const std::filesystem::path temporary =
        target.parent_path() / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()));
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return {errno, std::generic_category()};
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const std::error_code ec{errno, std::generic_category()};
            ::close(fd);
            ::unlink(temporary.c_str());
            return ec;
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0 || ::rename(temporary.c_str(), target.c_str()) != 0) {
        const std::error_code ec{errno, std::generic_category()};
        ::unlink(temporary.c_str());
        return ec;
    }
    return {};
}

}  // namespace

std::string environment_lines(const ready_state& state) {
    std::string out = "export FAULTLINE_URL=" + shell_quoted(state.url) + "\n";
    if (state.control_url) out += "export FAULTLINE_CONTROL_URL=" + shell_quoted(*state.control_url) + "\n";
    if (state.token) out += "export FAULTLINE_CONTROL_TOKEN=" + shell_quoted(*state.token) + "\n";
    if (state.ca) out += "export FAULTLINE_CA=" + shell_quoted(*state.ca) + "\n";
    out += "export FAULTLINE_PID=" + std::to_string(state.pid) + "\n";
    return out;
}

startup_files::startup_files(const startup_file_options& options, std::string command)
    : options_{options}, command_{std::move(command)} {}

startup_files::~startup_files() {
    for (const std::string& path : written_) ::unlink(path.c_str());
}

void startup_files::publish(const ready_state& state) {
    if (options_.print_env) {
        std::cout << environment_lines(state) << std::flush;
        // Whoever reads stdout (a command substitution, a FIFO) sees its end now; later writes go nowhere.
        const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0) {
            ::dup2(null, STDOUT_FILENO);
            ::close(null);
        }
    }
    const auto write = [this](const std::string& path, const std::string& text, const char* option) {
        if (path.empty()) return;
        if (const std::error_code ec = write_atomically(path, text)) {
            std::cerr << "faultline " << command_ << ": " << option << ' ' << path << ": cannot write it: "
                      << ec.message() << '\n';
            throw CLI::RuntimeError(exit_harness_error);
        }
        written_.push_back(path);
    };
    write(options_.env_file, environment_lines(state), "--env-file");
    // The ready file last: a script that waits for it finds the env file already there.
    write(options_.ready_file, ready_json(state), "--ready-file");
}

}  // namespace faultline::cli
