// Other traffic on the SBUF's DMA ports of an engine bench's wrapper (dr_* and dw_*: the tiny
// preset's two DMA ports), so that the engine under test loses SBUF arbitration now and then:
// line reads anywhere and line writes to the last `noise_bytes` of every partition, each request
// held until it is granted, as a DMA engine's would be. Granted writes are mirrored into the
// golden model, so the instructions under test must stay out of those bytes.
#pragma once

#include <array>
#include <cstdint>
#include <random>

#include "bench_bits.hpp"
#include "golden_model.hpp"

namespace ncore::tb {

class SbufDmaNoise {
 public:
  static constexpr unsigned kPorts = 2;   // DMA ports driven
  static constexpr unsigned kLineB = 16;  // SBUF line bytes

  // A free port asks with probability rate / 5 per cycle.
  SbufDmaNoise(std::mt19937_64& rng, unsigned partitions, unsigned sbuf_bytes, unsigned noise_bytes, unsigned rate)
      : rng_(rng), P_(partitions), lines_(sbuf_bytes / kLineB), noise_lines_(noise_bytes / kLineB), rate_(rate),
        part_w_(log2(partitions)), line_w_(log2(sbuf_bytes / kLineB)) {}

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
      put_bits(m.dr_part_i, d * part_w_, part_w_, rd_[d][0]);
      put_bits(m.dr_line_i, d * line_w_, line_w_, rd_[d][1]);
      put_bits(m.dw_part_i, d * part_w_, part_w_, wr_[d][0]);
      put_bits(m.dw_line_i, d * line_w_, line_w_, wr_[d][1]);
      put_bits(m.dw_ben_i, d * kLineB, kLineB, ben_[d]);
      for (unsigned w = 0; w < 4; ++w) put_bits(m.dw_wdata_i, d * 8 * kLineB + 32 * w, 32, data_[d][w]);
    }
    m.dr_req_i = rd_on_;
    m.dw_req_i = wr_on_;
  }

  // The requests granted in this cycle (before the edge) leave; granted writes land in `golden`.
  // Returns how many were granted.
  template <class M>
  unsigned retire(const M& m, GoldenModel& golden) {
    const uint32_t rg = uint32_t(m.dr_gnt_o) & rd_on_, wg = uint32_t(m.dw_gnt_o) & wr_on_;
    unsigned n = 0;
    for (unsigned d = 0; d < kPorts; ++d) {
      if ((rg >> d) & 1) {
        rd_on_ &= ~(1u << d);
        ++n;
      }
      if (!((wg >> d) & 1)) continue;
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
    m.dr_req_i = 0;
    m.dw_req_i = 0;
  }

 private:
  static unsigned log2(unsigned v) {
    unsigned n = 0;
    while ((1u << n) < v) ++n;
    return n;
  }

  std::mt19937_64& rng_;
  unsigned P_, lines_, noise_lines_, rate_, part_w_, line_w_;
  uint32_t rd_on_ = 0, wr_on_ = 0;                         // requests pending, per port
  std::array<std::array<unsigned, 2>, kPorts> rd_{}, wr_{};  // [port] = {partition, line}
  std::array<uint16_t, kPorts> ben_{};
  std::array<std::array<uint32_t, 4>, kPorts> data_{};
};

}  // namespace ncore::tb
