// The process's stop request; see interrupt.hpp.
#include "ncore/interrupt.hpp"

namespace ncore::interrupt {

std::atomic<bool>& flag() {
  static std::atomic<bool> f{false};
  return f;
}

}  // namespace ncore::interrupt
