#include "faultline/testing/matchers.hpp"

#include "errors.hpp"

#include "faultline/checks/check.hpp"
#include "faultline/config/document.hpp"
#include "faultline/reports/console.hpp"

#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace faultline::testing {

namespace {

// A verdict as `faultline run` prints it: the summary, then the evidence of a verdict that did not pass.
void explain(const record::verdict& v, std::ostream& out) {
    out << v.check << ": " << record::to_string(v.outcome()) << " — " << v.summary;
    if (!v.passed) out << "\n" << reports::console_evidence(v, "    ");
}

// One check, parsed from its [[expect]] table exactly as a scenario's is.
class check_matcher final : public ::testing::MatcherInterface<const record::run_record&> {
public:
    explicit check_matcher(std::string_view expect_table_toml) : text_(expect_table_toml) {
        const config::document doc = config::parse_document(text_, "matcher");
        if (!doc.table) detail::throw_config_errors("faultline::testing matcher: not TOML:", doc.errors);
        config_errors errors;
        auto parsed = checks::parse_expectation(*doc.table, "matcher", errors);
        if (!parsed) detail::throw_config_errors("faultline::testing matcher: not a valid [[expect]] table:", errors);
        expectation_ = std::move(*parsed);
    }

    bool MatchAndExplain(const record::run_record& run, ::testing::MatchResultListener* listener) const override {
        if (!run.harness_error.empty()) {
            *listener << "the run itself failed: " << run.harness_error;
            return false;
        }
        const record::verdict v = checks::evaluate(expectation_, run);
        if (listener->IsInterested()) explain(v, *listener->stream());
        return v.outcome() == record::verdict_outcome::pass;
    }

    void DescribeTo(std::ostream* os) const override { *os << "satisfies " << description(); }
    void DescribeNegationTo(std::ostream* os) const override { *os << "does not satisfy " << description(); }

private:
    std::string description() const {
        std::string flat;
        for (char c : text_) flat += c == '\n' ? ' ' : c;
        return "faultline check [" + flat + "]";
    }

    std::string text_;
    checks::expectation expectation_;
};

class passes_all_checks final : public ::testing::MatcherInterface<const record::run_record&> {
public:
    bool MatchAndExplain(const record::run_record& run, ::testing::MatchResultListener* listener) const override {
        if (!run.harness_error.empty()) {
            *listener << "the run itself failed: " << run.harness_error;
            return false;
        }
        if (run.verdicts.empty()) {
            *listener << "the record holds no verdicts";
            return false;
        }
        bool all = true;
        for (const auto& v : run.verdicts) {
            if (v.outcome() == record::verdict_outcome::pass) continue;
            if (!all) *listener << "\n";
            all = false;
            if (listener->IsInterested()) explain(v, *listener->stream());
        }
        return all;
    }
    void DescribeTo(std::ostream* os) const override { *os << "passes every check of its scenario"; }
    void DescribeNegationTo(std::ostream* os) const override { *os << "fails a check of its scenario"; }
};

class requested final : public ::testing::MatcherInterface<const record::run_record&> {
public:
    requested(std::string_view method, std::string_view path, ::testing::Cardinality times)
        : method_(method), path_(path), times_(std::move(times)) {}

    bool MatchAndExplain(const record::run_record& run, ::testing::MatchResultListener* listener) const override {
        constexpr std::size_t seqs_named = 10;
        std::size_t count = 0;
        std::string seqs;
        for (const auto& r : run.journal) {
            const std::string_view target = r.target;
            if (std::string_view{r.method} != method_ || target.substr(0, target.find_first_of("?#")) != path_) continue;
            if (++count <= seqs_named) seqs += (count == 1 ? ": #" : ", #") + std::to_string(r.seq);
        }
        if (count > seqs_named) seqs += ", …";
        *listener << method_ << " " << path_ << " was requested " << count << " times" << seqs;
        return times_.IsSatisfiedByCallCount(static_cast<int>(count));
    }

