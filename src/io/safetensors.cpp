// src/io/safetensors.cpp - the safetensors format (8-byte little-endian header length, JSON header,
// one byte buffer of row-major tensors), a small strict JSON reader/writer, and checkpoints on top.
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "core/tensor_impl.hpp"
#include "io/io_util.hpp"
#include "phasor/creation.hpp"
#include "phasor/io.hpp"

namespace phasor::io {
namespace {

using detail::fail;
constexpr std::uint64_t kMaxHeader = 100'000'000;  // same bound as the reference implementation
const char kComplexKey[] = "phasor.complex";

// ---- JSON ------------------------------------------------------------------------------------------------
struct Json {
  enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
  bool b = false;
  std::string s;  // string value, or a number's text
  std::vector<Json> arr;
  std::vector<std::pair<std::string, Json>> obj;
};

class JsonParser {
 public:
  JsonParser(const char* p, std::size_t n, const char* op, const std::string& path)
      : b_(p), p_(p), e_(p + n), op_(op), path_(path) {}

  Json document() {
    ws();
    if (p_ == e_ || *p_ != '{') err("the header must be a JSON object");
    Json v = value(0);
    ws();
    if (p_ != e_) err("unexpected text after the JSON object");
    return v;
  }

 private:
  const char *b_, *p_, *e_;
  const char* op_;
  const std::string& path_;

