#include "report_output.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

#include "faultline/reports/writer.hpp"

namespace faultline::cli {

namespace {

constexpr std::string_view placeholder = "{scenario}";

std::string formats() {
    std::string out;
    for (const std::string& name : reports::report_registry::instance().names()) {
        out += (out.empty() ? "" : ", ") + name;
    }
    return out;
}

// A FORMAT:PATH spec; `writer` is null when FORMAT is not registered.
struct report_spec {
    std::string format;
    std::string path;
    const reports::report_writer* writer = nullptr;
};

report_spec split_spec(const std::string& spec) {
    const auto colon = spec.find(':');
    report_spec out{spec.substr(0, colon), colon == std::string::npos ? std::string{} : spec.substr(colon + 1)};
    out.writer = reports::report_registry::instance().find(out.format);
    return out;
}

// "" when `spec` is a valid FORMAT:PATH, otherwise why not.
std::string check_spec(const std::string& spec) {
    const report_spec s = split_spec(spec);
    if (s.path.empty()) return "expected FORMAT:PATH (formats: " + formats() + "), got \"" + spec + "\"";
    if (s.writer == nullptr) return "unknown report format \"" + s.format + "\"; allowed: " + formats();
    return {};
}

bool write_file(const std::filesystem::path& path, const std::string& text) {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (ec || !out) {
        std::cerr << "faultline: cannot write " << path.string() << '\n';
        return false;
    }
    return true;
}

// One file per run when the path names the scenario, else one for all runs.
bool write_one(const reports::report_writer& writer, const std::string& path,
               std::span<const record::run_record> runs) {
    if (path.find(placeholder) == std::string::npos) return write_file(path, writer.render(runs));
    bool ok = true;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        ok = write_file(reports::expand_path(path, runs[i].scenario), writer.render(runs.subspan(i, 1))) && ok;
    }
    return ok;
}

}  // namespace

void add_report_options(CLI::App& cmd, report_targets& targets) {
    cmd.add_option("--report", targets.reports,
                   "Write a report: FORMAT:PATH, repeatable; {scenario} in PATH writes one file per scenario "
                   "(formats: `faultline list reports`)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(CLI::Validator(check_spec, "FORMAT:PATH"));
    cmd.add_option("--report-dir", targets.report_dir,
                   "Write every format's file here: <scenario>.json and <scenario>.journal.jsonl per scenario, "
                   "junit.xml for all");
}

bool reads_wire_details(const report_targets& targets) {
    const auto& writers = reports::report_registry::instance().entries();
    if (!targets.report_dir.empty()) {
        for (const reports::report_writer& writer : writers) {
            if (!writer.report_dir_file.empty() && writer.reads_wire_details) return true;
        }
    }
    return std::ranges::any_of(targets.reports, [](const std::string& spec) {
        const report_spec s = split_spec(spec);
        return s.writer != nullptr && s.writer->reads_wire_details;
    });
}

std::string report_targets_problem(const report_targets& targets, std::size_t runs) {
    for (const std::string& spec : targets.reports) {
        const report_spec s = split_spec(spec);
        if (s.writer->one_run_per_file && runs > 1 && s.path.find(placeholder) == std::string::npos) {
            return "--report " + spec + ": a " + s.writer->name +
                   " report describes one scenario; put {scenario} in the path to write one file per scenario";
        }
    }
    return {};
}

bool write_reports(const report_targets& targets, std::span<const record::run_record> runs) {
    bool ok = true;
    for (const std::string& spec : targets.reports) {
        const report_spec s = split_spec(spec);
        ok = write_one(*s.writer, s.path, runs) && ok;
    }
    if (!targets.report_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(targets.report_dir, ec);
        if (ec) {
            std::cerr << "faultline: cannot create " << targets.report_dir << ": " << ec.message() << '\n';
            return false;
        }
        for (const reports::report_writer& writer : reports::report_registry::instance().entries()) {
            if (writer.report_dir_file.empty()) continue;
            const std::filesystem::path path = std::filesystem::path(targets.report_dir) / writer.report_dir_file;
            ok = write_one(writer, path.string(), runs) && ok;
        }
    }
    return ok;
}

runner::exit_code write_reports_for(const report_targets& targets, std::span<const record::run_record> runs,
                                     runner::exit_code code) {
    if (!write_reports(targets, runs)) return runner::worst(code, runner::exit_code::harness_error);
    if (!targets.report_dir.empty()) std::cout << "reports written to " << targets.report_dir << '\n';
    return code;
}

}  // namespace faultline::cli
