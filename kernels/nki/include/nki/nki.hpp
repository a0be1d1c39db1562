// The NKI-like C++ kernel API in one include: nki::nl (language), nki::nisa (instructions),
// nki::ncc (direct allocation) and the tracer.
#pragma once

#include "nki/compiler.hpp"
#include "nki/isa.hpp"
#include "nki/language.hpp"
#include "nki/loc.hpp"
#include "nki/tensor.hpp"
#include "nki/tracer.hpp"
