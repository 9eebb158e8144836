// src/core/dtype.cpp - dtype properties, promotion, device names, threads.
#include <omp.h>

#include <atomic>
#include <ostream>
#include <utility>

#include "core/tensor_impl.hpp"
#include "phasor/version.hpp"

extern "C" void openblas_set_num_threads(int);

namespace phasor {

Dtype to_real(Dtype t) {
  if (t == Dtype::Complex64) return Dtype::Float32;
  if (t == Dtype::Complex128) return Dtype::Float64;
  return t;
}
Dtype to_complex(Dtype t) {
  if (t == Dtype::Float64 || t == Dtype::Complex128) return Dtype::Complex128;
  return Dtype::Complex64;
}

Dtype promote_types(Dtype a, Dtype b) {
  if (a == b) return a;
  auto cat = [](Dtype t) { return t == Dtype::Bool ? 0 : t == Dtype::Int64 ? 1 : is_floating(t) ? 2 : 3; };
  const bool dbl = a == Dtype::Float64 || a == Dtype::Complex128 || b == Dtype::Float64 || b == Dtype::Complex128;
  switch (std::max(cat(a), cat(b))) {
    case 0: return Dtype::Bool;
    case 1: return Dtype::Int64;
    case 2: return dbl ? Dtype::Float64 : Dtype::Float32;
    default: return dbl ? Dtype::Complex128 : Dtype::Complex64;
  }
}

const char* dtype_name(Dtype t) {
  switch (t) {
    case Dtype::Bool: return "bool";
    case Dtype::Int64: return "int64";
    case Dtype::Float32: return "float32";
    case Dtype::Float64: return "float64";
    case Dtype::Complex64: return "complex64";
    case Dtype::Complex128: return "complex128";
  }
  return "?";
}
std::ostream& operator<<(std::ostream& os, Dtype t) { return os << dtype_name(t); }

namespace {
std::atomic<Dtype> g_default_dtype{Dtype::Float32};
std::atomic<int> g_threads{0};
std::atomic<int> g_cpu_devices{1};
}  // namespace

int cpu_device_count() { return g_cpu_devices.load(std::memory_order_relaxed); }
void set_cpu_device_count(int n) {
  if (n < 1) throw Error("set_cpu_device_count", "expected n >= 1, got " + std::to_string(n));
  g_cpu_devices.store(n, std::memory_order_relaxed);
}
Dtype default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }
void set_default_dtype(Dtype t) {
  if (!is_floating(t))
    throw Error("set_default_dtype", std::string("expected float32 or float64, got ") + dtype_name(t));
  g_default_dtype = t;
}

std::string Device::str() const {
  if (is_cpu()) return index == 0 ? std::string("cpu") : "cpu:" + std::to_string(index);
  return "cuda:" + std::to_string(index);
}

Device Device::parse(const std::string& name) {
  if (name == "cpu") return cpu();
  if (name == "cuda") return cuda(0);
  for (const auto& [prefix, type] : {std::pair<std::string, DeviceType>{"cpu:", DeviceType::CPU}, {"cuda:", DeviceType::CUDA}}) {
    const std::size_t n = prefix.size();
    if (name.rfind(prefix, 0) == 0 && name.size() > n && name.size() <= n + 4 &&
        name.find_first_not_of("0123456789", n) == std::string::npos)
      return Device{type, std::stoi(name.substr(n))};
  }
  throw Error("Device", "unknown device \"" + name + "\" (expected cpu, cpu:<index>, cuda or cuda:<index>)");
}
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

int get_num_threads() {
  int n = g_threads.load();
  return n > 0 ? n : omp_get_max_threads();
}
void set_num_threads(int n) {
  if (n < 1) throw Error("set_num_threads", "expected n >= 1, got " + std::to_string(n));
  g_threads = n;
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

const char* version() { return PHASOR_VERSION_STRING; }

}  // namespace phasor
