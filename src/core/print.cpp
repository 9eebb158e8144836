// src/core/print.cpp - operator<< for Tensor: values formatted as PyTorch prints them, then a
// line with dtype, shape, device and autograd state, e.g.
//   [[1.0000, 2.5000],
//    [3.0000, 4.0000]]
//   [float32 (2, 2) cpu, requires_grad=True]
//
// Note [print format]
// The rules follow torch/_tensor_str.py (precision 4, threshold 1000, edgeitems 3, linewidth 80):
//  - floating values are printed in one of three styles chosen from the nonzero finite values:
//    all integral -> "3." (scientific if max/min > 1000 or max > 1e8); otherwise fixed "%.4f",
//    or scientific "%.4e" when max/min > 1000, max > 1e8 or min < 1e-4;
//  - every value is right-aligned to the widest one (bool: True/False, int64: digits);
//  - complex numbers print as a+bj with separate styles for the real and imaginary parts;
//  - above 1000 elements, only the first and last 3 entries of each dim are shown, with "...",
//    and the style is chosen from the shown values only;
//  - rows longer than 80 characters wrap; dims >= 3 separate their blocks with blank lines.
#include <cmath>
#include <cstdio>
#include <ostream>

#include "core/tensor_impl.hpp"
#include "phasor/autodiff.hpp"
#include "phasor/creation.hpp"
#include "phasor/ops.hpp"

namespace phasor {

namespace {

constexpr int kPrecision = 4;
constexpr std::int64_t kThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;
constexpr std::int64_t kLineWidth = 80;

std::string printf_str(const char* fmt, int width, int prec, double v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, width, prec, v);
  return buf;
}

std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

/// Formats one real component (a floating, int64 or bool column of values) in a shared style.
struct Formatter {
  enum class Kind { Floating, Int, Bool } kind = Kind::Floating;
  bool int_mode = true;
  bool sci_mode = false;
  std::size_t width = 1;

  static std::string nonfinite(double v) { return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"; }

  std::string raw(double v) const {
    switch (kind) {
      case Kind::Bool: return v != 0 ? "True" : "False";
      case Kind::Int: return std::to_string(static_cast<std::int64_t>(v));  // (int64 prints from Printer::ints)
      case Kind::Floating: break;
    }
    if (!std::isfinite(v)) return nonfinite(v);
    if (sci_mode) return printf_str("%*.*e", 0, kPrecision, v);
    if (int_mode) return printf_str("%*.*f", 0, 0, v) + ".";
    return printf_str("%*.*f", 0, kPrecision, v);
  }
  std::string format(double v) const { return pad_left(raw(v), width); }

  /// Chooses the style from `vals` (the values that will be shown).
  void fit(const std::vector<double>& vals) {
    if (kind != Kind::Floating) {
      for (double v : vals) width = std::max(width, raw(v).size());
      return;
    }
    double lo = INFINITY, hi = 0;
    bool any = false;
    for (double v : vals) {
      if (!std::isfinite(v) || v == 0) continue;
      any = true;
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
      if (v != std::ceil(v)) int_mode = false;
    }
    if (!any) return;  // zeros and non-finite values only: "0.", "nan", width 1
    if (int_mode) {
      sci_mode = hi / lo > 1000.0 || hi > 1.0e8;
    } else {
      sci_mode = hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4;
    }
    for (double v : vals) {
      if (!std::isfinite(v) || v == 0) continue;
      width = std::max(width, raw(v).size());
    }
  }
};

/// The printable form of a tensor: its values as doubles (real and imaginary parts), row-major.
struct Printer {
  Shape shape;
  std::vector<double> re, im;
  std::vector<std::int64_t> ints;  // int64 tensors (exact)
  bool complex = false;
  bool summarize = false;
  Formatter f1, f2;

  std::int64_t stride_of(std::size_t d) const {
    std::int64_t s = 1;
    for (std::size_t k = d + 1; k < shape.size(); ++k) s *= shape[k];
    return s;
  }
  /// Positions shown along a dim of size n ("-1" marks the "..." entry).
  std::vector<std::int64_t> shown(std::int64_t n) const {
    std::vector<std::int64_t> r;
    if (summarize && n > 2 * kEdgeItems) {
      for (std::int64_t i = 0; i < kEdgeItems; ++i) r.push_back(i);
      r.push_back(-1);
      for (std::int64_t i = n - kEdgeItems; i < n; ++i) r.push_back(i);
    } else {
      for (std::int64_t i = 0; i < n; ++i) r.push_back(i);
    }
    return r;
  }
  /// Collects the flat offsets of all shown elements.
  void collect(std::size_t d, std::int64_t base, std::vector<std::int64_t>& out) const {
    if (d == shape.size()) {
      out.push_back(base);
      return;
    }
    for (auto i : shown(shape[d]))
      if (i >= 0) collect(d + 1, base + i * stride_of(d), out);
  }

