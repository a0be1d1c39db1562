// Where in a kernel's source an API call was made. Every API function takes a trailing
// `Loc loc = Loc::here()`; the default argument is evaluated at the caller, so the traced
// instruction carries the kernel's file and line (C++17: __builtin_FILE/__builtin_LINE, which
// g++ and clang evaluate at the outermost call site of a default argument).
#pragma once

namespace nki {

struct Loc {
  const char* file = "";
  int line = 0;
  static constexpr Loc here(const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return Loc{f, l}; }
};

}  // namespace nki
