// An instruction stream as its sequencer walks it; see insn_stream.hpp.
#include "core/insn_stream.hpp"

namespace ncore::sim {

void InsnStream::reset(unsigned index, const Stream& st, InsnRecord* records) {
  index_ = index;
  st_ = &st;
  recs_ = records;
  pc_ = 0;
  head_ready_set_ = false;
  in_flight_.clear();
}

bool InsnStream::retire_sem_waits(uint64_t now) {
  bool retired = false;
  while (has_head()) {
    note_ready(now);
    if (!sem_wait_can_retire()) break;
    const isa::Insn& in = head();
    const uint32_t i = pc();
    ++pc_;
    head_ready_set_ = false;
    recs_[i].issue = recs_[i].start = recs_[i].end = now;
    sems_->fire(in);  // a sem_wait's update fires once its wait holds
    sink_->retired(*this, i);
    retired = true;
  }
  return retired;
}

uint32_t InsnStream::issue(uint64_t now) {
  const uint32_t i = pc();
  ++pc_;
  head_ready_set_ = false;
  recs_[i].issue = now;
  in_flight_.push_back(i);
  return i;
}

void InsnStream::complete_oldest(uint64_t end, bool fire) {
  const uint32_t i = in_flight_.front();
  in_flight_.pop_front();
  const isa::Insn& in = insn(i);
  if (fire && in.upd_when == isa::SemWhen::complete) sems_->fire(in);
  recs_[i].end = end;
  sink_->completed(*this, i, end);
}

}  // namespace ncore::sim
