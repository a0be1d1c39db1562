// Random PSUM traffic for the bench, in the shape of a phase (Traffic): the tensor engine's lanes
// (results streamed as the PE array's bottom edge delivers them, with accumulation groups, or
// independent random lanes) and new requests on the free engine ports (aimed at the hot spot or
// anywhere, with every kind of lane mask and engine write element).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "mem_ports.hpp"
#include "psum_ports.hpp"

namespace psum_tb {

// One result of the PE array: partitions q..q+m-1, n words from `base` (within one bank);
// partition q+i writes word j at cycle start + i + j.
struct Stream {
  uint64_t start;
  unsigned q, m;
  uint32_t base;
  unsigned n;
  bool acc;
};

enum class PeMode { none, streams, lanes };

// Traffic shape of a phase.
struct Traffic {
  const char* name;
  PeMode pe;
  double pe_rate;    // streams: chance per cycle that the next result starts, once the last has;
                     // lanes: chance that a lane writes in a cycle
  unsigned pe_words; // lanes: 0 = anywhere, else only this many words of the hot bank
  double p_req;      // a free engine port starts a new request
  double p_hot;      // the request aims at the hot spot (follow_pe: where the PE writes now)
  bool follow_pe;
  unsigned hot_bank, hot_part;
  bool special;      // values from kSpecial only
};


class TrafficGen {
 public:
  TrafficGen(const Geometry& g, std::mt19937_64& rng) : g_(g), rng_(rng), lane_free_(g.P, 0) {}

  // The bank the tensor engine writes now (where follow_pe phases aim the engine ports).
  unsigned pe_bank() const { return pe_bank_; }

  // No result in flight: the next stream starts afresh.
  void stop() {
    streams_.clear();
    std::fill(lane_free_.begin(), lane_free_.end(), 0);
  }