  [[noreturn]] void err(const std::string& what) {
    fail(op_, path_, "bad JSON header at byte " + std::to_string(p_ - b_) + ": " + what);
  }
  /// Rejects an object with a repeated key (O(n log n): headers may list many tensors).
  void check_unique(const Json& v) {
    std::vector<const std::string*> keys;
    for (const auto& kv : v.obj) keys.push_back(&kv.first);
    std::sort(keys.begin(), keys.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
    for (std::size_t k = 1; k < keys.size(); ++k)
      if (*keys[k] == *keys[k - 1]) err("duplicate key \"" + *keys[k] + "\"");
  }
  void ws() {
    while (p_ != e_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool lit(const char* w) {
    const std::size_t n = std::strlen(w);
    if (static_cast<std::size_t>(e_ - p_) >= n && std::memcmp(p_, w, n) == 0) {
      p_ += n;
      return true;
    }
    return false;
  }
  Json value(int depth) {
    if (depth > 64) err("nesting too deep");
    ws();
    if (p_ == e_) err("unexpected end");
    Json v;
    switch (*p_) {
      case '{': {
        ++p_;
        v.kind = Json::Obj;
        ws();
        if (p_ != e_ && *p_ == '}') {
          ++p_;
          return v;
        }
        while (true) {
          ws();
          if (p_ == e_ || *p_ != '"') err("expected a string key");
          std::string key = string();
          ws();
          if (p_ == e_ || *p_ != ':') err("expected ':'");
          ++p_;
          v.obj.emplace_back(std::move(key), value(depth + 1));
          ws();
          if (p_ != e_ && *p_ == ',') {
            ++p_;
            continue;
          }
          if (p_ != e_ && *p_ == '}') {
            ++p_;
            check_unique(v);
            return v;
          }
          err("expected ',' or '}'");
        }
      }
      case '[': {
        ++p_;
        v.kind = Json::Arr;
        ws();
        if (p_ != e_ && *p_ == ']') {
          ++p_;
          return v;
        }
        while (true) {
          v.arr.push_back(value(depth + 1));
          ws();
          if (p_ != e_ && *p_ == ',') {
            ++p_;
            continue;
          }
          if (p_ != e_ && *p_ == ']') {
            ++p_;
            return v;
          }
          err("expected ',' or ']'");
        }
      }
      case '"':
        v.kind = Json::Str;
        v.s = string();
        return v;
      case 't':
      case 'f':
      case 'n':
        if (lit("true")) {
          v.kind = Json::Bool;
          v.b = true;
        } else if (lit("false")) {
          v.kind = Json::Bool;
        } else if (!lit("null")) {
          err("unexpected character");
        }
        return v;
      default:
        return number();
    }
  }
  Json number() {
    const char* s = p_;
    if (p_ != e_ && *p_ == '-') ++p_;
    auto digits = [&] {
      const char* d = p_;
      while (p_ != e_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ - d;
    };
    if (p_ == e_) err("unexpected end");
    if (*p_ == '0') {
      ++p_;
    } else if (digits() == 0) {
      err("unexpected character");
    }
    if (p_ != e_ && *p_ == '.') {
      ++p_;
      if (digits() == 0) err("expected digits after '.'");
    }
    if (p_ != e_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ != e_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (digits() == 0) err("expected exponent digits");
    }
    Json v;
    v.kind = Json::Num;
    v.s.assign(s, p_);
    return v;
  }
  unsigned hex4() {
    if (e_ - p_ < 4) err("short \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else err("bad \\u escape");
    }
    return v;
  }
  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  std::string string() {
    ++p_;  // opening quote
    std::string out;
    while (true) {
      if (p_ == e_) err("unterminated string");
      const unsigned char c = static_cast<unsigned char>(*p_++);
      if (c == '"') return out;
      if (c < 0x20) err("control character in a string");
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        continue;
      }
      if (p_ == e_) err("unterminated string");
      const char x = *p_++;
      switch (x) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {
            if (!lit("\\u")) err("unpaired surrogate");
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) err("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            err("unpaired surrogate");
          }
          utf8(out, cp);
          break;
        }
        default:
          err(std::string("bad escape '\\") + x + "'");
      }
    }
  }
};

void json_string(std::string& out, const std::string& s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          static const char hex[] = "0123456789abcdef";
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 15]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

/// A JSON number that must be a non-negative integer.
bool json_uint(const Json& j, std::uint64_t& out) {
  if (j.kind != Json::Num || j.s.empty() || j.s.size() > 20) return false;
  std::uint64_t v = 0;
  for (char c : j.s) {
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, static_cast<std::uint64_t>(c - '0'), &v))
      return false;
  }
  out = v;
  return true;
}

// ---- dtypes ----------------------------------------------------------------------------------------------
const char* st_dtype(Dtype t) {
  switch (t) {
    case Dtype::Bool: return "BOOL";
    case Dtype::Int64: return "I64";
    case Dtype::Float32: return "F32";
    case Dtype::Float64: return "F64";
    default: return nullptr;
  }
}
bool st_elem(const std::string& s, detail::ElemType& e) {
  static const struct {
    const char* name;
    char kind;
    int size;
  } table[] = {{"BOOL", 'b', 1}, {"U8", 'u', 1},  {"I8", 'i', 1},  {"I16", 'i', 2},  {"U16", 'u', 2},
               {"I32", 'i', 4},  {"U32", 'u', 4}, {"I64", 'i', 8}, {"U64", 'u', 8},  {"F16", 'f', 2},
               {"BF16", 'B', 2}, {"F32", 'f', 4}, {"F64", 'f', 8}, {"C64", 'c', 8}};
  for (const auto& r : table)
    if (s == r.name) {
      e = detail::ElemType{r.kind, r.size, false};
      return true;
    }
  return false;
}

/// Parses the JSON array of names stored under "phasor.complex".
std::vector<std::string> complex_names(const std::string& text, const char* op, const std::string& path) {
  // The parser reads objects only: wrap the list as {"n": <list>}.
  const std::string wrapped = "{\"n\":" + text + "}";
  JsonParser wp(wrapped.data(), wrapped.size(), op, path);
  const Json j = wp.document();
  const Json& a = j.obj[0].second;
  if (a.kind != Json::Arr) fail(op, path, std::string("metadata '") + kComplexKey + "' is not a JSON list of names");
  std::vector<std::string> out;
  for (const auto& x : a.arr) {
    if (x.kind != Json::Str) fail(op, path, std::string("metadata '") + kComplexKey + "' is not a JSON list of names");
    out.push_back(x.s);
  }
  return out;
}

struct Entry {
  std::string name;
  Tensor t;           // contiguous CPU data to write (real view for complex)
  const char* dtype;  // safetensors dtype
  Shape shape;        // stored shape
  std::size_t nbytes;
};

}  // namespace

