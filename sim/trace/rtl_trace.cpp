// The registry behind rtl_trace.hpp and the DPI-C import the memories call.
#include "trace/rtl_trace.hpp"

#include <verilated.h>
#include <svdpi.h>
#include <verilated_sym_props.h>

#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

namespace ncore::rtl {

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, TracedMemory>& registry() {
  static std::map<std::string, TracedMemory> r;
  return r;
}
}  // namespace

void TracedMemory::clear() const {
  for (uint32_t* r : rows_) std::memset(r, 0, words_ * sizeof(uint32_t));
}

void TracedMemory::assign(std::vector<uint32_t*> rows, uint64_t words) {
  rows_ = std::move(rows);
  words_ = words;
}

const TracedMemory& traced_memory(const std::string& scope, const std::string& var) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  const auto it = registry().find(scope + "." + var);
  if (it != registry().end()) return it->second;
  std::string known;
  for (const auto& [name, mem] : registry()) known += (known.empty() ? "" : ", ") + name;
  throw std::runtime_error("no memory " + scope + "." + var + " registered by the RTL's trace interface (registered: " +
                           (known.empty() ? std::string("none; the model has not been evaluated yet") : known) + ")");
}

}  // namespace ncore::rtl

// The DPI-C import of ncore_prim_banked_mem.sv (the SBUF's and the PSUM's storage): `mem` is the instance's storage,
// logic [31:0] mem_q [rows][words], passed by reference.
extern "C" void ncore_trace_memory(const char* var, const svOpenArrayHandle mem) {
  const auto* v = static_cast<const VerilatedDpiOpenVar*>(mem);
  if (v->vltype() != VLVT_UINT32 || v->udims() != 2)
    throw std::runtime_error(std::string("ncore_trace_memory: ") + var + " is not an array of 32-bit words by rows");
  const int rows = v->elements(1);
  std::vector<uint32_t*> row_ptrs;
  row_ptrs.reserve(rows);
  for (int r = 0; r < rows; ++r)
    row_ptrs.push_back(static_cast<uint32_t*>(v->datapAdjustIndex(v->datap(), 1, v->low(1) + r)));
  const std::string scope = svGetNameFromScope(svGetScope());
  std::lock_guard<std::mutex> lock(ncore::rtl::registry_mutex());
  ncore::rtl::registry()[scope + "." + var].assign(std::move(row_ptrs), static_cast<uint64_t>(v->elements(2)));
}
