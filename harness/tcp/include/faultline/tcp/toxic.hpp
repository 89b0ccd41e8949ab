// The toxic contract and registry of `faultline proxy --mode tcp`. A toxic (after Toxiproxy's) is one
// way a byte pipe misbehaves: latency, a bandwidth limit, slicing, a data limit, a reset, a timeout, a
// refusal. Each is one small file (harness/tcp/src/toxics/<kind>.cpp) holding only its configuration,
// read and validated from its `[[toxic]]` table through the strict config reader; it amends the
// engine's plan for a chunk (or a piece of one, or a new connection) and never touches a socket.
// Whether a toxic acts on a connection at all (toxicity, window, every n-th) is decided by the engine
// (toxics_config.hpp), never by the toxic. Each file registers its kind with one `toxic_registration`
// object; the library is built with faultline_add_registering_library, so those objects survive static
// linking. harness/tcp/README.md is the recipe for adding one.
#pragma once

#include "faultline/config/reader.hpp"
#include "faultline/core/random.hpp"
#include "faultline/core/registry.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::tcp {

// A direction of a connection, as Toxiproxy names them: `upstream` is client -> upstream service,
// `downstream` is upstream service -> client.
enum class stream_direction { upstream, downstream };
std::string_view to_string(stream_direction d);

// How the proxy ends a connection on a toxic's behalf: FIN both ways, or RST both ways (SO_LINGER 0).
enum class link_end { close, reset };
std::string_view to_string(link_end e);

// What the engine knows about a direction when a chunk arrives.
struct stream_state {
    std::uint64_t forwarded = 0;  // bytes of this direction written before this chunk
};

// What happens to one chunk read in a direction. It starts as "forward all of it at once"; every
// toxic active in that direction amends it, in file order.
struct chunk_plan {
    std::size_t forward = 0;            // bytes of the chunk forwarded; the rest are dropped
    std::chrono::nanoseconds delay{0};  // before its first byte is written, counted from the read
    std::optional<link_end> end;        // after forwarding, end the connection this way ...
    std::chrono::nanoseconds end_after{0};  // ... this long after the forwarded bytes were written
};

// The longest piece no toxic limits.
inline constexpr std::size_t unlimited_piece = std::numeric_limits<std::size_t>::max();

// A configured toxic. Immutable after construction, so one instance serves every connection.
class toxic {
public:
    virtual ~toxic() = default;

    // Whether the toxic acts on one direction (its table has a `stream` key) or on the connection.
    virtual bool per_direction() const { return true; }

    // On accept, before the upstream is dialled: end the connection at once, this way.
    virtual std::optional<link_end> on_accept() const { return std::nullopt; }

    // How long after accept the connection is ended (closed, journaled `timeout`); zero means the
    // engine's bound on a held connection (tcp_proxy_options::max_hold).
    virtual std::optional<std::chrono::nanoseconds> lifetime() const { return std::nullopt; }

    // Whether an EOF read in the toxic's direction is passed on (a half-close); a black hole swallows it.
    virtual bool passes_eof() const { return true; }

    // A chunk read in the toxic's direction. `random` is private to this toxic on this connection.
    virtual void on_chunk(chunk_plan&, const stream_state&, random_source&) const {}

    // The forwarded bytes are written in pieces: the largest next piece this toxic allows ...
    virtual std::size_t piece_limit(random_source&) const { return unlimited_piece; }
    // ... and how long to wait before writing a piece of `size` bytes (`first`: the chunk's first).
    virtual std::chrono::nanoseconds piece_wait(std::size_t /*size*/, bool /*first*/) const {
        return std::chrono::nanoseconds{0};
    }
};

// Builds a toxic from its `[[toxic]]` table. The engine's keys (name, kind, stream, toxicity, from,
// for, first, every) are already declared; the factory asks for its own through the typed accessors,
// and the parser's `finish` reports any other key with the allowed ones. Returns a toxic even when it
// recorded errors (the parser discards it); never throws for bad input.
using toxic_factory = std::function<std::shared_ptr<const toxic>(config::table_reader&)>;

struct toxic_info {
    std::string name;     // the TOML `kind = "..."`, equal to the file name
    std::string summary;  // one line saying what it does
    toxic_factory make;
};

using toxic_registry = core::registry<toxic_info>;
// `const toxic_registration registered{"latency", "one-line summary", &latency::make};` in the file.
using toxic_registration = core::registration<toxic_info>;

}  // namespace faultline::tcp
