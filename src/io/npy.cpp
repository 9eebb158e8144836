// src/io/npy.cpp - NumPy .npy: header codec (a small Python-literal parser), save_npy, load_npy.
// Format: "\x93NUMPY", major, minor, header length (u16 for 1.0, u32 for 2.0/3.0), then a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and a
// newline so the data starts at a multiple of 64 bytes, then the raw elements.
#include <cstring>
#include <memory>

#include "core/tensor_impl.hpp"
#include "io/io_util.hpp"
#include "phasor/creation.hpp"
#include "phasor/io.hpp"
#include "phasor/ops.hpp"

namespace phasor::io {
namespace detail {

namespace {

const char kMagic[] = "\x93NUMPY";

const char* descr_of(Dtype t) {
  switch (t) {
    case Dtype::Bool: return "|b1";
    case Dtype::Int64: return "<i8";
    case Dtype::Float32: return "<f4";
    case Dtype::Float64: return "<f8";
    case Dtype::Complex64: return "<c8";
    case Dtype::Complex128: return "<c16";
  }
  return "?";
}

// ---- a minimal parser for the Python literals .npy headers use ----------------------------------------
struct PyVal {
  enum Kind { Str, Int, Bool, NoneV, Tuple, Dict } kind = NoneV;
  std::string s;
  std::int64_t i = 0;
  bool b = false;
  std::vector<PyVal> items;                           // Tuple / list
  std::vector<std::pair<std::string, PyVal>> dict;    // Dict
};

class PyParser {
 public:
  PyParser(const char* p, std::size_t n, const char* op, const std::string& where)
      : p_(p), end_(p + n), op_(op), where_(where) {}

  PyVal parse_top() {
    PyVal v = value(0);
    ws();
    if (p_ != end_) err("unexpected text after the header dict");
    return v;
  }

 private:
  const char* p_;
  const char* end_;
  const char* op_;
  const std::string& where_;

