// Semaphore rules; see semaphores.hpp.
#include "ncore/semaphores.hpp"

#include <fmt/format.h>

#include "ncore/error.hpp"

namespace ncore::detail {

void bad_sem_field(const char* what, unsigned value) {
  throw SimError(fmt::format("unknown semaphore {} {}", what, value));
}

}  // namespace ncore::detail
