// The check a random run's counts end with: the traffic met every case it is meant to (each
// count, named, above zero).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <utility>

namespace ncore::tb {

inline void check_met(std::initializer_list<std::pair<const char*, uint64_t>> counts) {
  for (const auto& [name, n] : counts) {
    INFO("the run met " << name << " " << n << " times");
    CHECK(n > 0);
  }
}

}  // namespace ncore::tb
