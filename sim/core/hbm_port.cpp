// The DMA engines' HBM glue; see hbm_port.hpp.
#include "core/hbm_port.hpp"

#include <fmt/format.h>

#include "ncore/error.hpp"

namespace ncore::sim {

HbmPort::HbmPort(const Preset& preset, HbmPins& pins, RtlModel& rtl)
    : model_(preset, static_cast<unsigned>(preset.dma_engines)),
      pins_(pins),
      rtl_(rtl),
      engines_(static_cast<unsigned>(preset.dma_engines)),
      max_credits_(static_cast<unsigned>(preset.dma_hbm_credits)) {}

void HbmPort::reset(uint8_t* mem, uint64_t bytes) {
  model_.reset(mem, bytes);
  credits_.assign(engines_, 0);
  pins_.credit.write(0);
  pins_.rd_valid.write(0);
  pins_.ack_valid.write(0);
}

bool HbmPort::cycle(uint64_t now) {
  model_.advance(1);
  const bool accepted = accept_requests(now);
  grant_credits();
  return respond(now) || accepted;
}

bool HbmPort::accept_requests(uint64_t now) {
  const uint32_t valid = pins_.req_valid.read();
  if (!valid) return false;
  const uint32_t we = pins_.req_we.read();
  for (unsigned e = 0; e < engines_; ++e) {
    if (!((valid >> e) & 1u)) continue;
    HbmRequest r;
    rtl_.hbm_request(e, (we >> e) & 1u, r);
    if (credits_[e] == 0) throw SimError(fmt::format("DMA engine {} sent an HBM request without a credit", e));
    --credits_[e];
    model_.accept(e, r, now);
  }
  return true;
}

void HbmPort::grant_credits() {
  uint32_t grant = 0;
  for (unsigned k = 0; k < engines_; ++k) {
    const unsigned e = (model_.first_engine() + k) % engines_;
    if (credits_[e] < max_credits_ && model_.take_line()) {
      ++credits_[e];
      grant |= 1u << e;
    }
  }
  model_.end_cycle();
  pins_.credit.write(grant);
}

bool HbmPort::respond(uint64_t now) {
  uint32_t rv = 0, av = 0;
  for (unsigned e = 0; e < engines_; ++e) {
    if (const auto* d = model_.read_due(e, now)) {
      rtl_.set_read_data(e, *d);
      rv |= 1u << e;
      model_.pop_read(e);
    }
    if (model_.ack_due(e, now)) {
      av |= 1u << e;
      model_.pop_ack(e);
    }
  }
  if (rv) rtl_.drive_read_data();
  pins_.rd_valid.write(rv);
  pins_.ack_valid.write(av);
  return rv || av;
}

}  // namespace ncore::sim