  // The tensor engine's lanes for cycle `now`.
  void next_pe(const Traffic& t, uint64_t now, std::vector<PeLane>& pe) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& l : pe) l.valid = false;
    if (t.pe == PeMode::lanes) {
      for (unsigned p = 0; p < g_.P; ++p) {
        PeLane& l = pe[p];
        if (u(rng_) >= t.pe_rate) continue;
        l.valid = true;
        l.word = t.pe_words ? t.hot_bank * g_.bank_words + static_cast<uint32_t>(rng_() % t.pe_words)
                            : static_cast<uint32_t>(rng_() % g_.words);
        l.acc = rng_() % 4 != 0;
        l.data = value(t);
      }
      pe_bank_ = t.pe_words ? t.hot_bank : static_cast<unsigned>(rng_() % g_.banks);
      return;
    }
    if (t.pe != PeMode::streams) return;
    // start the next stream when the last one has started (the array streams back to back), or
    // after a gap
    if ((streams_.empty() || streams_.back().start <= now) && u(rng_) < t.pe_rate) add_stream(t, now);
    for (const Stream& s : streams_) {
      if (s.start > now) continue;
      for (unsigned i = 0; i < s.m; ++i) {
        const uint64_t at = s.start + i;
        if (now < at || now >= at + s.n) continue;
        PeLane& l = pe[s.q + i];
        l.valid = true;
        l.word = s.base + static_cast<uint32_t>(now - at);
        l.acc = s.acc;
        l.data = value(t);
      }
    }
    streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                  [&](const Stream& s) { return s.start + s.m - 1 + s.n <= now + 1; }),
                   streams_.end());
    if (!streams_.empty()) pe_bank_ = bank_of_word(streams_.front().base);
  }

  // New requests on the free engine ports.
  void new_requests(const Traffic& t, const std::vector<PeLane>& pe, std::vector<RdReq>& er,
                    std::vector<WrReq>& ew) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    auto hot = [&] { return u(rng_) < t.p_hot; };
    const unsigned hb = t.follow_pe ? pe_bank_ : t.hot_bank;
    // a word: on the hot spot, one of the first four words of the hot bank; else anywhere
    auto word_in = [&](bool h) {
      return h ? hb * g_.bank_words + static_cast<uint32_t>(rng_() % 4) : static_cast<uint32_t>(rng_() % g_.words);
    };
    auto lanes = [&](bool h) {
      Lanes m;
      switch (rng_() % 8) {
        case 0: case 1: for (unsigned p = 0; p < g_.P; ++p) m.set(p); break;
        case 2: case 3: m.set(rng_() % g_.P); break;
        case 4: {  // a range
          const unsigned a = static_cast<unsigned>(rng_() % g_.P), b = static_cast<unsigned>(rng_() % g_.P);
          for (unsigned p = std::min(a, b); p <= std::max(a, b); ++p) m.set(p);
          break;
        }
        case 5: break;  // no lane at all: granted at once (nothing can hold it)
        default: for (unsigned p = 0; p < g_.P; ++p) if (rng_() % 2) m.set(p); break;
      }
      if (h) {
        if (t.follow_pe) {  // the lanes the tensor engine writes now
          for (unsigned p = 0; p < g_.P; ++p) if (pe[p].valid && rng_() % 2) m.set(p);
        } else {
          m.set(t.hot_part);
        }
      }
      return m;
    };
    for (auto& q : er)
      if (request_starts(q, rng_, t.p_req)) {
        const bool h = hot();
        q.addr = word_in(h) * 4 + static_cast<uint32_t>(rng_() % 2) * 2;  // 2-byte aligned
        q.mask = lanes(h);
      }
    for (auto& q : ew)
      if (request_starts(q, rng_, t.p_req)) {
        const bool h = hot();
        // a 4-byte element is an fp32 value the tensor engine may accumulate onto
        const WriteKind kind = engine_write_element(rng_, word_in(h), q.addr, q.ben);
        for (auto& d : q.data) d = kind == WriteKind::word ? value(t) : static_cast<uint32_t>(rng_());
        q.mask = lanes(h);
      }
  }

 private:
  unsigned bank_of_word(uint32_t w) const { return w / g_.bank_words; }

  uint32_t value(const Traffic& t) { return t.special ? special_f32(rng_) : random_f32(rng_); }

  // A new result: the same region as the last one (accumulation group) or a new one; it starts
  // no earlier than `at` and late enough that no partition gets two words in one cycle.
  void add_stream(const Traffic& t, uint64_t at) {
    Stream s;
    if (group_left_ > 0) {
      s = group_;
      s.acc = true;
      --group_left_;
    } else {
      s.m = 1 + static_cast<unsigned>(rng_() % g_.P);
      s.q = static_cast<unsigned>(rng_() % (g_.P - s.m + 1));
      s.n = 1 + static_cast<unsigned>(rng_() % (rng_() % 2 ? g_.bank_words : std::min(g_.bank_words, 24u)));
      const unsigned bank = static_cast<unsigned>(rng_() % g_.banks);
      s.base = bank * g_.bank_words + static_cast<uint32_t>(rng_() % (g_.bank_words - s.n + 1));
      s.acc = t.special ? false : rng_() % 4 == 0;
      group_ = s;
      group_left_ = static_cast<unsigned>(rng_() % 4);
    }
    uint64_t start = at;
    for (unsigned i = 0; i < s.m; ++i) start = std::max(start, lane_free_[s.q + i] > i ? lane_free_[s.q + i] - i : 0);
    s.start = start;
    for (unsigned i = 0; i < s.m; ++i) lane_free_[s.q + i] = s.start + i + s.n;
    streams_.push_back(s);
  }

  Geometry g_;
  std::mt19937_64& rng_;
  std::vector<Stream> streams_;
  std::vector<uint64_t> lane_free_;  // first cycle a partition is free of the streams so far
  Stream group_{};
  unsigned group_left_ = 0;
  unsigned pe_bank_ = 0;
};

}  // namespace psum_tb
