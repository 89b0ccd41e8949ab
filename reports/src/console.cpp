#include "faultline/reports/console.hpp"
#include "faultline/reports/writer.hpp"

#include <algorithm>

#include "text.hpp"

namespace faultline::reports {

namespace {

constexpr std::string_view green = "\x1b[32m";
constexpr std::string_view red = "\x1b[31m";
constexpr std::string_view yellow = "\x1b[33m";
constexpr std::string_view reset = "\x1b[0m";

// Quotes a shell word unless it is made only of characters every shell leaves alone.
std::string shell_word(std::string_view word) {
    bool plain = !word.empty();
    for (char c : word) {
        const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                          c == '-' || c == '.' || c == '/' || c == ':' || c == '+' || c == '=' || c == ',';
        plain = plain && safe;
    }
    if (plain) return std::string(word);
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The last `n` lines of a text, for a short look at a command's output.
std::string tail_lines(std::string_view text, std::size_t n) {
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    std::size_t start = text.size();
    for (std::size_t seen = 0; start > 0; --start) {
        if (text[start - 1] == '\n' && ++seen == n) break;
    }
    return std::string(text.substr(start));
}

// The colour and the word (or symbol) for an outcome.
std::pair<std::string_view, std::string_view> mark(record::verdict_outcome outcome, std::string_view pass,
                                                   std::string_view fail, std::string_view insufficient) {
    switch (outcome) {
        case record::verdict_outcome::pass: return {green, pass};
        case record::verdict_outcome::insufficient_evidence: return {yellow, insufficient};
        case record::verdict_outcome::fail: break;
    }
    return {red, fail};
}

// "3 processes: 1 exited non-zero, 0 killed at the time limit; longest 2.600s (process 2, pid 4242)".
std::string processes_line(const std::vector<record::process_record>& processes, std::string_view killed_when) {
    const auto non_zero = std::count_if(processes.begin(), processes.end(),
                                        [](const record::process_record& p) { return p.exit_status != 0; });
    const auto killed = std::count_if(processes.begin(), processes.end(),
                                      [](const record::process_record& p) { return p.killed; });
    const auto life = [](const record::process_record& p) { return p.finished_ns - p.started_ns; };
    const record::process_record& longest = *std::max_element(
        processes.begin(), processes.end(),
        [&](const record::process_record& a, const record::process_record& b) { return life(a) < life(b); });
    return std::to_string(processes.size()) + " processes: " + std::to_string(non_zero) + " exited non-zero, " +
           std::to_string(killed) + " killed " + std::string(killed_when) + "; longest " +
           detail::seconds(std::chrono::nanoseconds{life(longest)}) + "s (process " + std::to_string(longest.op) +
           ", pid " + std::to_string(longest.pid) + ")";
}

}  // namespace

std::string replay_command(const record::run_record& run) {
    return "faultline run " + shell_word(run.scenario_file.empty() ? run.scenario : run.scenario_file) + " --seed " +
           std::to_string(run.seed);
}

std::string console_evidence(const record::verdict& v, std::string_view indent) {
    return detail::printable(detail::evidence_text(v, indent));
}

std::string console_report(const record::run_record& run, const console_options& options) {
    const auto paint = [&](std::string_view colour, std::string_view text) {
        return options.color ? std::string(colour) + std::string(text) + std::string(reset) : std::string(text);
    };
    const detail::run_counts counts = detail::count(run);
    const auto [run_colour, run_word] = mark(record::outcome_of(run), "PASS", "FAIL", "INSUFFICIENT EVIDENCE");
    // An interrupted run's verdicts judge only what ran before the signal; the header says so.
    const std::string header = std::string(run_word) + (run.interrupted ? " (interrupted)" : "");
    std::string out = paint(run_colour, header) + " " + detail::printable(run.scenario) +
                      "  seed " + std::to_string(run.seed) + "  " + detail::seconds(run.duration) + "s  " +
                      std::to_string(counts.operations) + " operations, " + std::to_string(counts.attempts) +
                      " attempts, " + std::to_string(counts.effects) + " effects\n";
    if (options.header_only) return out;
    if (run.interrupted) out += "  " + paint(yellow, detail::interruption_text(run)) + "\n";
    for (const record::verdict& v : run.verdicts) {
        if (v.passed && !options.show_passed) continue;
        const auto [colour, symbol] = mark(v.outcome(), "✔", "✘", "?");
        out += "  " + paint(colour, symbol) + " " + detail::printable(v.check) + ": " +
               detail::printable(v.summary) + "\n";
        if (!v.passed) out += console_evidence(v, "      ");
    }
    for (const record::rule_firing& f : run.rule_firings) {
        out += "  " + detail::printable(detail::firing_text(f)) + "\n";
    }
    for (const record::rule_firing* f : record::never_fired(run)) {
        out += "  " + paint(yellow, "warning: ") + detail::printable(detail::never_fired_text(*f, run.strict)) + "\n";
    }
    if (const std::string events = detail::server_event_counts(run); !events.empty()) {
        out += "  server events: " + events + "\n";
    }
    if (run.command) {
        const record::command_result& c = *run.command;
        const std::string killed_when = run.interrupted ? "on " + record::signal_name(run.interrupted->signal)
                                                        : std::string{"at the time limit"};
        out += "  command: " + detail::printable(detail::command_status_text(c, killed_when)) + "\n";
        if (!c.processes.empty()) out += "    " + processes_line(c.processes, killed_when) + "\n";
        for (const auto& [name, text] : {std::pair{"stdout", &c.stdout_text}, std::pair{"stderr", &c.stderr_text}}) {
            const std::string tail = tail_lines(*text, 5);
            if (tail.empty()) continue;
            out += std::string("    ") + name + " (last lines):\n";
            std::size_t start = 0;
            while (start <= tail.size()) {
                const std::size_t end = tail.find('\n', start);
                out += "      " + detail::printable(tail.substr(start, end == std::string::npos ? end : end - start)) +
                       "\n";
                if (end == std::string::npos) break;
                start = end + 1;
            }
        }
    }
    if (!run.harness_error.empty()) out += "  " + paint(red, "harness error: ") + detail::printable(run.harness_error) + "\n";
    if (options.show_replay) out += "  replay: " + detail::printable(replay_command(run)) + "\n";
    return out;
}

std::string console_not_passed(std::span<const record::run_record> runs, const console_options& options) {
    std::string out;
    for (const record::run_record& run : runs) {
        const record::verdict_outcome outcome = record::outcome_of(run);
        if (outcome == record::verdict_outcome::pass) continue;
        const auto [colour, word] = mark(outcome, "PASS", "FAIL", "INSUFFICIENT EVIDENCE");
        out += "  " + (options.color ? std::string(colour) + std::string(word) + std::string(reset) : std::string(word)) +
               " " + detail::printable(run.scenario);
        if (options.show_replay) out += "  " + detail::printable(replay_command(run));
        out += "\n";
    }
    return out.empty() ? out : "not passed:\n" + out;
}

namespace {

// The console report as a file: every run's report, uncoloured, in order.
std::string console_file(std::span<const record::run_record> runs) {
    std::string out;
    for (const record::run_record& run : runs) out += console_report(run);
    return out;
}

const report_registration registered{"console", "what `faultline run` prints, without colour", &console_file, ""};

}  // namespace

}  // namespace faultline::reports