  [[noreturn]] void err(const std::string& what) { fail(op_, where_, "bad .npy header: " + what); }
  void ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool eat(char c) {
    ws();
    if (p_ != end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  PyVal value(int depth) {
    if (depth > 16) err("nesting too deep");
    ws();
    if (p_ == end_) err("unexpected end");
    const char c = *p_;
    if (c == '{') return dict(depth);
    if (c == '(' || c == '[') return seq(depth, c == '(' ? ')' : ']');
    if (c == '\'' || c == '"') {
      PyVal v;
      v.kind = PyVal::Str;
      v.s = str();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return integer();
    return word();
  }
  std::string str() {
    const char q = *p_++;
    std::string out;
    while (true) {
      if (p_ == end_) err("unterminated string");
      char c = *p_++;
      if (c == q) break;
      if (c == '\\') {
        if (p_ == end_) err("unterminated string");
        c = *p_++;
      }
      out.push_back(c);
    }
    return out;
  }
  PyVal integer() {
    PyVal v;
    v.kind = PyVal::Int;
    bool neg = false;
    if (*p_ == '-') {
      neg = true;
      ++p_;
    }
    if (p_ == end_ || *p_ < '0' || *p_ > '9') err("expected a digit");
    std::int64_t x = 0;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
      if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *p_ - '0', &x)) err("integer too large");
      ++p_;
    }
    if (p_ != end_ && (*p_ == 'L' || *p_ == 'l')) ++p_;  // Python 2 longs
    v.i = neg ? -x : x;
    return v;
  }
  PyVal word() {
    const char* b = p_;
    while (p_ != end_ && ((*p_ >= 'a' && *p_ <= 'z') || (*p_ >= 'A' && *p_ <= 'Z'))) ++p_;
    const std::string w(b, p_);
    PyVal v;
    if (w == "True" || w == "False") {
      v.kind = PyVal::Bool;
      v.b = w == "True";
    } else if (w == "None") {
      v.kind = PyVal::NoneV;
    } else {
      err(w.empty() ? std::string("unexpected character") : "unexpected word '" + w + "'");
    }
    return v;
  }
  PyVal seq(int depth, char close) {
    ++p_;
    PyVal v;
    v.kind = PyVal::Tuple;
    while (true) {
      if (eat(close)) return v;
      v.items.push_back(value(depth + 1));
      if (eat(close)) return v;
      if (!eat(',')) err("expected ',' in a tuple");
    }
  }
  PyVal dict(int depth) {
    ++p_;
    PyVal v;
    v.kind = PyVal::Dict;
    while (true) {
      if (eat('}')) return v;
      ws();
      if (p_ == end_ || (*p_ != '\'' && *p_ != '"')) err("expected a string key");
      std::string key = str();
      if (!eat(':')) err("expected ':' after key '" + key + "'");
      v.dict.emplace_back(std::move(key), value(depth + 1));
      if (eat('}')) return v;
      if (!eat(',')) err("expected ',' in the dict");
    }
  }
};

/// Parses a descr such as '<f4', '|b1', '>i2' into an ElemType.
bool parse_descr(const std::string& d, ElemType& e) {
  if (d.size() < 3) return false;
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return false;
  e.big_endian = order == '>';
  e.kind = d[1];
  if (e.kind != 'b' && e.kind != 'i' && e.kind != 'u' && e.kind != 'f' && e.kind != 'c') return false;
  int size = 0;
  for (std::size_t k = 2; k < d.size(); ++k) {
    if (d[k] < '0' || d[k] > '9' || size > 1000) return false;
    size = size * 10 + (d[k] - '0');
  }
  e.size = size;
  Dtype dt;
  return load_dtype(e, dt);
}

}  // namespace

std::string npy_header(Dtype dtype, const Shape& shape) {
  std::string dict = "{'descr': '" + std::string(descr_of(dtype)) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t k = 0; k < shape.size(); ++k) {
    dict += std::to_string(shape[k]);
    if (k + 1 < shape.size() || shape.size() == 1) dict += ",";
    if (k + 1 < shape.size()) dict += " ";
  }
  dict += "), }";
  std::size_t prefix = 10;
  std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  unsigned char major = 1;
  if (total - prefix > 65535) {
    major = 2;
    prefix = 12;
    total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  }
  const std::size_t hlen = total - prefix;
  dict.append(hlen - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  if (major == 1) {
    out.push_back(static_cast<char>(hlen & 0xFF));
    out.push_back(static_cast<char>((hlen >> 8) & 0xFF));
  } else {
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>((hlen >> (8 * k)) & 0xFF));
  }
  return out + dict;
}

Tensor npy_decode(const unsigned char* p, std::size_t n, const char* op, const std::string& where) {
  if (n < 10) fail(op, where, "truncated .npy (" + std::to_string(n) + " bytes, shorter than the 10-byte preamble)");
  if (std::memcmp(p, kMagic, 6) != 0) fail(op, where, "not a .npy file (bad magic)");
  const int major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    fail(op, where, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  std::size_t prefix = major == 1 ? 10 : 12;
  if (n < prefix) fail(op, where, "truncated .npy preamble");
  std::uint64_t hlen = major == 1 ? (p[8] | (p[9] << 8))
                                  : (std::uint64_t(p[8]) | std::uint64_t(p[9]) << 8 | std::uint64_t(p[10]) << 16 |
                                     std::uint64_t(p[11]) << 24);
  if (hlen > n - prefix)
    fail(op, where, "truncated .npy header (header length " + std::to_string(hlen) + " but only " +
                        std::to_string(n - prefix) + " bytes follow)");
  const PyVal h = PyParser(reinterpret_cast<const char*>(p + prefix), static_cast<std::size_t>(hlen), op, where).parse_top();
  if (h.kind != PyVal::Dict) fail(op, where, "bad .npy header: not a dict");
  const PyVal *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto& [k, v] : h.dict) {
    if (k == "descr") descr = &v;
    else if (k == "fortran_order") fortran = &v;
    else if (k == "shape") shape = &v;
  }
  if (!descr || !fortran || !shape) fail(op, where, "bad .npy header: needs 'descr', 'fortran_order' and 'shape'");
  if (descr->kind != PyVal::Str)
    fail(op, where, "unsupported dtype (structured/record arrays are not supported)");
  ElemType e{};
  if (!parse_descr(descr->s, e))
    fail(op, where, "unsupported dtype '" + descr->s + "' (phasor loads bool, integer, float and complex arrays)");
  if (fortran->kind != PyVal::Bool) fail(op, where, "bad .npy header: 'fortran_order' is not True/False");
  if (shape->kind != PyVal::Tuple) fail(op, where, "bad .npy header: 'shape' is not a tuple");
  Shape dims;
  for (const auto& s : shape->items) {
    if (s.kind != PyVal::Int || s.i < 0) fail(op, where, "bad .npy header: shape entries must be non-negative integers");
    dims.push_back(s.i);
  }
  if (dims.size() > 64) fail(op, where, "bad .npy header: too many dims (" + std::to_string(dims.size()) + ")");
  std::int64_t numel = 0;
  if (!checked_numel(dims, numel)) fail(op, where, "bad .npy header: shape " + phasor::detail::shape_str(dims) + " overflows");
  const std::uint64_t need = static_cast<std::uint64_t>(numel) * static_cast<std::uint64_t>(e.size);
  const std::uint64_t have = n - prefix - hlen;
  if (need != have)
    fail(op, where, (have < need ? "truncated data: " : "unexpected trailing data: ") + std::to_string(have) +
                        " bytes for shape " + phasor::detail::shape_str(dims) + " of '" + descr->s + "' which needs " +
                        std::to_string(need));
  Dtype dt;
  load_dtype(e, dt);
  Shape file_shape = dims;
  if (fortran->b) file_shape.assign(dims.rbegin(), dims.rend());
  Tensor t = empty(file_shape, dt);
  if (numel > 0) decode_elements(p + prefix + hlen, numel, e, t.data_ptr(), op, where);
  if (fortran->b && dims.size() > 1) {
    Shape perm(dims.size());
    for (std::size_t k = 0; k < dims.size(); ++k) perm[k] = static_cast<std::int64_t>(dims.size() - 1 - k);
    t = t.permute(perm).contiguous();
  }
  return t;
}

}  // namespace detail

void save_npy(const std::string& path, const Tensor& t) {
  if (!t.defined()) throw Error("save_npy", "'" + path + "': undefined tensor");
  const Tensor c = detail::host_contiguous(t, "save_npy");
  const std::string header = detail::npy_header(c.dtype(), c.shape());
  detail::AtomicWriter w(path, "save_npy");
  w.write(header.data(), header.size());
  if (c.numel() > 0) w.write(c.data_ptr(), c.nbytes());
  w.commit();
}

Tensor load_npy(const std::string& path) {
  const auto bytes = detail::read_file(path, "load_npy");
  return detail::npy_decode(bytes.data(), bytes.size(), "load_npy", path);
}

}  // namespace phasor::io
