// The SystemC signals on ncore_top's ports whose types are the same for every Verilated model:
// the engines' instruction interfaces, the one-bit and per-engine/per-queue masks (E, Q <= 32,
// so a uint32_t each) and the clock. The core drives and reads them; verilated_rtl.hpp binds
// them, with the buses whose width depends on the model, to one model's ports.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "ncore/isa_gen.hpp"

namespace ncore::sim {

// An instruction interface into an engine: valid and the instruction's bits.
struct InsnPins {
  explicit InsnPins(const std::string& name) : valid((name + "_valid").c_str()), insn((name + "_insn").c_str()) {}
  // Drives `in` on the instruction bus (valid is driven separately, every cycle).
  void present(const isa::Insn& in);

  sc_signal<bool> valid;
  sc_signal<sc_bv<isa::kInsnBits>> insn;
  sc_bv<isa::kInsnBits> bits;  // scratch, kept to avoid an allocation per instruction
};

// An engine that runs one instruction at a time (vector, scalar).
struct EnginePins : InsnPins {
  explicit EnginePins(const std::string& name)
      : InsnPins(name),
        ready((name + "_ready").c_str()),
        rd_start((name + "_rd_start").c_str()),
        done((name + "_done").c_str()) {}
  sc_signal<bool> ready, rd_start, done;
};

// The tensor engine: ready, read start and done per kind (load_stationary, multiply_moving).
struct PePins : InsnPins {
  PePins() : InsnPins("pe") {}
  sc_signal<bool> ls_ready{"pe_ls_ready"}, mm_ready{"pe_mm_ready"}, accept{"pe_accept"}, ls_start{"pe_ls_start"},
      mm_start{"pe_mm_start"}, ls_done{"pe_ls_done"}, mm_done{"pe_mm_done"};
};

// The DMA block's one instruction port, shared by the queues (its done bits are model-wide:
// RtlModel::dma_done).
struct DmaPins : InsnPins {
  DmaPins() : InsnPins("dma") {}
  sc_signal<uint32_t> q_free{"dma_q_free"}, rd_start{"dma_rd_start"};
};

// The HBM handshakes, one bit per DMA engine (the line, byte-enable and data buses are
// model-wide: RtlModel).
struct HbmPins {
  sc_signal<uint32_t> req_valid{"hq_valid"}, credit{"hq_credit"}, req_we{"hq_we"};
  sc_signal<uint32_t> rd_valid{"hr_valid"}, ack_valid{"ha_valid"};
};

inline void InsnPins::present(const isa::Insn& in) {
  uint8_t bytes[isa::kInsnBytes];
  isa::encode(in, bytes);
  for (int w = 0; w < static_cast<int>((isa::kInsnBits + 31) / 32); ++w) {
    uint32_t word;
    std::memcpy(&word, bytes + 4 * w, 4);
    bits.set_word(w, word);
  }
  insn.write(bits);
}

struct CorePins {
  sc_signal<bool> clk{"clk"}, rst_n{"rst_n"};
  EnginePins dve{"dve"}, act{"act"};
  PePins pe;
  DmaPins dma;
  HbmPins hbm;
  sc_signal<bool> busy{"busy"};
  sc_signal<uint32_t> ce{"ce"};
};

}  // namespace ncore::sim
