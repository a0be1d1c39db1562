// HBM model; see hbm_model.hpp.
#include "core/hbm_model.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "ncore/error.hpp"

namespace ncore::sim {

HbmModel::HbmModel(const Preset& p, unsigned engines)
    : engines_(engines),
      latency_(p.hbm_latency_ns * p.clock_mhz / 1000),
      rate_(p.hbm_bytes_per_us),
      cost_(kLineBytes * p.clock_mhz),
      cap_(cost_ * engines),
      reads_(engines),
      acks_(engines) {}

void HbmModel::reset(uint8_t* mem, uint64_t bytes) {
  mem_ = mem;
  bytes_ = bytes;
  tokens_ = cap_;
  rr_ = 0;
  for (auto& q : reads_) q.clear();
  for (auto& q : acks_) q.clear();
  read_bytes_ = write_bytes_ = 0;
}

void HbmModel::advance(uint64_t cycles) {
  // tokens_ + cycles * rate_ may overflow for huge skips; saturate at the cap first.
  if (cycles >= cap_ / std::max<uint64_t>(rate_, 1) + 1) tokens_ = cap_;
  else tokens_ = std::min(cap_, tokens_ + cycles * rate_);
}

bool HbmModel::take_line() {
  if (tokens_ < cost_) return false;
  tokens_ -= cost_;
  return true;
}

void HbmModel::accept(unsigned e, const HbmRequest& req, uint64_t now) {
  const uint64_t addr = req.line * kLineBytes;
  if (addr >= bytes_)
    throw SimError(fmt::format("DMA engine {} addressed HBM line at byte {:#x}, outside the {} bytes of HBM", e, addr,
                               bytes_));
  const uint64_t n = std::min<uint64_t>(kLineBytes, bytes_ - addr);  // the last line may be partial
  if (req.write) {
    for (unsigned b = 0; b < kLineBytes; ++b) {
      if (!(req.ben & (1u << b))) continue;
      if (b >= n)
        throw SimError(fmt::format("DMA engine {} wrote HBM byte {:#x}, outside the {} bytes of HBM", e, addr + b, bytes_));
      mem_[addr + b] = req.data[b];
    }
    write_bytes_ += static_cast<uint64_t>(__builtin_popcount(req.ben));
    acks_[e].push_back(now + latency_);
  } else {
    Pending pd;
    pd.due = now + latency_;
    pd.data.fill(0);
    std::memcpy(pd.data.data(), mem_ + addr, n);
    reads_[e].push_back(pd);
    read_bytes_ += kLineBytes;
  }
}

void HbmModel::end_cycle() { rr_ = (rr_ + 1) % engines_; }

const std::array<uint8_t, kLineBytes>* HbmModel::read_due(unsigned e, uint64_t now) const {
  const auto& q = reads_[e];
  if (q.empty() || q.front().due > now) return nullptr;
  return &q.front().data;
}

void HbmModel::pop_read(unsigned e) { reads_[e].pop_front(); }

bool HbmModel::ack_due(unsigned e, uint64_t now) const { return !acks_[e].empty() && acks_[e].front() <= now; }

void HbmModel::pop_ack(unsigned e) { acks_[e].pop_front(); }

uint64_t HbmModel::next_event() const {
  uint64_t t = std::numeric_limits<uint64_t>::max();
  for (unsigned e = 0; e < engines_; ++e) {
    if (!reads_[e].empty()) t = std::min(t, reads_[e].front().due);
    if (!acks_[e].empty()) t = std::min(t, acks_[e].front());
  }
  return t;
}

bool HbmModel::idle() const {
  for (unsigned e = 0; e < engines_; ++e)
    if (!reads_[e].empty() || !acks_[e].empty()) return false;
  return true;
}

}  // namespace ncore::sim
