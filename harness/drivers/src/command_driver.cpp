#include "faultline/drivers/command_driver.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <variant>

#include "backoff_table.hpp"
#include "process_tree.hpp"
#include "faultline/config/grpc_service_config.hpp"
#include "faultline/config/reader.hpp"

extern char** environ;

namespace faultline::drivers {

namespace {

using namespace std::chrono_literals;

// Without a pidfd (old kernels) a process's exit is noticed by looking at it this often.
constexpr auto exit_poll_interval = 10ms;
constexpr std::size_t read_chunk = 64 * 1024;
constexpr std::uint32_t max_command_concurrency = 64;
// The environment variables the driver sets; inherited values of them are dropped.
constexpr std::string_view driver_variables[] = {"FAULTLINE_URL=", "FAULTLINE_OP=", "FAULTLINE_CLIENT=",
                                                 "FAULTLINE_KEY=", "FAULTLINE_CA="};

// --- reading the [client] table -------------------------------------------------------------

using config::need;
using config::table_reader;

// What the client says about its own retrying: plain facts for the checks, nothing the driver acts on.
void read_declared(table_reader& r, record::declared_client& d) {
    if (const auto v = r.duration("deadline", 1ms, 24h)) d.deadline = *v;
    if (const auto v = r.integer("max_attempts", 1, 1'000'000)) d.max_attempts = static_cast<std::uint32_t>(*v);
    if (const auto v = r.duration("attempt_timeout", 1ms, 24h)) d.attempt_timeout = *v;
    // A gRPC client's service config (its retry, hedging and throttling), read and validated now: the
    // grpc_* checks judge against it, and {service_config} names its file. A relative path is the
    // scenario file's folder's, as its author sees it.
    config::grpc_service_config_file service_config = config::read_grpc_service_config_key(r, "service_config");
    d.grpc = std::move(service_config.config);
    d.grpc_service_config_file = std::move(service_config.path);
    if (const toml::table* t = r.table("backoff")) {
        table_reader sub = r.child(*t, "[client.backoff]");
        retry::backoff_policy curve;
        read_backoff_table(sub, curve, need::required);
        if (sub.ok()) {
            d.backoff = declared_backoff_of(curve);
        }
    }
}

std::optional<command_config> read_command(table_reader& r, const client_overrides& overrides) {
    command_config c;
    if (!overrides.command.empty()) {
        r.allow("command");
        if (overrides.command.front().empty()) r.fail_table("the command after `--` needs a program");
        c.argv = overrides.command;
    } else if (const auto argv = r.strings("command")) {
        if (argv->empty() || argv->front().empty()) {
            r.fail("command", "needs a program: command = [\"program\", \"arg\", ...]");
        } else {
            c.argv = *argv;
        }
    } else if (r.ok()) {
        r.fail_table("driver = \"command\" needs command = [\"program\", \"arg\", ...] (or a command after `--`)");
    }
    if (const auto v = r.choice("mode", {"once", "per_operation"})) {
        c.options.mode = *v == "per_operation" ? command_mode::per_operation : command_mode::once;
    }
    if (const auto v = r.integer("operations", 1, 100'000)) c.options.operations = static_cast<std::uint64_t>(*v);
    if (const auto v = r.integer("concurrency", 1, max_command_concurrency)) {
        c.options.concurrency = static_cast<std::uint32_t>(*v);
    }
    if (c.options.mode == command_mode::once) {
        for (const std::string_view key : {"operations", "concurrency"}) {
            if (r.has(key)) r.fail(key, "only applies to mode = \"per_operation\"");
        }
    }
    if (const auto v = r.duration("kill_grace", 0ns, 1min)) {
        c.options.kill_grace = std::chrono::duration_cast<std::chrono::milliseconds>(*v);
    }
    if (const auto v = r.integer("output_limit", 0, 64 * 1024 * 1024)) c.options.output_limit = static_cast<std::size_t>(*v);
    read_declared(r, c.declared);
    if (!r.ok()) return std::nullopt;
    return c;
}

// A file descriptor we own; closed exactly once.
class fd_owner {
public:
    fd_owner() = default;
    explicit fd_owner(int fd) : fd_{fd} {}
    fd_owner(fd_owner&& other) noexcept : fd_{std::exchange(other.fd_, -1)} {}
    fd_owner& operator=(fd_owner&& other) noexcept {
        if (this != &other) {
            reset();
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    fd_owner(const fd_owner&) = delete;
    fd_owner& operator=(const fd_owner&) = delete;
    ~fd_owner() { reset(); }

    int get() const { return fd_; }
    bool open() const { return fd_ >= 0; }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_ = -1;
};

// Output kept up to a limit; what is beyond it is counted, not stored.
struct bounded_text {
    std::string text;
    std::size_t dropped = 0;

    void append(std::string_view bytes, std::size_t limit) {
        const std::size_t room = limit > text.size() ? limit - text.size() : 0;
        const std::size_t keep = std::min(room, bytes.size());
        text.append(bytes.substr(0, keep));
        dropped += bytes.size() - keep;
    }
    // Appends another process's output; what it already dropped stays counted.
    void append(const bounded_text& other, std::size_t limit) {
        append(other.text, limit);
        dropped += other.dropped;
    }
    std::string finish() && {
        if (dropped > 0) text += "\n[faultline: " + std::to_string(dropped) + " more bytes not kept]\n";
        return std::move(text);
    }
};

struct child {
    std::uint64_t op = 0;
    pid_t pid = -1;  // also the process group id
    std::int64_t started_ns = 0;  // ns since the run start, taken just before the spawn
    fd_owner out;
    fd_owner err;
    fd_owner pidfd;  // not open when pidfd_open is unavailable
    bounded_text out_text;
    bounded_text err_text;
    bool signalled = false;  // SIGTERM sent at the time limit
    bool hard_killed = false;
};

std::string errno_text(int code) { return std::generic_category().message(code); }

// A descriptor that becomes readable when the process exits; -1 where the kernel has none (then
// exits are noticed by polling). Called through syscall(2): glibc 2.36's <sys/pidfd.h> lacks C linkage.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    return -1;
#endif
}

void read_available(fd_owner& fd, bounded_text& into, std::size_t limit) {
    std::array<char, read_chunk> buffer{};
    // Bounded: each pass reads one chunk; a pipe holds a finite amount, and we stop at EAGAIN.
    for (int pass = 0; pass < 64 && fd.open(); ++pass) {
        const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
        if (n > 0) {
            into.append(std::string_view{buffer.data(), static_cast<std::size_t>(n)}, limit);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        fd.reset();  // EOF or a read error: nothing more will come
    }
}

// The process has exited (not yet reaped)? Uses WNOWAIT so the zombie keeps its pid — and with it
// the process group id — reserved until we have signalled the group.
bool has_exited(const child& c) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
    return info.si_pid == c.pid;
}

struct exit_info {
    int status = 128;  // as a shell reports it; 128 when the status could not be read
    std::optional<int> signal;
};

exit_info reap(pid_t pid) {
    int status = 0;
    pid_t r = -1;
    // Bounded: EINTR is the only reason to repeat.
    for (int tries = 0; tries < 100; ++tries) {
        r = ::waitpid(pid, &status, 0);
        if (r >= 0 || errno != EINTR) break;
    }
    if (r < 0) return {};
    if (WIFEXITED(status)) return {WEXITSTATUS(status), std::nullopt};
    if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
    return {};
}

std::int64_t since(time_point start, time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - start).count();
}

class spawn_resources {
public:
    spawn_resources() {
        ::posix_spawn_file_actions_init(&actions_);
        ::posix_spawnattr_init(&attr_);
    }
    ~spawn_resources() {
        ::posix_spawn_file_actions_destroy(&actions_);
        ::posix_spawnattr_destroy(&attr_);
    }
    spawn_resources(const spawn_resources&) = delete;
    spawn_resources& operator=(const spawn_resources&) = delete;

    posix_spawn_file_actions_t* actions() { return &actions_; }
    posix_spawnattr_t* attr() { return &attr_; }

private:
    posix_spawn_file_actions_t actions_{};
    posix_spawnattr_t attr_{};
};

bool names_ca(const std::vector<std::string>& argv) {
    return std::any_of(argv.begin(), argv.end(), [](const std::string& a) { return a.find("{ca}") != std::string::npos; });
}

// Starts one process; returns the child or an error message. `values` has the url and the key set,
// and the CA file when the server speaks TLS.
std::variant<child, std::string> spawn_one(const std::vector<std::string>& argv_template,
                                           const placeholder_values& values, bool per_operation) {
    std::vector<std::string> args;
    args.reserve(argv_template.size());
    for (const auto& a : argv_template) args.push_back(substitute(a, values));
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    std::vector<std::string> env_strings;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry{*e};
        const auto ours = [&](std::string_view prefix) { return entry.starts_with(prefix); };
        if (std::any_of(std::begin(driver_variables), std::end(driver_variables), ours)) continue;
        env_strings.emplace_back(entry);
    }
    env_strings.push_back("FAULTLINE_URL=" + std::string(*values.url));
    env_strings.push_back("FAULTLINE_KEY=" + std::string(*values.key));
    if (values.ca) env_strings.push_back("FAULTLINE_CA=" + std::string(*values.ca));
    if (per_operation) {
        env_strings.push_back("FAULTLINE_OP=" + std::to_string(values.op));
        env_strings.push_back("FAULTLINE_CLIENT=" + std::to_string(values.client));
    }
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);

    std::array<int, 2> out_pipe{-1, -1};
    std::array<int, 2> err_pipe{-1, -1};
    if (::pipe2(out_pipe.data(), O_CLOEXEC) != 0) return "pipe: " + errno_text(errno);
    fd_owner out_read{out_pipe[0]};
    fd_owner out_write{out_pipe[1]};
    if (::pipe2(err_pipe.data(), O_CLOEXEC) != 0) return "pipe: " + errno_text(errno);
    fd_owner err_read{err_pipe[0]};
    fd_owner err_write{err_pipe[1]};

    spawn_resources res;
    ::posix_spawn_file_actions_addopen(res.actions(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(res.actions(), out_write.get(), STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(res.actions(), err_write.get(), STDERR_FILENO);
    // No descriptor of ours (server sockets, other children's pipes) leaks into the client.
    ::posix_spawn_file_actions_addclosefrom_np(res.actions(), 3);
    // A process group of its own, so the time limit reaches everything it forks; default signal
    // handling and an empty mask, whatever this process has set up.
    sigset_t defaults;
    ::sigemptyset(&defaults);
    for (const int s : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD}) ::sigaddset(&defaults, s);
    sigset_t empty;
    ::sigemptyset(&empty);
    ::posix_spawnattr_setpgroup(res.attr(), 0);
    ::posix_spawnattr_setsigdefault(res.attr(), &defaults);
    ::posix_spawnattr_setsigmask(res.attr(), &empty);
    ::posix_spawnattr_setflags(res.attr(), static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                                                POSIX_SPAWN_SETSIGMASK));

    int rc = 0;
    const pid_t pid = detail::client_processes::instance().spawn([&] {
        pid_t spawned = -1;
        rc = ::posix_spawnp(&spawned, argv[0], res.actions(), res.attr(), argv.data(), envp.data());
        return rc == 0 ? spawned : -1;
    });
    if (rc != 0) return "cannot start \"" + args.front() + "\": " + errno_text(rc);

    child c;
    c.op = values.op;
    c.pid = pid;
    out_write.reset();
    err_write.reset();
    ::fcntl(out_read.get(), F_SETFL, ::fcntl(out_read.get(), F_GETFL) | O_NONBLOCK);
    ::fcntl(err_read.get(), F_SETFL, ::fcntl(err_read.get(), F_GETFL) | O_NONBLOCK);
    c.out = std::move(out_read);
    c.err = std::move(err_read);
    c.pidfd = fd_owner{open_pidfd(pid)};
    return c;
}

int poll_timeout_ms(time_point now, std::optional<time_point> until, bool need_exit_polling) {
    duration wait = until ? std::max(duration{0}, *until - now) : duration{std::chrono::hours{1}};
    if (need_exit_polling) wait = std::min<duration>(wait, exit_poll_interval);
    // Round up so we never wake just before the moment we wait for.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
    return static_cast<int>(std::clamp<std::int64_t>(ms, 0, 3'600'000));
}

}  // namespace

std::string_view to_string(command_mode mode) { return mode == command_mode::per_operation ? "per_operation" : "once"; }

std::unique_ptr<driver> make_command_driver(std::vector<std::string> argv, command_options options,
                                            record::declared_client declared) {
    return std::make_unique<command_driver>(std::move(argv), options, std::move(declared));
}

command_driver::command_driver(std::vector<std::string> argv, command_options options, record::declared_client declared)
    : argv_{std::move(argv)}, options_{options}, declared_{std::move(declared)} {
    if (argv_.empty() || argv_.front().empty()) throw std::invalid_argument("command driver: empty command");
}

driver_result command_driver::run(const driver_context& ctx) {
    stats_ = {};
    driver_result result;
    if (ctx.ca_file.empty() && (names_ca(argv_) || names_ca(options_.control_argv))) {
        result.error = "command driver: the command names {ca}, the run's CA file, but the server does not speak "
                       "TLS (set `tls = true` in [server])";
        return result;
    }
    const bool per_operation = options_.mode == command_mode::per_operation;
    const std::uint64_t client_total = per_operation ? options_.operations : 1;
    const std::uint64_t control_total = per_operation && !options_.control_argv.empty() ? options_.control_processes : 0;
    const std::uint64_t total = client_total + control_total;
    const std::uint64_t lanes = per_operation ? std::max<std::uint32_t>(options_.concurrency, 1) : 1;
    const time_point limit = ctx.run_start + ctx.time_limit;
    // The order processes start in: the client's and the control's interleaved, so both meet the
    // machine (and a barrier) the same way; control operations are numbered after the client's.
    std::vector<std::uint64_t> start_order;
    start_order.reserve(total);
    for (std::uint64_t i = 0; i < std::max(client_total, control_total); ++i) {
        if (i < client_total) start_order.push_back(i);
        if (i < control_total) start_order.push_back(client_total + i);
    }
    const auto is_control = [&](std::uint64_t op) { return op >= client_total; };
    std::uint64_t clients_running = 0;

    std::vector<child> running;
    std::vector<record::process_record> processes;  // in the order they were reaped
    std::string start_error;  // the first process that could not be started
    bounded_text out_all;
    bounded_text err_all;
    bool stopping = false;
    bool kill_pending = false;  // SIGKILL is due at kill_at
    time_point kill_at{};
    std::uint64_t next_op = 0;
    detail::client_processes& table = detail::client_processes::instance();

    const auto signal_all = [&](int sig) {
        for (auto& c : running) {
            ::kill(-c.pid, sig);
            if (sig == SIGTERM && !c.signalled) {
                c.signalled = true;
                ++stats_.killed;
            }
            if (sig == SIGKILL) c.hard_killed = true;
        }
    };
    const auto stop_now = [&](time_point now) {
        if (stopping) return;
        stopping = true;
        signal_all(SIGTERM);
        kill_at = now + options_.kill_grace;
        kill_pending = true;
    };

    // Bounded: processes start at most `total` times, and once stopping, every process gets SIGKILL
    // after the grace period, after which it exits and is reaped.
    while ((!stopping && next_op < total) || !running.empty()) {
        time_point now = ctx.clk.now();
        if (!stopping && now >= limit) {
            result.timed_out = true;
            stop_now(now);
        }
        if (!stopping && ctx.interrupt != nullptr && ctx.interrupt->requested()) {
            // Whole trees, counted before they are signalled: what the user's Ctrl-C stopped.
            std::uint64_t stopped = 0;
            for (const child& c : running) stopped += detail::client_processes::tree_size(c.pid);
            result.interrupted = record::run_interruption{ctx.interrupt->signal(), since(ctx.run_start, now), stopped};
            stop_now(now);
        }
        if (kill_pending && now >= kill_at) {
            signal_all(SIGKILL);
            kill_pending = false;
        }
        // The next process starts when its lane is free: a client's within `concurrency`, the control's
        // always (they all run at once).
        while (!stopping && next_op < total && (is_control(start_order[next_op]) || clients_running < lanes)) {
            const std::uint64_t op = start_order[next_op++];
            const retry::idempotency_key key = operation_key(ctx.seed, op);
            placeholder_values values{op, op % lanes, op / lanes, std::string_view{ctx.base_url}, key.view()};
            if (!ctx.ca_file.empty()) values.ca = ctx.ca_file;
            if (!declared_.grpc_service_config_file.empty()) values.service_config = declared_.grpc_service_config_file;
            const std::int64_t started_ns = since(ctx.run_start, ctx.clk.now());
            auto spawned = spawn_one(is_control(op) ? options_.control_argv : argv_, values, per_operation);
            if (auto* message = std::get_if<std::string>(&spawned)) {
                start_error = *message;
                result.error = "command driver: " + *message;
                stop_now(now);
                break;
            }
            running.push_back(std::move(std::get<child>(spawned)));
            running.back().started_ns = started_ns;
            if (!is_control(op)) ++clients_running;
            ++stats_.started;
            stats_.peak_running = std::max(stats_.peak_running, static_cast<std::uint32_t>(running.size()));
        }
        if (running.empty()) continue;

        std::vector<pollfd> fds;
        bool need_exit_polling = false;
        for (const auto& c : running) {
            if (c.out.open()) fds.push_back(pollfd{c.out.get(), POLLIN, 0});
            if (c.err.open()) fds.push_back(pollfd{c.err.get(), POLLIN, 0});
            if (c.pidfd.open()) {
                fds.push_back(pollfd{c.pidfd.get(), POLLIN, 0});
            } else {
                need_exit_polling = true;
            }
        }
        // Readable for good once requested, so only watched until the stop begins.
        if (!stopping && ctx.interrupt != nullptr) fds.push_back(pollfd{ctx.interrupt->fd(), POLLIN, 0});
        std::optional<time_point> wake;
        if (!stopping) wake = limit;
        if (kill_pending) wake = kill_at;
        // Reaped children leave no descriptors to wait on; exit polling covers them.
        if (fds.empty()) need_exit_polling = true;
        const int timeout = poll_timeout_ms(now, wake, need_exit_polling);
        const int ready = ::poll(fds.data(), fds.size(), timeout);
        if (ready < 0 && errno != EINTR) {
            result.error = "command driver: poll: " + errno_text(errno);
            stop_now(ctx.clk.now());
        }

        for (auto& c : running) {
            read_available(c.out, c.out_text, options_.output_limit);
            read_available(c.err, c.err_text, options_.output_limit);
        }
        for (auto it = running.begin(); it != running.end();) {
            if (!has_exited(*it)) {
                ++it;
                continue;
            }
            // The leader is a zombie: its group id cannot be reused yet, so this reaches only what it left.
            ::kill(-it->pid, SIGKILL);
            read_available(it->out, it->out_text, options_.output_limit);
            read_available(it->err, it->err_text, options_.output_limit);
            const exit_info exit = reap(it->pid);
            table.forget(it->pid);
            // What it left outside its group (a setsid daemon) was reparented to us: end it now, so it
            // does not act on the server as if it were the client.
            const std::uint64_t orphans = table.kill_orphans(options_.kill_grace);
            stats_.orphans_killed += orphans;
            ++stats_.finished;
            processes.push_back(record::process_record{it->op, it->pid, it->started_ns, since(ctx.run_start, ctx.clk.now()),
                                               exit.status, exit.signal, it->signalled});
            out_all.append(it->out_text, options_.output_limit);
            err_all.append(it->err_text, options_.output_limit);
            if (!is_control(it->op)) --clients_running;
            it = running.erase(it);
        }
    }

    std::sort(processes.begin(), processes.end(),
              [](const record::process_record& a, const record::process_record& b) { return a.op < b.op; });
    stats_.orphans_killed += table.kill_orphans(options_.kill_grace);
    record::command_result cr;
    const auto failed = std::find_if(processes.begin(), processes.end(),
                                     [](const record::process_record& p) { return p.exit_status != 0; });
    if (failed != processes.end()) cr.exit_status = failed->exit_status;
    cr.stdout_text = std::move(out_all).finish();
    cr.stderr_text = std::move(err_all).finish();
    cr.killed = std::any_of(processes.begin(), processes.end(), [](const record::process_record& p) { return p.killed; });
    cr.processes = std::move(processes);
    cr.start_error = std::move(start_error);
    result.command = std::move(cr);
    return result;
}

std::optional<command_config> parse_command_config(config::table_reader& client, const client_overrides& overrides) {
    return read_command(client, overrides);
}

namespace {

// Every key read_command reads (driver.hpp: other drivers' tables reject them by name).
constexpr std::string_view command_keys[] = {"command",    "mode",         "operations", "concurrency",
                                             "kill_grace", "output_limit", "deadline",   "max_attempts",
                                             "attempt_timeout", "backoff", "service_config"};

std::unique_ptr<driver> make_command(config::table_reader& client, const client_overrides& overrides) {
    std::optional<command_config> config = parse_command_config(client, overrides);
    if (!config) return nullptr;
    return std::make_unique<command_driver>(std::move(config->argv), config->options, std::move(config->declared));
}

}  // namespace

const core::registration<driver_info> registered{
    "command", "any program, run once or once per operation, with the server's URL in FAULTLINE_URL",
    command_keys, &make_command};

}  // namespace faultline::drivers
