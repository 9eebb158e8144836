// src/core/cpu_features.cpp - run-time CPU feature tests (cpu_features.hpp).
#include "core/cpu_features.hpp"

#include <cstdlib>
#include <string_view>

namespace phasor::detail {

bool cpu_avx() {
  static const bool avx = [] {
    const char* v = std::getenv("PHASOR_CPU_BASELINE");
    return __builtin_cpu_supports("avx") && !(v != nullptr && std::string_view(v) == "1");
  }();
  return avx;
}

}  // namespace phasor::detail
