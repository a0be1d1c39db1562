// Error types shared by the tool chain. Every bad input ends in one of these, with a message
// that says what was wrong and what was expected; the command-line tools turn them into a
// message on stderr and a non-zero exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace ncore {

// An error of one kind (Tag): a std::runtime_error with the message, caught by its kind.
template <class Tag>
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel breaks a hardware or API constraint while it is traced. Messages follow NKI's
// wording, e.g. "number of partitions 256 exceed architecture limitation of 128."
using KernelError = Error<struct KernelErrorTag>;
// A Program image that cannot be read: wrong magic, version, truncated, bad field values.
using ImageError = Error<struct ImageErrorTag>;
// A run that cannot go on: out-of-range addresses, deadlock, RTL/golden mismatch.
using SimError = Error<struct SimErrorTag>;
// Bad user input outside a kernel: a malformed .npy file, a bad command-line value.
using InputError = Error<struct InputErrorTag>;

}  // namespace ncore
