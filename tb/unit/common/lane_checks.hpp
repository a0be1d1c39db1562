// Checks the lane-engine tests (tb/unit/dve, tb/unit/act) make the same way on a LaneBench:
// an instruction run in every clock-enable mode, and a result checked against hand-computed
// words before it is checked against the golden model.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "lane_bench.hpp"
#include "ncore/isa_gen.hpp"
#include "ncore/program.hpp"

namespace ncore::tb {

// Runs `insn` in clock-enable mode `ce` and holds it to the golden model (both memories after
// it) and to the protocol both lane engines document: exactly one rd_start pulse, before done, and
// exactly one done; not ready until done, ready again after it; no request in the first
// `start_cycles` engine cycles (the access start); at least `min_ii` engine cycles. Returns what
// the run showed.
template <class B>
RunStats run_and_check(B& b, const isa::Insn& insn, CeMode ce, uint64_t start_cycles, uint64_t min_ii) {
  RunStats st;
  REQUIRE(b.run(insn, ce, st));
  const std::string diff = b.check(insn);
  INFO(diff);
  REQUIRE(diff.empty());
  INFO("engine cycles " << st.engine_cycles << ", rd_start at " << st.rd_start_cycle << ", first request at "
                        << st.first_req_cycle);
  REQUIRE(st.dones == 1);
  REQUIRE(st.rd_starts == 1);
  REQUIRE(st.rd_start_cycle >= 1);
  REQUIRE(uint64_t(st.rd_start_cycle) < st.engine_cycles);  // strictly before the done edge
  REQUIRE_FALSE(st.ready_while_busy);
  REQUIRE(st.idle_after_done);
  REQUIRE(st.first_req_cycle >= int64_t(start_cycles));
  REQUIRE(st.engine_cycles >= min_ii);
  return st;
}

// Runs `insn` once in each clock-enable mode (always high, ncore_clk_en at ce_num/ce_den, random);
// every run must leave the golden model's memories, and take the same engine cycles whatever the
// mode: as many clocks as engine cycles with the enable high, ce_den clocks per ce_num engine
// cycles (within a period) with the divider. Returns the engine cycles.
template <class B>
uint64_t cycles_in_every_ce_mode(B& b, const isa::Insn& insn, uint64_t ce_num, uint64_t ce_den) {
  uint64_t per_mode[3];
  for (int m = 0; m < 3; ++m) {
    const CeMode ce = static_cast<CeMode>(m);
    RunStats st;
    REQUIRE(b.run(insn, ce, st));
    INFO(to_string(ce));
    const std::string diff = b.check(insn);
    INFO(diff);
    REQUIRE(diff.empty());
    per_mode[m] = st.engine_cycles;
    if (ce == CeMode::high) CHECK(st.clocks == st.engine_cycles);
    if (ce == CeMode::divider) {
      CHECK(st.clocks * ce_num >= (st.engine_cycles - 1) * ce_den);
      CHECK(st.clocks * ce_num <= (st.engine_cycles + 1) * ce_den);
    }
  }
  CHECK(per_mode[1] == per_mode[0]);  // the engine's own cycles do not depend on the enable
  CHECK(per_mode[2] == per_mode[0]);
  return per_mode[0];
}

// Runs `insn` (random clock enable); words [w0, w0 + n) of SBUF partitions [0, np) must be want[],
// worked out by hand, and then both memories the golden model's.
template <class B>
void check_by_hand(B& b, const isa::Insn& insn, unsigned np, unsigned w0, const uint32_t* want, unsigned n) {
  INFO(format_insn(insn));
  RunStats st;
  REQUIRE(b.run(insn, CeMode::random, st));
  for (unsigned p = 0; p < np; ++p)
    for (unsigned k = 0; k < n; ++k) {
      INFO("partition " << p << " element " << k);
      CHECK(b.rtl_sbuf(p, w0 + k) == want[k]);
    }
  const std::string diff = b.check(insn);
  INFO(diff);
  CHECK(diff.empty());
}

}  // namespace ncore::tb
