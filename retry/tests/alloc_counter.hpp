// Counts heap allocations made through the global operator new in this test program (the
// replacement lives in alloc_counter.cpp), to prove that a code path allocates nothing.
#pragma once

namespace faultline::retry::testing {

long allocation_count();

}  // namespace faultline::retry::testing