namespace detail {

void save_safetensors_as(const std::string& path, const StateDict& tensors, const Metadata& metadata, const char* op) {
  if (metadata.count(kComplexKey)) fail(op, path, std::string("metadata key '") + kComplexKey + "' is reserved");
  std::vector<Entry> entries;
  std::vector<std::string> complex;
  for (const auto& [name, t] : tensors) {
    if (name.empty()) fail(op, path, "empty tensor name");
    if (name == "__metadata__") fail(op, path, "'__metadata__' cannot name a tensor");
    if (!t.defined()) fail(op, path, "tensor '" + name + "' is undefined");
    Entry e;
    e.name = name;
    e.t = host_contiguous(t, op);
    e.shape = e.t.shape();
    if (e.t.is_complex()) {
      complex.push_back(name);
      const Dtype rt = to_real(e.t.dtype());
      Shape rs = e.shape;
      rs.push_back(2);
      e.t = e.t.numel() == 0 ? empty(rs, rt) : Tensor::from_blob(e.t.data_ptr(), rs, rt, [keep = e.t](void*) {});
      e.shape = rs;
    }
    e.dtype = st_dtype(e.t.dtype());
    e.nbytes = e.t.nbytes();
    entries.push_back(std::move(e));
  }
  // Largest elements first keeps every tensor aligned to its element size (as the reference writer does).
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.t.itemsize() > b.t.itemsize(); });
  std::string h = "{";
  Metadata meta = metadata;
  if (!complex.empty()) {
    std::string list = "[";
    for (std::size_t k = 0; k < complex.size(); ++k) {
      if (k) list += ",";
      json_string(list, complex[k]);
    }
    meta[kComplexKey] = list + "]";
  }
  bool first = true;
  if (!meta.empty()) {
    h += "\"__metadata__\":{";
    for (const auto& [k, v] : meta) {
      if (!first) h += ",";
      first = false;
      json_string(h, k);
      h += ":";
      json_string(h, v);
    }
    h += "}";
    first = false;
  }
  std::uint64_t off = 0;
  for (const auto& e : entries) {
    if (!first) h += ",";
    first = false;
    json_string(h, e.name);
    h += ":{\"dtype\":\"";
    h += e.dtype;
    h += "\",\"shape\":[";
    for (std::size_t k = 0; k < e.shape.size(); ++k) {
      if (k) h += ",";
      h += std::to_string(e.shape[k]);
    }
    h += "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + e.nbytes) + "]}";
    off += e.nbytes;
  }
  h += "}";
  h.append((8 - h.size() % 8) % 8, ' ');
  if (h.size() > kMaxHeader) fail(op, path, "header of " + std::to_string(h.size()) + " bytes exceeds the 100 MB limit");
  unsigned char len[8];
  for (int k = 0; k < 8; ++k) len[k] = static_cast<unsigned char>((std::uint64_t(h.size()) >> (8 * k)) & 0xFF);
  AtomicWriter w(path, op);
  w.write(len, 8);
  w.write(h.data(), h.size());
  for (const auto& e : entries)
    if (e.nbytes) w.write(e.t.data_ptr(), e.nbytes);
  w.commit();
}

