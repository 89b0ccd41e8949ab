// The `tcp` mode of a proxy set (faultline/server/proxy_set.hpp): a tcp_proxy whose toxics are added
// and removed at runtime through its own control API, with its journal of connections kept in memory
// for that API (and streamed to a file when its definition names one). Its API, under
// /__faultline/proxies/{name}/ (or /__faultline/ for the set's default proxy):
//   GET    health            {"status":"ok"|"failing","round":N,"journal_error":"…"}
//   GET    toxics            {"toxics":[{"name","kind","stream","toxicity"}, …]}, in the order they act
//   POST   toxics            add one: a JSON object (or a TOML table) with a [[toxic]] table's keys; 201
//   DELETE toxics/{name}     remove one (404 if there is none by that name)
//   DELETE toxics            remove every toxic
//   POST   reset             forget the connections in memory, start the next round: {"reset":true,"round":N}
//   GET    journal           this round's connections, as JSON Lines (connection_journal.hpp's records)
//   GET    stats             the proxy's counters and the journal's
// A change replaces the proxy's whole list (tcp_proxy::replace_toxics): connections accepted after it
// get the new list; open ones keep the toxics they were accepted with until they end.
// Thread-safe: the API runs on the set's control thread, records arrive on the proxy's.
#pragma once

#include "faultline/server/proxy_set.hpp"
#include "faultline/tcp/connection_journal.hpp"
#include "faultline/tcp/tcp_proxy.hpp"
#include "faultline/tcp/toxics_config.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::tcp {

class tcp_named_proxy final : public server::named_proxy {
public:
    // Connections kept in memory for GET journal; later ones of the round are counted, and kept in
    // the journal file only.
    static constexpr std::size_t max_records_in_memory = 100'000;

    // Opens the journal file first when `journal_path` is not empty: std::system_error when it cannot.
    tcp_named_proxy(toxic_set toxics, tcp_proxy_options options, const std::string& journal_path);
    ~tcp_named_proxy() override;

    // The mode: [[proxy.toxic]] tables, connect_timeout, max_hold, max_connections.
    static server::proxy_mode mode();

    boost::system::error_code start() override;
    void stop() override;
    std::uint16_t port() const override;
    std::string url() const override;
    server::control_response control(const server::control_request& req, std::string_view target,
                                      std::string_view peer) override;

    const tcp_proxy& running() const { return proxy_; }
    // The journal file's failure ("" = none, or no file).
    std::string journal_error() const;

private:
    void record(const connection_record& r);
    server::control_response toxics_route(const server::control_request& req, std::string_view rest);

    const std::string address_;
    std::unique_ptr<connection_journal> file_;
    mutable std::mutex records_mutex_;
    std::vector<connection_record> records_;  // this round's, up to max_records_in_memory
    std::uint64_t not_in_memory_ = 0;         // this round's past the bound
    std::uint64_t round_ = 1;
    std::mutex toxics_mutex_;  // one change of the list at a time: each copies and replaces it
    tcp_proxy proxy_;          // last: stopped first, while what its sink writes to exists
};

}  // namespace faultline::tcp