    void DescribeTo(std::ostream* os) const override { *os << "has " << method_ << " " << path_ << " " << expected(); }
    void DescribeNegationTo(std::ostream* os) const override {
        *os << "has not " << method_ << " " << path_ << " " << expected();
    }

private:
    // gmock's own words for the cardinality ("called twice", "called at least once"), for requests.
    std::string expected() const {
        std::ostringstream words;
        times_.DescribeTo(&words);
        std::string text = words.str();
        if (const auto at = text.find("called"); at != std::string::npos) text.replace(at, 6, "requested");
        return text;
    }

    std::string method_;
    std::string path_;
    ::testing::Cardinality times_;
};

std::string milliseconds(std::chrono::milliseconds d) { return '"' + std::to_string(d.count()) + "ms\""; }

}  // namespace

run_matcher Satisfies(std::string_view expect_table_toml) {
    return ::testing::MakeMatcher(new check_matcher(expect_table_toml));
}

run_matcher NoDoubleEffects() { return Satisfies(R"(check = "no_double_effects")"); }

run_matcher RetriesWithinBudget(double ratio, double min_per_sec, std::chrono::milliseconds window) {
    return Satisfies("check = \"retry_budget\"\nratio = " + std::to_string(ratio) +
                     "\nmin_per_sec = " + std::to_string(min_per_sec) + "\nwindow = " + milliseconds(window));
}

run_matcher HonoursDeadline(std::chrono::milliseconds tolerance) {
    return Satisfies("check = \"deadline\"\ntolerance = " + milliseconds(tolerance));
}

run_matcher HonoursRetryAfter(std::chrono::milliseconds tolerance) {
    return Satisfies("check = \"retry_after\"\ntolerance = " + milliseconds(tolerance));
}

run_matcher AttemptsAtMost(std::size_t max) {
    return Satisfies("check = \"max_attempts\"\nmax = " + std::to_string(max));
}

run_matcher NoRetryOnStatus() { return Satisfies(R"(check = "no_retry_on_status")"); }

run_matcher PassesAllChecks() { return ::testing::MakeMatcher(new passes_all_checks); }

run_matcher Requested(std::string_view method, std::string_view path, ::testing::Cardinality times) {
    return ::testing::MakeMatcher(new requested(method, path, std::move(times)));
}

}  // namespace faultline::testing

namespace faultline::record {

void PrintTo(const record::run_record& run, std::ostream* os) {
    constexpr std::size_t attempts_shown = 3;
    std::set<std::string_view> operations;
    for (const auto& r : run.journal) operations.insert(std::string_view{r.operation});
    std::uint64_t fired = 0;
    std::string rules;
    for (const auto& f : run.rule_firings) {
        if (f.fired == 0) continue;
        fired += f.fired;
        rules += (rules.empty() ? "" : ", ") + f.rule + ": " + f.kind + " x" + std::to_string(f.fired);
    }
    *os << "run \"" << run.scenario << "\": " << run.journal.size() << " attempts, " << operations.size()
        << " operations, faults fired " << fired;
    if (!rules.empty()) *os << " (" << rules << ")";
    if (!run.harness_error.empty()) *os << "; harness error: " << run.harness_error;
    for (std::size_t i = 0; i < run.journal.size() && i < attempts_shown; ++i) {
        const auto& r = run.journal[i];
        *os << (i == 0 ? "; first attempts: #" : ", #") << r.seq << " " << std::string_view{r.method} << " "
            << std::string_view{r.target} << ": ";
        if (r.outcome == record::wire_outcome::responded) {
            *os << r.status;
        } else {
            *os << to_string(r.outcome);
        }
        if (!r.fault.empty()) *os << " [" << r.fault << "]";
    }
    if (run.journal.size() > attempts_shown) *os << ", …";
}

}  // namespace faultline::record
