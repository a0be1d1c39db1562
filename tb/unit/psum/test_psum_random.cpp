// PSUM unit bench, random traffic (psum_bench.hpp, psum_traffic.hpp): phase after phase of
// tensor-engine results and engine-port requests, on the tiny build (3 read and 2 write engine
// ports) and the trn2 build (1 of each); the traffic must meet every case it is meant to.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include "Vncore_psum_tiny.h"
#include "Vncore_psum_tiny___024root.h"
#include "Vncore_psum_trn2.h"
#include "Vncore_psum_trn2___024root.h"
#include "bench_dut.hpp"
#include "met_cases.hpp"
#include "psum_bench.hpp"

using namespace psum_tb;

namespace {

// The phases of a random run.
std::vector<Traffic> phases(const Geometry& g) {
  const unsigned hp = g.P / 3;
  return {
      {"results streamed, engines anywhere", PeMode::streams, 0.8, 0, 0.6, 0.0, false, 0, 0, false},
      {"results streamed, engines on the banks and lanes being written", PeMode::streams, 0.8, 0, 0.7, 0.7, true, 0, 0, false},
      {"random lanes, engines on bank 1", PeMode::lanes, 0.4, 0, 0.7, 0.6, false, 1, hp, false},
      {"accumulation groups of special values, engines on the lanes being written", PeMode::streams, 0.9, 0, 0.5, 0.4, true, 0, 0, true},
      {"random lanes on 6 words of bank 2, special values", PeMode::lanes, 0.7, 6, 0.6, 0.5, false, 2, hp, true},
      {"no tensor engine, engines at full rate on bank 0", PeMode::none, 0.0, 0, 1.0, 0.7, false, 0, hp, false},
      {"everything at full rate", PeMode::lanes, 1.0, 0, 1.0, 0.5, false, 3 % g.banks, hp, false},
  };
}

std::string tally_report(const PsumTally& t) {
  std::ostringstream s;
  s << t.cycles << " cycles; tensor engine: " << t.pe_writes << " words written, " << t.pe_acc << " accumulated ("
    << t.pe_acc_nan << " with a NaN, " << t.pe_acc_inf << " with an infinity, " << t.pe_acc_inf_minus_inf
    << " inf - inf, " << t.pe_acc_sub << " with a subnormal operand or sum, " << t.pe_acc_zero_signs
    << " +0 + -0, " << t.pe_acc_neg_zero << " summing to -0, " << t.pe_acc_same_word_next_cycle
    << " onto the word the lane accumulated the cycle before); engine ports: " << t.rd_grants << " reads and "
    << t.wr_grants << " writes granted, " << t.refused_by_pe << " refusals for the tensor engine, " << t.refused_by_port
    << " for a lower port, " << t.same_word_rw << " lanes read and written in one cycle";
  return s.str();
}

template <class M>
void random_run(const Geometry& g, uint64_t cycles, uint64_t seed) {
  REQUIRE(num::host_float_is_ieee());
  Bench<M> b(g, seed);
  const auto ph = phases(g);
  std::string waits;
  for (const Traffic& t : ph) {
    INFO("seed " << seed << ", phase: " << t.name);
    b.reset_max_wait();
    const bool ok = b.run(t, cycles / ph.size()) && b.drain();
    INFO(b.error());
    REQUIRE(ok);
    waits += "\n  " + std::string(t.name) + ": " + std::to_string(b.tally().max_wait);
  }
  const PsumTally& t = b.tally();
  // (Refusals have no bound: the tensor engine always wins, and writing every lane every cycle
  // it shuts the engine ports out for as long as it does.)
  WARN("psum " << g.preset << ", " << g.nr << " read + " << g.nw << " write engine ports: " << tally_report(t)
               << "; longest wait of a request (cycles) by phase:" << waits);
  // the traffic met every case it is meant to
  CHECK(t.pe_acc > t.pe_writes / 4);
  ncore::tb::check_met({{"an accumulation with a NaN", t.pe_acc_nan}, {"an accumulation giving -0", t.pe_acc_neg_zero},
                        {"an accumulation of inf and -inf", t.pe_acc_inf_minus_inf},
                        {"an accumulation with a subnormal", t.pe_acc_sub},
                        {"an accumulation of +0 and -0", t.pe_acc_zero_signs},
                        {"an accumulation into the word of the cycle before", t.pe_acc_same_word_next_cycle},
                        {"an engine request refused for the tensor engine", t.refused_by_pe},
                        {"an engine read and write of one word in one cycle", t.same_word_rw}});
  if (g.nr > 1 || g.nw > 1) CHECK(t.refused_by_port > 0);
}

}  // namespace

TEST_CASE("PSUM random traffic, tiny preset, 3 read and 2 write engine ports", "[psum]") {
  random_run<Vncore_psum_tiny>(tiny_geo(), 210000, 1);
}

TEST_CASE("PSUM random traffic, trn2 preset, 1 read and 1 write engine port", "[psum]") {
  random_run<Vncore_psum_trn2>(trn2_geo(), 21000, 2);
}

TEST_CASE("PSUM random traffic, long run", "[psum][.long]") {
  const uint64_t n = env_count("NCORE_PSUM_LONG_CYCLES", 2000000);
  random_run<Vncore_psum_tiny>(tiny_geo(), n, 11);
  random_run<Vncore_psum_trn2>(trn2_geo(), n / 10, 12);
}

