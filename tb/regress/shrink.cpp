// Delta debugging over a draft; see shrink.hpp.
#include "shrink.hpp"

#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ncore/ap.hpp"
#include "ncore/error.hpp"

namespace ncore::regress {
namespace {

using isa::Ap;
using isa::Insn;

// The access patterns and per-partition operands an instruction uses.
template <class F, class G>
void each_operand(Insn& i, F&& on_ap, G&& on_sref) {
  const isa::InsnInfo* info = isa::find_info(i.opcode);
  if (!info) return;
  for (unsigned k = 0; k < info->num_operands; ++k) {
    const std::string f = info->operands[k].field;
    if (f == "dst") on_ap(i.dst);
    if (f == "src0") on_ap(i.src0);
    if (f == "src1") on_ap(i.src1);
    if (f == "dst2" && i.dst2.num_part) on_ap(i.dst2);
    if (f == "s0" && i.s0_vec) on_sref(i.s0);
    if (f == "s1" && i.s1_vec) on_sref(i.s1);
  }
}

using Transform = void (*)(Insn&);

void row_major(Ap& a) {
  int32_t run = 1;
  for (int d = 0; d < 4; ++d) {
    a.stride[d] = run;
    run *= static_cast<int32_t>(a.size[d]);
  }
  if (a.mem == isa::Buffer::hbm && a.part_stride != 0) a.part_stride = run;
}

const Transform kTransforms[] = {
    [](Insn& i) { each_operand(i, [](Ap& a) { a.num_part = 1; }, [](isa::Sref&) {}); },
    [](Insn& i) {
      each_operand(
          i, [](Ap& a) { if (a.mem != isa::Buffer::hbm) a.start_part = 0; }, [](isa::Sref& s) { s.start_part = 0; });
    },
    [](Insn& i) {
      each_operand(i, [](Ap& a) { a.size = {1, 1, 1, 1}; }, [](isa::Sref&) {});
      i.red_axes = 1;
    },
    [](Insn& i) {
      each_operand(
          i,
          [](Ap& a) {
            a.size = {static_cast<uint32_t>(ap_free_elems(a)), 1, 1, 1};
            row_major(a);
          },
          [](isa::Sref&) {});
      if (i.red_axes > 1) i.red_axes = 1;
    },
    [](Insn& i) { each_operand(i, row_major, [](isa::Sref&) {}); },
    [](Insn& i) {
      each_operand(
          i,
          [](Ap& a) {
            a.dtype = isa::Dtype::fp32;
            a.offset -= a.offset % 4;
          },
          [](isa::Sref& s) {
            s.dtype = isa::Dtype::fp32;
            s.offset -= s.offset % 4;
          });
    },
    [](Insn& i) { i.s0_vec = i.s1_vec = false; },
    [](Insn& i) { i.dst2 = Ap{}; },
    [](Insn& i) { i.acc = false; },
    [](Insn& i) {
      i.op1 = isa::AluOp::bypass;
      i.rev0 = i.rev1 = false;
    },
    [](Insn& i) {
      i.imm0 = 0x3F800000u;  // 1.0
      i.imm1 = 0;
    },
};

bool same_bits(const Insn& a, const Insn& b) {
  uint8_t x[isa::kInsnBytes] = {}, y[isa::kInsnBytes] = {};
  isa::encode(a, x);
  isa::encode(b, y);
  return std::equal(x, x + sizeof x, y);
}

}  // namespace

ShrinkResult shrink(const Preset& pr, const Draft& draft, const std::function<bool(const Program&)>& fails,
                    const ShrinkOptions& opt) {
  ShrinkResult r;
  r.draft = draft;
  r.program = assemble(pr, draft);
  r.instructions_before = r.program.instruction_count();
  const auto t0 = std::chrono::steady_clock::now();
  auto out_of_budget = [&] {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r.tries < opt.max_tries && s < opt.max_seconds) return false;
    r.complete = false;
    return true;
  };
  // Whether candidate `c` still fails; if so it becomes the result.
  auto attempt = [&](const Draft& c) {
    ++r.tries;
    Program p;
    try {
      p = assemble(pr, c);
    } catch (const SimError&) {
      return false;  // an instruction that breaks a rule: not a candidate
    }
    if (!fails(p)) return false;
    ++r.accepted;
    r.draft = c;
    r.program = std::move(p);
    return true;
  };

  // 1. ddmin over the steps.
  size_t n = 2;
  while (r.draft.steps.size() >= 2 && !out_of_budget()) {
    const std::vector<Step> cur = r.draft.steps;
    const size_t chunk = (cur.size() + n - 1) / n;
    bool reduced = false;
    for (size_t start = 0; start < cur.size() && !out_of_budget(); start += chunk) {
      Draft c = r.draft;
      c.steps.clear();
      for (size_t k = 0; k < cur.size(); ++k)
        if (k < start || k >= start + chunk) c.steps.push_back(cur[k]);
      if (attempt(c)) {
        reduced = true;
        break;
      }
    }
    if (reduced) {
      n = std::max<size_t>(n - 1, 2);
    } else {
      if (n >= cur.size()) break;
      n = std::min(cur.size(), 2 * n);
    }
  }
  if (r.draft.steps.size() == 1 && !out_of_budget()) {
    Draft c = r.draft;
    c.steps.clear();
    attempt(c);
  }

  // 2. Each data instruction's operands, until nothing more can go.
  for (bool changed = true; changed && !out_of_budget();) {
    changed = false;
    for (size_t k = 0; k < r.draft.steps.size() && !out_of_budget(); ++k) {
      if (r.draft.steps[k].kind != Step::Kind::data) continue;
      for (Transform t : kTransforms) {
        Draft c = r.draft;
        t(c.steps[k].insn);
        if (same_bits(c.steps[k].insn, r.draft.steps[k].insn)) continue;
        if (attempt(c)) changed = true;
        if (out_of_budget()) break;
      }
    }
  }
  r.instructions_after = r.program.instruction_count();
  return r;
}

std::string failure_window(const std::string& message, uint64_t before, uint64_t after) {
  static const std::regex at_cycle(R"(at cycle (\d+))");
  std::smatch m;
  if (!std::regex_search(message, m, at_cycle)) return "";
  const uint64_t c = std::stoull(m[1].str());
  return fmt::format("{}:{}", c > before ? c - before : 0, c + after);
}

}  // namespace ncore::regress
