// src/io/npy.cpp - NumPy .npy: header codec (a small Python-literal parser), save_npy, load_npy.
// Format: "\x93NUMPY", major, minor, header length (u16 for 1.0, u32 for 2.0/3.0), then a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and a
// newline so the data starts at a multiple of 64 bytes, then the raw elements.
#include <algorithm>
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
constexpr std::uint64_t kMaxHeader = 1u << 24;  // 16 MiB; real headers are well under 1 KiB

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

std::uint64_t npy_data_offset(const unsigned char* p, std::size_t avail, std::uint64_t total, const char* op,
                              const std::string& where) {
  if (total < 10 || avail < 10)
    fail(op, where, "truncated .npy (" + std::to_string(total) + " bytes, shorter than the 10-byte preamble)");
  if (std::memcmp(p, kMagic, 6) != 0) fail(op, where, "not a .npy file (bad magic)");
  const int major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    fail(op, where, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  const std::uint64_t prefix = major == 1 ? 10 : 12;
  if (total < prefix || avail < prefix) fail(op, where, "truncated .npy preamble");
  const std::uint64_t hlen = major == 1 ? (p[8] | (p[9] << 8))
                                        : (std::uint64_t(p[8]) | std::uint64_t(p[9]) << 8 |
                                           std::uint64_t(p[10]) << 16 | std::uint64_t(p[11]) << 24);
  if (hlen > kMaxHeader) fail(op, where, "bad .npy header: length " + std::to_string(hlen) + " is implausibly large");
  if (hlen > total - prefix)
    fail(op, where, "truncated .npy header (header length " + std::to_string(hlen) + " but only " +
                        std::to_string(total - prefix) + " bytes follow)");
  return prefix + hlen;
}

NpyInfo npy_parse(const unsigned char* p, std::uint64_t data_offset, std::uint64_t total, const char* op,
                  const std::string& where) {
  const std::uint64_t prefix = p[6] == 1 ? 10 : 12;
  const PyVal h = PyParser(reinterpret_cast<const char*>(p + prefix), static_cast<std::size_t>(data_offset - prefix),
                           op, where)
                      .parse_top();
  if (h.kind != PyVal::Dict) fail(op, where, "bad .npy header: not a dict");
  const PyVal *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto& [k, v] : h.dict) {
    if (k == "descr") descr = &v;
    else if (k == "fortran_order") fortran = &v;
    else if (k == "shape") shape = &v;
  }
  if (!descr || !fortran || !shape) fail(op, where, "bad .npy header: needs 'descr', 'fortran_order' and 'shape'");
  if (descr->kind != PyVal::Str) fail(op, where, "unsupported dtype (structured/record arrays are not supported)");
  NpyInfo info;
  info.descr = descr->s;
  if (!parse_descr(descr->s, info.elem))
    fail(op, where, "unsupported dtype '" + descr->s + "' (phasor loads bool, integer, float and complex arrays)");
  if (fortran->kind != PyVal::Bool) fail(op, where, "bad .npy header: 'fortran_order' is not True/False");
  info.fortran = fortran->b;
  if (shape->kind != PyVal::Tuple) fail(op, where, "bad .npy header: 'shape' is not a tuple");
  for (const auto& d : shape->items) {
    if (d.kind != PyVal::Int || d.i < 0) fail(op, where, "bad .npy header: shape entries must be non-negative integers");
    info.shape.push_back(d.i);
  }
  if (info.shape.size() > 64) fail(op, where, "bad .npy header: too many dims (" + std::to_string(info.shape.size()) + ")");
  const std::string shape_text = phasor::detail::shape_str(info.shape);
  if (!checked_numel(info.shape, info.numel)) fail(op, where, "bad .npy header: shape " + shape_text + " overflows");
  const std::uint64_t need = static_cast<std::uint64_t>(info.numel) * static_cast<std::uint64_t>(info.elem.size);
  const std::uint64_t have = total - data_offset;
  if (need != have)
    fail(op, where, (have < need ? "truncated data: " : "unexpected trailing data: ") + std::to_string(have) +
                        " bytes for shape " + shape_text + " of '" + info.descr + "' which needs " + std::to_string(need));
  info.data_offset = data_offset;
  return info;
}

Tensor npy_load(const NpyInfo& info, const std::function<void(void*, std::size_t)>& read_raw, const char* op,
                const std::string& where) {
  Shape file_shape = info.shape;
  if (info.fortran) file_shape.assign(info.shape.rbegin(), info.shape.rend());
  Tensor t = read_elements(file_shape, info.elem, info.numel, read_raw, op, where);
  if (info.fortran && info.shape.size() > 1) {
    Shape perm(info.shape.size());
    for (std::size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<std::int64_t>(perm.size() - 1 - k);
    t = t.permute(perm).contiguous();
  }
  return t;
}

Tensor npy_decode(const unsigned char* p, std::size_t n, const char* op, const std::string& where) {
  const std::uint64_t off = npy_data_offset(p, n, n, op, where);
  const NpyInfo info = npy_parse(p, off, n, op, where);
  return npy_load(
      info, [&](void* dst, std::size_t bytes) { std::memcpy(dst, p + off, bytes); }, op, where);
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
  // Header first, then the elements straight into the tensor (no staging copy for native dtypes).
  const char* op = "load_npy";
  const detail::InputFile f(path, op);
  unsigned char pre[12] = {};
  const std::size_t avail = static_cast<std::size_t>(std::min<std::uint64_t>(f.size(), 12));
  f.read_at(0, pre, avail);
  const std::uint64_t off = detail::npy_data_offset(pre, avail, f.size(), op, path);
  std::vector<unsigned char> head(static_cast<std::size_t>(off));
  f.read_at(0, head.data(), head.size());
  const detail::NpyInfo info = detail::npy_parse(head.data(), off, f.size(), op, path);
  return detail::npy_load(
      info, [&](void* dst, std::size_t bytes) { f.read_at(off, dst, bytes); }, op, path);
}

}  // namespace phasor::io
