// The glue between the DMA engines' HBM ports and the HBM model, once per cycle: the requests the
// engines send at this edge (each was sent with a credit, so it is accepted), new credits within
// the bandwidth, and the read data and write acknowledgements that are due.
#pragma once

#include <cstdint>
#include <vector>

#include "core/core_pins.hpp"
#include "core/hbm_model.hpp"
#include "core/rtl_model.hpp"
#include "ncore/presets_gen.hpp"

namespace ncore::sim {

class HbmPort {
 public:
  HbmPort(const Preset& preset, HbmPins& pins, RtlModel& rtl);

  // A new run over the `bytes` bytes at `mem` (owned by the caller); no credits, nothing driven.
  void reset(uint8_t* mem, uint64_t bytes);
  // Drives the HBM inputs for cycle `now`; whether a request, read data or an ack moved.
  bool cycle(uint64_t now);
  bool requesting() const { return pins_.req_valid.read() != 0; }  // requests at this edge

  // Idle-cycle skipping: the earliest response due, whether nothing is in flight, and `cycles`
  // skipped cycles' worth of bandwidth.
  uint64_t next_event() const { return model_.next_event(); }
  bool idle() const { return model_.idle(); }
  void advance(uint64_t cycles) { model_.advance(cycles); }

  uint64_t read_bytes() const { return model_.read_bytes(); }
  uint64_t write_bytes() const { return model_.write_bytes(); }

 private:
  bool accept_requests(uint64_t now);
  void grant_credits();
  bool respond(uint64_t now);

  HbmModel model_;
  HbmPins& pins_;
  RtlModel& rtl_;
  unsigned engines_;
  unsigned max_credits_;  // preset.dma_hbm_credits, the range of ncore_dma_engine's counter
  std::vector<unsigned> credits_;  // credits each engine holds (as the RTL will)
};

}  // namespace ncore::sim
