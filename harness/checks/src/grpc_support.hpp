// Helpers shared by the grpc_* checks (internal to harness/checks/src): the gRPC service config a
// check judges against (its `service_config` file, else the one the client declared), which method
// config and policy an operation falls under, and how an attempt ended as gRFC A6 decides whether
// another attempt may follow it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/record/grpc_service_config.hpp"
#include "support.hpp"

namespace faultline::checks {

// The machine's noise the grpc_* timing checks allow by default; each takes `tolerance`.
inline constexpr std::chrono::milliseconds grpc_default_tolerance{50};

// The service config a grpc_* check judges against: the file its `service_config` key names, read and
// validated when the [[expect]] table is parsed (a relative path is the scenario file's folder's), else
// the config the client declared (`run.declared.grpc`: [client] service_config). Immutable; copies share the parsed config.
class grpc_config_source {
public:
    // Reads the optional `service_config` key; a file that cannot be read or is not a valid service
    // config is reported through `p` (the key's position, then the file's own errors).
    static grpc_config_source read(config::table_reader& p);
    // Null when neither gives one.
    const record::grpc_service_config* get(const record::run_record& run) const;

private:
    std::shared_ptr<const record::grpc_service_config> own_;
};

// The verdict of a check that has no service config to judge against: insufficient evidence, saying
// how to give one. Never a pass: nothing was judged.
record::verdict no_service_config();

// The policy a check judges by. `any`: every gRPC operation (one with a status), a method without a
// retryPolicy or hedgingPolicy held to gRPC's default: one attempt, and only transparent retries.
enum class grpc_policy { retry, hedging, either, any };
// The method config of an operation (by its first attempt's target) when it has the policy asked for;
// under `any`, an empty method config for a gRPC operation whose method has no policy.
const record::grpc_method_config* method_of(const record::grpc_service_config& config, const record::operation_attempts& op, grpc_policy p);
// "a retryPolicy", "a hedgingPolicy", "a retryPolicy or hedgingPolicy".
std::string_view policy_name(grpc_policy p);
// "; 2 operations not judged (no retryPolicy for their method)", or "" when every one was.
std::string not_judged(std::size_t operations, grpc_policy p);

// A grpc_* check: finds its service config (none: no_service_config()) and judges the run against it.
// Holds only its configuration; immutable, so one instance may be evaluated from several threads.
class grpc_check : public check {
public:
    record::verdict evaluate(const record::run_record& run, const record::operation_groups& operations) const final {
        const record::grpc_service_config* config = source_.get(run);
        if (config == nullptr) return no_service_config();
        return judge(*config, run, operations);
    }

protected:
    grpc_check(grpc_config_source source, grpc_policy policy) : source_{std::move(source)}, policy_{policy} {}

    virtual record::verdict judge(const record::grpc_service_config& config, const record::run_record& run,
                          const record::operation_groups& operations) const = 0;

    // Calls judge_operation(op, method) for each operation whose method has the check's policy, in
    // order; returns how many had none (not judged).
    template <class Judge>
    std::size_t for_each_judged(const record::grpc_service_config& config, const record::operation_groups& operations,
                                Judge&& judge_operation) const {
        std::size_t skipped = 0;
        for (const auto& op : operations) {
            if (const record::grpc_method_config* m = method_of(config, op, policy_)) judge_operation(op, *m);
            else ++skipped;
        }
        return skipped;
    }
    // The summary's note on the operations not judged ("" when none).
    std::string not_judged_note(std::size_t skipped) const { return not_judged(skipped, policy_); }

private:
    grpc_config_source source_;
    grpc_policy policy_;
};

// How an attempt ended, for whether another may follow it (gRFC A6).
enum class grpc_end {
    refused,    // RST_STREAM REFUSED_STREAM (fault "refused_stream"): never processed, a transparent retry may follow
    committed,  // response headers went out, then the call failed (outcome "truncated"): A6's commit point
    stop,       // a negative grpc-retry-pushback-ms: "do not retry"
    ok,
    retryable,  // a status in the method's retryableStatusCodes (hedging: nonFatalStatusCodes)
    fatal,      // any other status
    unknown,    // no status: the stream ended otherwise (reset, hung, client gone); what the client saw is unknown
};
grpc_end classify(const record::journal_record& r, const record::grpc_method_config& m);
// Never processed, so a transparent retry may follow: fault "refused_stream", or a "goaway" whose
// last-stream-id stopped below the stream (nothing committed).
bool refused(const record::journal_record& r);

// The attempt's gRPC status name ("UNAVAILABLE"), or "no status (reset)".
std::string grpc_status_text(const record::journal_record& r);
// "[UNAVAILABLE, ABORTED]".
std::string codes_text(const std::vector<grpc_status>& codes);
// "retryableStatusCodes [UNAVAILABLE]" or "nonFatalStatusCodes [UNAVAILABLE]".
std::string method_codes_text(const record::grpc_method_config& m);
// The policy's effective maxAttempts (at most 5).
std::uint32_t max_attempts_of(const record::grpc_method_config& m);

// Reads `tolerance` (default grpc_default_tolerance).
std::chrono::nanoseconds read_tolerance(config::table_reader& p);

}  // namespace faultline::checks
