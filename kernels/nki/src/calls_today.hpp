// Today's spelling of the NKI calls (calls_today.cpp): the signature records and the lowerings of
// the calls whose arguments mean something else today.
#pragma once

#include <vector>

#include "nki/calls.hpp"

namespace nki::calls {

// Sets each declaration's today, today_lower and today_strict (calls.hpp).
void attach_today(std::vector<Decl>& decls);
// Refuses a `!name=default` parameter given another value (args in today's order).
void check_today_strict(const Decl& d, const std::vector<Value>& args, const Loc& loc);

}  // namespace nki::calls
