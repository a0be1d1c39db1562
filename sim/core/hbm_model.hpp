// HBM model for the DMA engines' line ports.
//
// Each DMA engine has one port carrying line requests (preset.sbuf_line_bytes) (reads and byte-enabled
// writes). The model serves them with:
//   - bandwidth: a token bucket refilled at preset.hbm_bytes_per_us (T2: 2.9 TB/s per 8
//     cores); a request is accepted only when a line's worth of tokens is there, engines
//     taking turns round-robin, so a core cannot pull more than its share of HBM;
//   - latency: read data and write acknowledgements return preset.hbm_latency_ns after
//     acceptance, in order per engine.
// Writes land in memory when accepted, so a later read sees them; the acknowledgement tells
// the engine the write is done. All times are in master-clock cycles.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "ncore/presets_gen.hpp"

namespace ncore::sim {

// The line every preset's DMA ports carry (sbuf_line_bytes, one for all presets: the port
// structures below have a fixed size).
inline constexpr unsigned kLineBytes = static_cast<unsigned>(kPresets[0].sbuf_line_bytes);
constexpr bool same_line_bytes() {
  for (const auto& p : kPresets)
    if (p.sbuf_line_bytes != kLineBytes) return false;
  return true;
}
static_assert(same_line_bytes() && kLineBytes % 4 == 0 && kLineBytes <= 16,
              "the HBM port model carries one line size for every preset, of at most 16 bytes (a uint16_t byte enable)");

struct HbmRequest {
  bool write = false;
  uint64_t line = 0;  // byte address / kLineBytes
  uint16_t ben = 0;
  std::array<uint8_t, kLineBytes> data{};
};

class HbmModel {
 public:
  HbmModel(const Preset& preset, unsigned engines);

  // A new run over `bytes` bytes of memory at `mem` (owned by the caller).
  void reset(uint8_t* mem, uint64_t bytes);

  // Bandwidth tokens accrue for `cycles` cycles (called once per simulated or skipped cycle).
  void advance(uint64_t cycles);
  // Reserves one line of bandwidth (a credit for an engine) if the tokens allow.
  bool take_line();
  // Performs a request sent with a credit: a write lands now, data or an acknowledgement
  // returns after the latency.
  void accept(unsigned engine, const HbmRequest& req, uint64_t now);
  // Credits go to the engines in turn, starting here; the pointer moves every cycle.
  unsigned first_engine() const { return rr_; }
  void end_cycle();

  // Read data due for engine e at cycle `now` (nullptr if none); pop_read() consumes it.
  const std::array<uint8_t, kLineBytes>* read_due(unsigned e, uint64_t now) const;
  void pop_read(unsigned e);
  bool ack_due(unsigned e, uint64_t now) const;
  void pop_ack(unsigned e);

  // Earliest cycle at which a response or acknowledgement becomes due (UINT64_MAX: none).
  uint64_t next_event() const;
  bool idle() const;  // nothing in flight

  uint64_t latency_cycles() const { return latency_; }
  uint64_t read_bytes() const { return read_bytes_; }
  uint64_t write_bytes() const { return write_bytes_; }

 private:
  struct Pending {
    uint64_t due;
    std::array<uint8_t, kLineBytes> data;
  };
  unsigned engines_;
  uint64_t latency_;
  uint64_t rate_;       // tokens per cycle: bytes per microsecond
  uint64_t cost_;       // tokens per line: kLineBytes * clock_mhz
  uint64_t cap_;
  uint64_t tokens_ = 0;
  unsigned rr_ = 0;     // engine with first claim on tokens this cycle
  uint8_t* mem_ = nullptr;
  uint64_t bytes_ = 0;
  std::vector<std::deque<Pending>> reads_;
  std::vector<std::deque<uint64_t>> acks_;
  uint64_t read_bytes_ = 0, write_bytes_ = 0;
};

}  // namespace ncore::sim
