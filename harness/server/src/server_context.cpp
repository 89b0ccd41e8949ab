#include "faultline/server/server_context.hpp"

#include <utility>

namespace faultline::harness {

server_context::server_context(const model_config& model_cfg, std::vector<faults::rule> rules,
                               std::uint64_t seed, journal_options journal_cfg, faults::engine_limits limits)
    : model{model_cfg.service, effects},
      idempotency{model_cfg.idempotency},
      identity{model_cfg.identity},
      records{std::move(journal_cfg)},
      engine{seed, std::move(rules), limits} {}

void server_context::reset() {
    records.reset();
    effects.reset();
    attempts.reset();
    idempotency.reset();
    model.reset();
}

}  // namespace faultline::harness
