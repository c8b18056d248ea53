#pragma once
// Counting the allocations of a piece of code: dltune_unit replaces the global operator new
// (tests/unit/monitor/warm_no_allocation_test.cpp), which counts the calls made on this thread
// between start and stop.
namespace dltune::testing {

void start_counting_allocations();
// The number of allocations on this thread since start.
long stop_counting_allocations();

}  // namespace dltune::testing
