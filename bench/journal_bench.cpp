// Micro-benchmarks of the server's journal: appending one attempt's record (one thread and two
// contending, as the server's two workers do) against moving the same record into a vector, and
// serialising one record as a JSON Lines line (the file writer's work per record). Figures are recorded in docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "faultline/server/journal.hpp"
#include "faultline/record/journal_json.hpp"

namespace {

using faultline::server::journal;
using faultline::server::journal_options;
using faultline::record::journal_record;
using faultline::record::wire_detail;

// What the fault server records for `GET /` with no fault: the benchmark's hot-path record and its
// wire detail.
journal_record typical_record() {
    journal_record r;
    r.connection = 7;
    r.request_ns = 1'050'000;
    r.response_ns = 1'070'000;
    r.finished_ns = 1'080'000;
    r.method = "GET";
    r.target = "/";
    r.operation = "9f86d081884c7d65";
    r.attempt = 1;
    r.status = 200;
    return r;
}

wire_detail typical_wire() {
    wire_detail w;
    w.accepted_ns = 1'000'000;
    w.body_hash = 0xcbf29ce484222325ULL;
    w.bytes_in = 78;
    w.bytes_out = 96;
    return w;
}

// Memory stays bounded: the journal forgets its records (untimed) every this many appends.
constexpr std::int64_t records_per_reset = 1 << 20;

// References: copying the record and its wire detail (what the journal stores for each attempt)
// into reserved vectors, with their memory faulted in beforehand (the least any in-memory store can
// cost) and fresh from the kernel (what a store that grows as it goes pays in page faults).
void vector_push(benchmark::State& state, bool prefaulted) {
    const journal_record sample = typical_record();
    const wire_detail sample_wire = typical_wire();
    std::vector<journal_record> records;
    std::vector<wire_detail> wire;
    std::int64_t stored = records_per_reset;
    for (auto _ : state) {
        if (stored == records_per_reset) {
            state.PauseTiming();
            records = {};
            wire = {};
            if (prefaulted) {  // touches every page
                records.resize(records_per_reset);
                wire.resize(records_per_reset);
            }
            records.clear();
            wire.clear();
            records.reserve(records_per_reset);
            wire.reserve(records_per_reset);
            stored = 0;
            state.ResumeTiming();
        }
        records.push_back(sample);
        wire.push_back(sample_wire);
        ++stored;
    }
}

void BM_vector_push_prefaulted(benchmark::State& state) { vector_push(state, true); }
void BM_vector_push_fresh_memory(benchmark::State& state) { vector_push(state, false); }
BENCHMARK(BM_vector_push_prefaulted);
BENCHMARK(BM_vector_push_fresh_memory);

// One journal for all threads of a run (the benchmark library runs the threads of one benchmark
// together; the first thread creates it and the last tears it down).
journal* shared_journal = nullptr;

void BM_journal_append(benchmark::State& state) {
    if (state.thread_index() == 0) shared_journal = new journal{journal_options{2 * records_per_reset, ""}};
    const journal_record sample = typical_record();
    const wire_detail sample_wire = typical_wire();
    std::int64_t appended = 0;
    for (auto _ : state) {
        if (state.thread_index() == 0 && ++appended == records_per_reset) {
            state.PauseTiming();
            shared_journal->reset();
            appended = 0;
            state.ResumeTiming();
        }
        benchmark::DoNotOptimize(shared_journal->append(sample, sample_wire));
    }
    if (state.thread_index() == 0) {
        delete shared_journal;
        shared_journal = nullptr;
    }
}
BENCHMARK(BM_journal_append)->Threads(1)->Threads(2)->UseRealTime();

void BM_jsonl_line(benchmark::State& state) {
    const journal_record sample = typical_record();
    const wire_detail sample_wire = typical_wire();
    std::string line;
    for (auto _ : state) {
        line.clear();
        faultline::record::append_jsonl_line(line, sample, &sample_wire);
        benchmark::DoNotOptimize(line.data());
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(line.size()));
}
BENCHMARK(BM_jsonl_line);

}  // namespace

BENCHMARK_MAIN();
