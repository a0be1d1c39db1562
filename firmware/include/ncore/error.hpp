// Error types shared by the tool chain. Every bad input ends in one of these, with a message
// that says what was wrong and what was expected; the command-line tools turn them into a
// message on stderr and a non-zero exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace ncore {

// A kernel breaks a hardware or API constraint while it is traced. Messages follow NKI's
// wording, e.g. "number of partitions 256 exceed architecture limitation of 128."
class KernelError : public std::runtime_error {
 public:
  explicit KernelError(const std::string& msg) : std::runtime_error(msg) {}
};

// A Program image that cannot be read: wrong magic, version, truncated, bad field values.
class ImageError : public std::runtime_error {
 public:
  explicit ImageError(const std::string& msg) : std::runtime_error(msg) {}
};

// A run that cannot go on: out-of-range addresses, deadlock, RTL/golden mismatch.
class SimError : public std::runtime_error {
 public:
  explicit SimError(const std::string& msg) : std::runtime_error(msg) {}
};

// Bad user input outside a kernel: a malformed .npy file, a bad command-line value.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& msg) : std::runtime_error(msg) {}
};

}  // namespace ncore