  std::string scalar(std::int64_t off) const {
    if (!ints.empty()) return pad_left(std::to_string(ints[static_cast<std::size_t>(off)]), f1.width);
    if (!complex) return f1.format(re[static_cast<std::size_t>(off)]);
    std::string r = f1.format(re[static_cast<std::size_t>(off)]);
    std::string i = f2.format(im[static_cast<std::size_t>(off)]) + "j";
    i.erase(0, i.find_first_not_of(' '));
    return r + ((i[0] == '+' || i[0] == '-') ? "" : "+") + i;
  }

  std::string vec(std::int64_t base, std::size_t indent) const {
    const std::size_t d = shape.size() - 1;
    std::size_t elem = f1.width + 2;
    if (complex) elem += f2.width + 1;
    const std::size_t avail = kLineWidth > static_cast<std::int64_t>(indent) ? kLineWidth - indent : 0;
    const std::size_t per_line = std::max<std::size_t>(1, avail / elem);
    std::vector<std::string> items;
    for (auto i : shown(shape[d])) items.push_back(i < 0 ? " ..." : scalar(base + i));
    std::string s = "[";
    for (std::size_t k = 0; k < items.size(); ++k) {
      if (k > 0) s += (k % per_line == 0) ? ",\n" + std::string(indent + 1, ' ') : ", ";
      s += items[k];
    }
    return s + "]";
  }

  std::string block(std::size_t d, std::int64_t base, std::size_t indent) const {
    if (d + 1 == shape.size()) return vec(base, indent);
    const std::size_t rest = shape.size() - d;  // dims of this block
    std::string sep(",");
    sep.append(rest - 1, '\n');
    sep.append(indent + 1, ' ');
    std::string s("[");
    bool first = true;
    for (auto i : shown(shape[d])) {
      if (!first) s.append(sep);
      first = false;
      if (i < 0) s.append("...");
      else s.append(block(d + 1, base + i * stride_of(d), indent + 1));
    }
    s.push_back(']');
    return s;
  }
};

std::string values_str(const Tensor& t) {
  if (t.numel() == 0) return "[]";
  Printer pr;
  pr.shape = t.shape();
  pr.complex = t.is_complex();
  pr.summarize = t.numel() > kThreshold;
  NoGradGuard ng;
  if (t.dtype() == Dtype::Int64) {
    pr.ints = to_vector<std::int64_t>(t.detach());  // exact, even above 2^53
    pr.f1.kind = Formatter::Kind::Int;
  } else {
    const auto v = to_vector<std::complex<double>>(t.detach());
    pr.re.resize(v.size());
    pr.im.resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      pr.re[i] = v[i].real();
      pr.im[i] = v[i].imag();
    }
    if (t.dtype() == Dtype::Bool) pr.f1.kind = Formatter::Kind::Bool;
  }
  std::vector<std::int64_t> offs;
  pr.collect(0, 0, offs);
  if (!pr.ints.empty()) {
    for (auto o : offs) pr.f1.width = std::max(pr.f1.width, std::to_string(pr.ints[static_cast<std::size_t>(o)]).size());
  } else {
    std::vector<double> a, b;
    for (auto o : offs) {
      a.push_back(pr.re[static_cast<std::size_t>(o)]);
      b.push_back(pr.im[static_cast<std::size_t>(o)]);
    }
    pr.f1.fit(a);
    if (pr.complex) pr.f2.fit(b);
  }
  return pr.shape.empty() ? pr.scalar(0) : pr.block(0, 0, 0);
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[undefined tensor]";
  // a CUDA tensor prints its values copied to the host (as torch does)
  os << values_str(t.device().is_cpu() ? t : t.detach().to(Device::cpu())) << "\n[" << dtype_name(t.dtype()) << " " << detail::shape_str(t.shape()) << " "
     << t.device().str();
  if (t.grad_fn()) os << ", grad_fn=<" << t.grad_fn()->name() << ">";
  else if (t.requires_grad()) os << ", requires_grad=True";
  return os << "]";
}

}  // namespace phasor
