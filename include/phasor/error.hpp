// phasor/error.hpp - the one exception type every op throws on bad input.
#pragma once
#include <stdexcept>
#include <string>

namespace phasor {

/// Thrown on bad input; the message starts with the op in brackets, e.g. "[matmul] ...".
class Error : public std::runtime_error {
 public:
  /// Builds an error whose message is "[op] what".
  Error(const std::string& op, const std::string& what)
      : std::runtime_error("[" + op + "] " + what), op_(op) {}
  /// The op that rejected its input.
  const std::string& op() const noexcept { return op_; }

 private:
  std::string op_;
};

}  // namespace phasor