StateDict load_safetensors_as(const std::string& path, Metadata* metadata, const char* op) {
  const InputFile f(path, op);
  const std::uint64_t n = f.size();
  if (n < 8) fail(op, path, "truncated safetensors file (" + std::to_string(n) + " bytes, no header length)");
  unsigned char len[8];
  f.read_at(0, len, 8);
  std::uint64_t hlen = 0;
  for (int k = 7; k >= 0; --k) hlen = (hlen << 8) | len[k];
  if (hlen > kMaxHeader) fail(op, path, "header length " + std::to_string(hlen) + " exceeds the 100 MB limit (corrupt?)");
  if (hlen > n - 8)
    fail(op, path, "truncated safetensors file: header length " + std::to_string(hlen) + " but only " +
                       std::to_string(n - 8) + " bytes follow");
  std::string header(static_cast<std::size_t>(hlen), '\0');
  f.read_at(8, header.data(), header.size());
  const Json doc = JsonParser(header.data(), header.size(), op, path).document();
  const std::uint64_t data_begin = 8 + hlen;
  const std::uint64_t data_size = n - data_begin;

  struct Item {
    std::string name;
    ElemType e;
    std::string dtype;
    Shape shape;
    std::uint64_t begin, end;
  };
  std::vector<Item> items;
  Metadata meta;
  for (const auto& [name, v] : doc.obj) {
    if (name == "__metadata__") {
      if (v.kind != Json::Obj) fail(op, path, "'__metadata__' is not an object");
      for (const auto& [k, s] : v.obj) {
        if (s.kind != Json::Str) fail(op, path, "metadata value of '" + k + "' is not a string");
        meta[k] = s.s;
      }
      continue;
    }
    if (v.kind != Json::Obj) fail(op, path, "entry '" + name + "' is not an object");
    const Json *dt = nullptr, *sh = nullptr, *of = nullptr;
    for (const auto& [k, x] : v.obj) {
      if (k == "dtype") dt = &x;
      else if (k == "shape") sh = &x;
      else if (k == "data_offsets") of = &x;
      else fail(op, path, "entry '" + name + "' has unknown field '" + k + "'");
    }
    if (!dt || !sh || !of) fail(op, path, "entry '" + name + "' needs 'dtype', 'shape' and 'data_offsets'");
    Item it;
    it.name = name;
    if (dt->kind != Json::Str) fail(op, path, "entry '" + name + "': 'dtype' is not a string");
    it.dtype = dt->s;
    if (!st_elem(dt->s, it.e)) fail(op, path, "entry '" + name + "': unsupported dtype '" + dt->s + "'");
    if (sh->kind != Json::Arr) fail(op, path, "entry '" + name + "': 'shape' is not a list");
    for (const auto& d : sh->arr) {
      std::uint64_t s;
      if (!json_uint(d, s) || s > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(op, path, "entry '" + name + "': shape entries must be non-negative integers");
      it.shape.push_back(static_cast<std::int64_t>(s));
    }
    if (of->kind != Json::Arr || of->arr.size() != 2 || !json_uint(of->arr[0], it.begin) ||
        !json_uint(of->arr[1], it.end))
      fail(op, path, "entry '" + name + "': 'data_offsets' must be two non-negative integers");
    std::int64_t numel;
    if (!checked_numel(it.shape, numel))
      fail(op, path, "entry '" + name + "': shape " + phasor::detail::shape_str(it.shape) + " overflows");
    if (it.end < it.begin || it.end > data_size)
      fail(op, path, "entry '" + name + "': data_offsets [" + std::to_string(it.begin) + ", " + std::to_string(it.end) +
                         ") out of range for a data buffer of " + std::to_string(data_size) + " bytes");
    const std::uint64_t need = static_cast<std::uint64_t>(numel) * static_cast<std::uint64_t>(it.e.size);
    if (it.end - it.begin != need)
      fail(op, path, "entry '" + name + "': data_offsets span " + std::to_string(it.end - it.begin) +
                         " bytes but shape " + phasor::detail::shape_str(it.shape) + " of " + it.dtype + " needs " +
                         std::to_string(need));
    items.push_back(std::move(it));
  }
  // The tensors must tile the data buffer exactly: no overlap, no gap, nothing after.
  std::vector<const Item*> order;
  for (const auto& it : items) order.push_back(&it);
  std::sort(order.begin(), order.end(), [](const Item* a, const Item* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t at = 0;
  for (const Item* it : order) {
    if (it->begin < at)
      fail(op, path, "entry '" + it->name + "' overlaps another tensor (data_offsets begin " +
                         std::to_string(it->begin) + " < " + std::to_string(at) + ")");
    if (it->begin > at)
      fail(op, path, "gap in the data buffer before entry '" + it->name + "' (bytes " + std::to_string(at) + " to " +
                         std::to_string(it->begin) + " belong to no tensor)");
    at = it->end;
  }
  if (at != data_size)
    fail(op, path, "data buffer has " + std::to_string(data_size) + " bytes but the tensors cover " + std::to_string(at));

  std::vector<std::string> cnames;
  if (auto c = meta.find(kComplexKey); c != meta.end()) {
    cnames = complex_names(c->second, op, path);
    meta.erase(c);
  }
  // Complex tensors are stored as their real view: check, then read them straight as complex.
  std::map<std::string, bool> is_complex;
  for (const auto& name : cnames) {
    const Item* found = nullptr;
    for (const auto& it : items)
      if (it.name == name) found = &it;
    if (!found) fail(op, path, "complex tensor '" + name + "' listed in the metadata is missing");
    if (found->e.kind != 'f' || found->e.size < 4 || found->shape.empty() || found->shape.back() != 2)
      fail(op, path, "complex tensor '" + name + "' must be stored as F32/F64 with a trailing dim of 2, got shape " +
                         phasor::detail::shape_str(found->shape) + " of " + found->dtype);
    is_complex[name] = true;
  }
  StateDict out;
  for (const auto& it : items) {
    std::int64_t numel;
    checked_numel(it.shape, numel);
    Shape shape = it.shape;
    ElemType e = it.e;
    if (is_complex.count(it.name)) {
      shape.pop_back();
      numel /= 2;
      e = ElemType{'c', 2 * it.e.size, false};
    }
    const std::uint64_t at = data_begin + it.begin;
    out.emplace(it.name, read_elements(
                             shape, e, numel, [&](void* dst, std::size_t bytes) { f.read_at(at, dst, bytes); }, op,
                             path + ":" + it.name));
  }
  if (metadata) *metadata = std::move(meta);
  return out;
}

}  // namespace detail

void save_safetensors(const std::string& path, const StateDict& tensors, const Metadata& metadata) {
  detail::save_safetensors_as(path, tensors, metadata, "save_safetensors");
}

StateDict load_safetensors(const std::string& path, Metadata* metadata) {
  return detail::load_safetensors_as(path, metadata, "load_safetensors");
}

void save_checkpoint(const std::string& path, const StateDict& model_state, const StateDict& optimizer_state,
                     const Metadata& metadata) {
  StateDict all;
  for (const auto& [k, v] : model_state) all.emplace("model." + k, v);
  for (const auto& [k, v] : optimizer_state) all.emplace("optimizer." + k, v);
  detail::save_safetensors_as(path, all, metadata, "save_checkpoint");
}

Checkpoint load_checkpoint(const std::string& path) {
  Checkpoint ck;
  StateDict all = detail::load_safetensors_as(path, &ck.metadata, "load_checkpoint");
  for (auto& [k, v] : all) {
    if (k.rfind("model.", 0) == 0) {
      ck.model.emplace(k.substr(6), std::move(v));
    } else if (k.rfind("optimizer.", 0) == 0) {
      ck.optimizer.emplace(k.substr(10), std::move(v));
    } else {
      detail::fail("load_checkpoint", path,
                   "unexpected key '" + k + "' (a checkpoint holds only 'model.*' and 'optimizer.*' entries)");
    }
  }
  return ck;
}

}  // namespace phasor::io
