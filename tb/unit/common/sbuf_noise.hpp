// Other traffic on the SBUF's DMA ports of an engine bench's wrapper (dr_req_i and dw_req_i,
// ncore_mem_pkg's line port structs: the tiny preset's two DMA ports), so that the engine under
// test loses SBUF arbitration now and then: line reads anywhere and line writes to the last
// `noise_bytes` of every partition, each request held until it is granted, as a DMA engine's
// would be. Granted writes are mirrored into the
// golden model, so the instructions under test must stay out of those bytes.
#pragma once

#include <array>
#include <cstdint>
#include <random>

#include "golden_model.hpp"
#include "mem_ports.hpp"

namespace ncore::tb {

class SbufDmaNoise {
 public:
  static constexpr unsigned kPorts = 2;   // DMA ports driven
  static constexpr unsigned kLineB = 16;  // SBUF line bytes

  // A free port asks with probability rate / 5 per cycle.
  SbufDmaNoise(std::mt19937_64& rng, unsigned partitions, unsigned sbuf_bytes, unsigned noise_bytes, unsigned rate)
      : rng_(rng), P_(partitions), lines_(sbuf_bytes / kLineB), noise_lines_(noise_bytes / kLineB), rate_(rate),
        widths_{partitions, log2(sbuf_bytes)} {}

  // New requests on the free ports, then every port's request onto the model's inputs.
  template <class M>
  void drive(M& m) {
    for (unsigned d = 0; d < kPorts; ++d) {
      if (!((rd_on_ >> d) & 1) && rng_() % 5 < rate_) {
        rd_on_ |= 1u << d;
        rd_[d] = {unsigned(rng_() % P_), unsigned(rng_() % lines_)};
      }
      if (!((wr_on_ >> d) & 1) && rng_() % 5 < rate_) {
        wr_on_ |= 1u << d;
        wr_[d] = {unsigned(rng_() % P_), unsigned(lines_ - noise_lines_ + rng_() % noise_lines_)};
        ben_[d] = uint16_t(rng_());
        for (unsigned w = 0; w < 4; ++w) data_[d][w] = uint32_t(rng_());
      }
    }
    drive_requests(m);
  }

  // The requests granted in this cycle (before the edge) leave; granted writes land in `golden`.
  // Returns how many were granted.
  template <class M>
  unsigned retire(const M& m, GoldenModel& golden) {
    unsigned n = 0;
    for (unsigned d = 0; d < kPorts; ++d) {
      if (((rd_on_ >> d) & 1) && line_rd_gnt(m.dr_rsp_o[d])) {
        rd_on_ &= ~(1u << d);
        ++n;
      }
      if (!((wr_on_ >> d) & 1) || !(m.dw_rsp_o[d] & 1)) continue;
      wr_on_ &= ~(1u << d);
      ++n;
      uint8_t* line = golden.sbuf(wr_[d][0]) + kLineB * wr_[d][1];
      for (unsigned b = 0; b < kLineB; ++b)
        if ((ben_[d] >> b) & 1) line[b] = uint8_t(data_[d][b / 4] >> (8 * (b % 4)));
    }
    return n;
  }

  // Nothing pending, nothing asked.
  template <class M>
  void stop(M& m) {
    rd_on_ = wr_on_ = 0;
    drive_requests(m);
  }

 private:
  template <class M>
  void drive_requests(M& m) const {
    for (unsigned d = 0; d < kPorts; ++d) {
      put_line_rd_req(m.dr_req_i[d], widths_, (rd_on_ >> d) & 1, rd_[d][0], rd_[d][1]);
      put_line_wr_req(m.dw_req_i[d], widths_, (wr_on_ >> d) & 1, wr_[d][0], wr_[d][1], ben_[d], data_[d]);
    }
  }

  static unsigned log2(unsigned v) {
    unsigned n = 0;
    while ((1u << n) < v) ++n;
    return n;
  }

  std::mt19937_64& rng_;
  unsigned P_, lines_, noise_lines_, rate_;
  MemWidths widths_;  // the ports' structs (the wrapper's preset: its partitions, log2 of its SBUF bytes)
  uint32_t rd_on_ = 0, wr_on_ = 0;                         // requests pending, per port
  std::array<std::array<unsigned, 2>, kPorts> rd_{}, wr_{};  // [port] = {partition, line}
  std::array<uint16_t, kPorts> ben_{};
  std::array<std::array<uint32_t, 4>, kPorts> data_{};
};

}  // namespace ncore::tb
