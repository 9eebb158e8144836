// tests/test_io.cpp - .npy/.npz/safetensors/checkpoints: round trips for every dtype and layout,
// hand-made files (Fortran order, format versions, foreign dtypes), corrupt and truncated files,
// atomic writes, and interop with real NumPy (skipped when /usr/bin/python3 lacks numpy).
#include <doctest/doctest.h>
#include <phasor/phasor.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

using namespace phasor;
namespace fs = std::filesystem;

namespace {

/// A fresh directory (in /dev/shm when available: the fuzz loops write thousands of small files),
/// removed with its contents on destruction.
struct TempDir {
  std::string path;
  TempDir() {
    char shm[] = "/dev/shm/phasor_io_test_XXXXXX";
    char tmp[] = "/tmp/phasor_io_test_XXXXXX";
    const char* p = ::access("/dev/shm", W_OK) == 0 ? ::mkdtemp(shm) : nullptr;
    if (!p) p = ::mkdtemp(tmp);
    REQUIRE(p != nullptr);
    path = p;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  /// Names of the files in the directory.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Tensors equal in dtype, shape and every element (bitwise for floats, so NaN-free inputs only).
bool same(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return a.numel() == 0 || std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

/// A deterministic tensor of any dtype with distinct-ish values.
Tensor sample(const Shape& shape, Dtype dt, std::uint64_t seed = 1) {
  Generator g(seed);
  switch (dt) {
    case Dtype::Bool: return randint(0, 2, shape, int64, Device::cpu(), &g).to(bool_);
    case Dtype::Int64: return randint(-1000000, 1000000, shape, int64, Device::cpu(), &g) * 1000003;
    default: return randn(shape, dt, Device::cpu(), &g);
  }
}

const std::vector<Dtype> kAllDtypes = {bool_, int64, float32, float64, complex64, complex128};
const std::vector<Shape> kShapes = {{}, {0}, {1}, {7}, {2, 3}, {2, 0, 3}, {3, 1, 4}, {2, 3, 2, 2}};

/// A .npy image with the given raw header dict text and data (format `major`.0).
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  std::string h = dict;
  const std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  if (major == 1) {
    out += static_cast<char>(h.size() & 0xFF);
    out += static_cast<char>(h.size() >> 8);
  } else {
    for (int k = 0; k < 4; ++k) out += static_cast<char>((h.size() >> (8 * k)) & 0xFF);
  }
  return out + h + data;
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::string reversed_bytes_each(const std::string& s, std::size_t w) {
  std::string out = s;
  for (std::size_t i = 0; i + w <= s.size(); i += w)
    for (std::size_t k = 0; k < w; ++k) out[i + k] = s[i + w - 1 - k];
  return out;
}

/// A safetensors image from a raw JSON header and data (header padded to 8 bytes with spaces).
std::string make_st(std::string header, const std::string& data, bool pad = true) {
  if (pad)
    while (header.size() % 8) header += ' ';
  std::string out;
  for (int k = 0; k < 8; ++k) out += static_cast<char>((static_cast<std::uint64_t>(header.size()) >> (8 * k)) & 0xFF);
  return out + header + data;
}

/// doctest matcher for a message containing `s` (built at run time, e.g. with a path in it).
doctest::Contains has(const std::string& s) { return doctest::Contains(s.c_str()); }

bool have_numpy() {
  static const int ok = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1");
  return ok == 0;
}

}  // namespace

// ==== .npy ========================================================================================

TEST_CASE("npy round trip: every dtype and shape, 0-d and zero-size included") {
  TempDir dir;
  for (Dtype dt : kAllDtypes)
    for (const Shape& s : kShapes) {
      CAPTURE(dtype_name(dt));
      CAPTURE(s.size());
      const Tensor t = sample(s, dt);
      io::save_npy(dir / "t.npy", t);
      const Tensor u = io::load_npy(dir / "t.npy");
      CHECK(same(t, u));
      const std::string bytes = read_bytes(dir / "t.npy");
      REQUIRE(bytes.size() >= 10);
      CHECK(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
      const std::size_t hlen = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
      CHECK((10 + hlen) % 64 == 0);
      CHECK(bytes.size() == 10 + hlen + t.nbytes());
    }
  CHECK(dir.files() == std::vector<std::string>{"t.npy"});
  // a larger array (read straight into the tensor)
  const Tensor big = sample({1000, 513}, float32, 9);
  io::save_npy(dir / "big.npy", big);
  CHECK(same(io::load_npy(dir / "big.npy"), big));
}

TEST_CASE("npy header text matches NumPy's") {
  TempDir dir;
  auto header_of = [&](const Tensor& t) {
    io::save_npy(dir / "h.npy", t);
    const std::string b = read_bytes(dir / "h.npy");
    return b.substr(10, static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8);
  };
  auto starts = [](const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; };
  CHECK(starts(header_of(zeros({3}, float32)), "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }   "));
  CHECK(starts(header_of(zeros({2, 4}, complex128)), "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 4), }  "));
  CHECK(starts(header_of(scalar_tensor(true)), "{'descr': '|b1', 'fortran_order': False, 'shape': (), }  "));
  CHECK(starts(header_of(zeros({1}, int64)), "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), } "));
  CHECK(header_of(zeros({1}, int64)).back() == '\n');
}

TEST_CASE("npy writes non-contiguous tensors in row-major order") {
  TempDir dir;
  const Tensor base = sample({4, 6}, float64);
  const std::vector<Tensor> views = {base.t(), base.slice(1, 1, 6, 2), base.select(1, 3),
                                     base.index({Slice(), Slice(std::nullopt, std::nullopt, 3)}),
                                     sample({1, 5}, complex64).expand({3, 5}), base.permute({1, 0}).slice(0, 2, 5)};
  for (const auto& v : views) {
    io::save_npy(dir / "v.npy", v);
    CHECK(same(io::load_npy(dir / "v.npy"), v.contiguous()));
  }
  // autograd-tracked tensors are saved by value
  Tensor p = sample({3}, float64).requires_grad_();
  io::save_npy(dir / "p.npy", p * 2.0);
  const Tensor q = io::load_npy(dir / "p.npy");
  CHECK_FALSE(q.requires_grad());
  CHECK(same(q, (p * 2.0).detach()));
}

TEST_CASE("npy reader: Fortran order, format versions 2.0 and 3.0, header variants") {
  TempDir dir;
  // Fortran order: element (i, j) of a 2x3 array lies at j*2 + i.
  std::vector<double> colmajor = {0, 10, 1, 11, 2, 12};  // a[i][j] = 10 i + j
  write_bytes(dir / "f.npy", make_npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", raw(colmajor)));
  Tensor f = io::load_npy(dir / "f.npy");
  CHECK(f.shape() == Shape{2, 3});
  CHECK(to_vector<double>(f) == std::vector<double>{0, 1, 2, 10, 11, 12});
  CHECK(f.is_contiguous());
  // 3-D Fortran order: a[i][j][k] = 100 i + 10 j + k, shape (2, 3, 2); column-major: i fastest.
  std::vector<std::int64_t> cm3;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) cm3.push_back(100 * i + 10 * j + k);
  write_bytes(dir / "f3.npy", make_npy("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3, 2), }", raw(cm3)));
  std::vector<std::int64_t> want3;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) want3.push_back(100 * i + 10 * j + k);
  CHECK(to_vector<std::int64_t>(io::load_npy(dir / "f3.npy")) == want3);
  // versions 2.0 and 3.0 use a 4-byte header length
  std::vector<float> v = {1.5f, -2.25f};
  for (int major : {2, 3}) {
    write_bytes(dir / "v.npy", make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", raw(v), major));
    CHECK(to_vector<float>(io::load_npy(dir / "v.npy")) == v);
  }
  // key order, double quotes, Python-2 longs, spacing
  write_bytes(dir / "k.npy", make_npy("{\"shape\":(1L,2L),\"fortran_order\":False,\"descr\":\"<f4\"}", raw(v)));
  Tensor k = io::load_npy(dir / "k.npy");
  CHECK(k.shape() == Shape{1, 2});
  CHECK(to_vector<float>(k) == v);
}

TEST_CASE("npy reader converts other numeric dtypes losslessly") {
  TempDir dir;
  auto load = [&](const std::string& descr, const std::string& shape, const std::string& data) {
    write_bytes(dir / "x.npy", make_npy("{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }", data));
    return io::load_npy(dir / "x.npy");
  };
  Tensor a = load("<i4", "(3,)", raw(std::vector<std::int32_t>{-7, 0, 2147483647}));
  CHECK(a.dtype() == int64);
  CHECK(to_vector<std::int64_t>(a) == std::vector<std::int64_t>{-7, 0, 2147483647});
  Tensor b = load("|u1", "(3,)", raw(std::vector<std::uint8_t>{0, 128, 255}));
  CHECK(to_vector<std::int64_t>(b) == std::vector<std::int64_t>{0, 128, 255});
  Tensor c = load("<i2", "(2,)", raw(std::vector<std::int16_t>{-32768, 1234}));
  CHECK(to_vector<std::int64_t>(c) == std::vector<std::int64_t>{-32768, 1234});
  Tensor d = load("|i1", "(2,)", raw(std::vector<std::int8_t>{-128, 127}));
  CHECK(to_vector<std::int64_t>(d) == std::vector<std::int64_t>{-128, 127});
  Tensor e = load(">f8", "(2,)", reversed_bytes_each(raw(std::vector<double>{3.25, -1e300}), 8));
  CHECK(e.dtype() == float64);
  CHECK(to_vector<double>(e) == std::vector<double>{3.25, -1e300});
  Tensor f = load(">i4", "(2,)", reversed_bytes_each(raw(std::vector<std::int32_t>{-5, 70000}), 4));
  CHECK(to_vector<std::int64_t>(f) == std::vector<std::int64_t>{-5, 70000});
  Tensor g = load(">c8", "(1,)", reversed_bytes_each(raw(std::vector<float>{1.5f, -0.75f}), 4));
  CHECK(g.dtype() == complex64);
  CHECK(to_vector<std::complex<float>>(g)[0] == std::complex<float>(1.5f, -0.75f));
  Tensor h = load("<u8", "(2,)", raw(std::vector<std::uint64_t>{0, 9223372036854775807ull}));
  CHECK(to_vector<std::int64_t>(h) == std::vector<std::int64_t>{0, 9223372036854775807ll});
  Tensor i = load("<u4", "(1,)", raw(std::vector<std::uint32_t>{4294967295u}));
  CHECK(to_vector<std::int64_t>(i)[0] == 4294967295ll);
  // float16: 1.0, -2.0, 65504 (max), 2^-24 (smallest subnormal), 0x0155 (subnormal), inf
  Tensor k = load("<f2", "(6,)", raw(std::vector<std::uint16_t>{0x3C00, 0xC000, 0x7BFF, 0x0001, 0x0155, 0x7C00}));
  CHECK(k.dtype() == float32);
  const auto kv = to_vector<float>(k);
  CHECK(kv[0] == 1.0f);
  CHECK(kv[1] == -2.0f);
  CHECK(kv[2] == 65504.0f);
  CHECK(kv[3] == std::ldexp(1.0f, -24));
  CHECK(kv[4] == std::ldexp(341.0f, -24));
  CHECK(std::isinf(kv[5]));
  Tensor m = load("|b1", "(3,)", std::string("\x00\x01\x07", 3));  // nonzero bytes read as true
  CHECK(to_vector<std::int64_t>(m.to(int64)) == std::vector<std::int64_t>{0, 1, 1});
  // uint64 beyond int64 and non-numeric dtypes are rejected
  CHECK_THROWS_WITH_AS(load("<u8", "(1,)", raw(std::vector<std::uint64_t>{9223372036854775808ull})),
                       doctest::Contains("does not fit int64"), Error);
  CHECK_THROWS_WITH_AS(load("<U5", "(1,)", std::string(20, 'a')), doctest::Contains("unsupported dtype '<U5'"), Error);
  CHECK_THROWS_WITH_AS(load("|O", "(1,)", std::string(8, '\0')), doctest::Contains("unsupported dtype '|O'"), Error);
  CHECK_THROWS_WITH_AS(load("<f3", "(1,)", std::string(3, '\0')), doctest::Contains("unsupported dtype"), Error);
  write_bytes(dir / "s.npy", make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", raw(std::vector<float>{1})));
  CHECK_THROWS_WITH_AS(io::load_npy(dir / "s.npy"), doctest::Contains("structured"), Error);
}

TEST_CASE("npy reader errors: missing, truncated, bad magic, bad header, size mismatch") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(io::load_npy(dir / "nope.npy"), has("[load_npy] '" + (dir / "nope.npy") + "': no such file"),
                       Error);
  CHECK_THROWS_WITH_AS(io::load_npy(dir.path), doctest::Contains("is a directory"), Error);
  CHECK_THROWS_WITH_AS(io::load_npy("/dev/null"), doctest::Contains("is not a regular file"), Error);
  write_bytes(dir / "huge.npy", std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + std::string(100, ' '));
  CHECK_THROWS_WITH_AS(io::load_npy(dir / "huge.npy"), doctest::Contains("implausibly large"), Error);
  write_bytes(dir / "v2.npy", std::string("\x93NUMPY\x02\x00\x10", 9));
  CHECK_THROWS_WITH_AS(io::load_npy(dir / "v2.npy"), doctest::Contains("truncated .npy"), Error);
  write_bytes(dir / "m.npy", "PK\x03\x04 not a npy file at all");
  CHECK_THROWS_WITH_AS(io::load_npy(dir / "m.npy"), doctest::Contains("bad magic"), Error);
  const std::string v = raw(std::vector<float>{1, 2, 3});
  auto bad = [&](const std::string& dict, const std::string& data, const char* msg) {
    write_bytes(dir / "b.npy", make_npy(dict, data));
    CHECK_THROWS_WITH_AS(io::load_npy(dir / "b.npy"), doctest::Contains(msg), Error);
  };
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", v, "truncated data");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, "unexpected trailing data");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", v, "non-negative");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (3,) ", v, "bad .npy header");
  bad("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }", v, "fortran_order");
  bad("{'descr': '<f4', 'shape': (3,), }", v, "needs 'descr', 'fortran_order' and 'shape'");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }", v, "overflows");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999999999999,), }", v, "integer too large");
  bad("{'descr': '<f4', 'fortran_order': Nope, 'shape': (3,), }", v, "unexpected word");
  bad(std::string(70, '(') + std::string(70, ')'), v, "nesting too deep");
  std::string ver = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", v);
  ver[6] = 4;
  write_bytes(dir / "ver.npy", ver);
  CHECK_THROWS_WITH_AS(io::load_npy(dir / "ver.npy"), doctest::Contains("unsupported .npy format version 4.0"), Error);
}

TEST_CASE("npy: every truncation and header byte flip gives phasor::Error, never a crash") {
  TempDir dir;
  const Tensor t = sample({2, 3}, float64);
  io::save_npy(dir / "t.npy", t);
  const std::string good = read_bytes(dir / "t.npy");
  for (std::size_t len = 0; len < good.size(); ++len) {
    write_bytes(dir / "x.npy", good.substr(0, len));
    CHECK_THROWS_AS(io::load_npy(dir / "x.npy"), Error);
  }
  // Flips in the preamble and header: either an Error or a tensor of the same shape (e.g. a changed
  // byte order letter or a space turned into a tab) -- never another shape.
  int errors = 0;
  for (std::size_t pos = 0; pos < 128; ++pos)
    for (unsigned char mask : {0x01, 0x10, 0x80, 0xFF}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ mask);
      write_bytes(dir / "x.npy", bad);
      try {
        const Tensor u = io::load_npy(dir / "x.npy");
        CHECK(u.shape() == t.shape());
      } catch (const Error&) {
        ++errors;
      }
    }
  CHECK(errors > 300);
}

// ==== .npz ========================================================================================

TEST_CASE("npz round trip: every dtype, stored and compressed") {
  TempDir dir;
  io::NamedTensors items;
  int k = 0;
  for (Dtype dt : kAllDtypes)
    for (const Shape& s : kShapes) {
      items.emplace_back(std::string(dtype_name(dt)) + "_" + std::to_string(k), sample(s, dt, static_cast<std::uint64_t>(k + 1)));
      ++k;
    }
  items.emplace_back("nested/name.with.dots", arange(0, 10, 1, float32).reshape({2, 5}).t());
  for (bool compressed : {false, true}) {
    CAPTURE(compressed);
    io::save_npz(dir / "a.npz", items, compressed);
    const StateDict back = io::load_npz(dir / "a.npz");
    REQUIRE(back.size() == items.size());
    for (const auto& [name, t] : items) {
      CAPTURE(name);
      REQUIRE(back.count(name) == 1);
      CHECK(same(back.at(name), t.contiguous()));
    }
  }
  // StateDict overload; compressed zeros are much smaller; equal inputs give identical bytes
  StateDict sd{{"w", zeros({100, 100}, float64)}, {"b", ones({100}, float32)}};
  io::save_npz(dir / "s.npz", sd);
  io::save_npz(dir / "c.npz", sd, true);
  CHECK(fs::file_size(dir / "c.npz") * 20 < fs::file_size(dir / "s.npz"));
  const StateDict s2 = io::load_npz(dir / "c.npz");
  CHECK(same(s2.at("w"), sd.at("w")));
  CHECK(same(s2.at("b"), sd.at("b")));
  io::save_npz(dir / "s2.npz", sd);
  CHECK(read_bytes(dir / "s.npz") == read_bytes(dir / "s2.npz"));
  io::save_npz(dir / "e.npz", io::NamedTensors{});
  io::save_npz(dir / "brace.npz", {{"z", ones({2})}, {"a", zeros({1}, int64)}});  // brace list: kept in order
  const std::string zb = read_bytes(dir / "brace.npz");
  CHECK(zb.find("z.npy") < zb.find("a.npy"));
  CHECK(io::load_npz(dir / "brace.npz").size() == 2);
  CHECK(io::load_npz(dir / "e.npz").empty());
}

TEST_CASE("npz writer and reader errors") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(io::save_npz(dir / "d.npz", io::NamedTensors{{"a", ones({1})}, {"a", ones({2})}}),
                       doctest::Contains("duplicate tensor name 'a'"), Error);
  CHECK_THROWS_WITH_AS(io::save_npz(dir / "d.npz", io::NamedTensors{{"", ones({1})}}),
                       has("[save_npz] '" + (dir / "d.npz") + "': empty tensor name"), Error);
  CHECK(dir.files().empty());
  CHECK_THROWS_WITH_AS(io::load_npz(dir / "none.npz"), has("[load_npz] '" + (dir / "none.npz") + "': no such file"),
                       Error);
  write_bytes(dir / "short.npz", "PK");
  CHECK_THROWS_WITH_AS(io::load_npz(dir / "short.npz"), doctest::Contains("not a zip archive"), Error);
  io::save_npy(dir / "x.npy", ones({3}));
  CHECK_THROWS_WITH_AS(io::load_npz(dir / "x.npy"), doctest::Contains("no end-of-central-directory"), Error);

  // A flipped data byte in a stored entry fails the CRC check.
  io::save_npz(dir / "a.npz", StateDict{{"x", arange(0, 16, 1, float64)}});
  std::string a = read_bytes(dir / "a.npz");
  const std::size_t data_pos = 30 + 5 + 128 + 8;  // local header, "x.npy", npy preamble+header, into the data
  a[data_pos] = static_cast<char>(a[data_pos] ^ 0x40);
  write_bytes(dir / "bad.npz", a);
  CHECK_THROWS_WITH_AS(io::load_npz(dir / "bad.npz"), doctest::Contains("CRC mismatch in entry 'x.npy'"), Error);
  // Damage inside the entry's .npy header also reports as a CRC mismatch (not as a bad header).
  std::string h = read_bytes(dir / "a.npz");
  const std::size_t descr_pos = h.find("<f8");
  REQUIRE(descr_pos != std::string::npos);
  h[descr_pos + 1] = 'q';
  write_bytes(dir / "badh.npz", h);
  CHECK_THROWS_WITH_AS(io::load_npz(dir / "badh.npz"), doctest::Contains("CRC mismatch in entry 'x.npy'"), Error);
  // Deflated entry with corrupted stream
  io::save_npz(dir / "c.npz", StateDict{{"x", zeros({64}, float64)}}, true);
  std::string c = read_bytes(dir / "c.npz");
  c[40] = static_cast<char>(c[40] ^ 0xFF);
  write_bytes(dir / "badc.npz", c);
  CHECK_THROWS_AS(io::load_npz(dir / "badc.npz"), Error);
}

TEST_CASE("npz: every truncation and every byte flip gives Error or the original values") {
  TempDir dir;
  const StateDict sd{{"a", arange(0, 6, 1, int64).reshape({2, 3})}, {"b", from_vector(std::vector<double>{0.5, -1.5})}};
  for (bool compressed : {false, true}) {
    CAPTURE(compressed);
    io::save_npz(dir / "g.npz", sd, compressed);
    const std::string good = read_bytes(dir / "g.npz");
    for (std::size_t len = 0; len < good.size(); ++len) {
      write_bytes(dir / "x.npz", good.substr(0, len));
      CHECK_THROWS_AS(io::load_npz(dir / "x.npz"), Error);
    }
    // Zip names and some header fields carry no checksum, so a flip may rename an entry or be ignored;
    // the values must never change silently (data and sizes are covered by CRC and consistency checks).
    int errors = 0;
    for (std::size_t pos = 0; pos < good.size(); ++pos)
      for (unsigned char mask : {0x01, 0x80}) {
        std::string bad = good;
        bad[pos] = static_cast<char>(bad[pos] ^ mask);
        write_bytes(dir / "x.npz", bad);
        try {
          const StateDict got = io::load_npz(dir / "x.npz");
          REQUIRE(got.size() == 2);
          const Tensor& x = got.begin()->second;
          const Tensor& y = std::next(got.begin())->second;
          CHECK(((same(x, sd.at("a")) && same(y, sd.at("b"))) || (same(x, sd.at("b")) && same(y, sd.at("a")))));
        } catch (const Error&) {
          ++errors;
        }
      }
    CHECK(errors > static_cast<int>(good.size()));
  }
}

// ==== safetensors ==================================================================================

TEST_CASE("safetensors round trip: every dtype, metadata, complex via the real view") {
  TempDir dir;
  StateDict sd;
  int k = 0;
  for (Dtype dt : kAllDtypes)
    for (const Shape& s : kShapes) {
      sd.emplace(std::string(dtype_name(dt)) + "." + std::to_string(k), sample(s, dt, static_cast<std::uint64_t>(k + 1)));
      ++k;
    }
  sd.emplace("strided", sample({4, 6}, complex128).t());
  const io::Metadata meta{{"epoch", "12"}, {"note", "quotes \" backslash \\ tab \t newline \n ctrl \x01 utf8 \xc3\xa9"}};
  io::save_safetensors(dir / "m.safetensors", sd, meta);
  io::Metadata got_meta;
  const StateDict back = io::load_safetensors(dir / "m.safetensors", &got_meta);
  CHECK(got_meta == meta);
  REQUIRE(back.size() == sd.size());
  for (const auto& [name, t] : sd) {
    CAPTURE(name);
    CHECK(same(back.at(name), t.contiguous()));
  }
  // Layout: header length multiple of 8; every tensor aligned to its element size.
  const std::string bytes = read_bytes(dir / "m.safetensors");
  std::uint64_t n = 0;
  for (int b = 7; b >= 0; --b) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(b)]);
  CHECK(n % 8 == 0);
  CHECK(bytes[8] == '{');
  const std::string header = bytes.substr(8, n);
  CHECK(header.find("\"phasor.complex\"") != std::string::npos);
  CHECK(header.find("\"strided\":{\"dtype\":\"F64\",\"shape\":[6,4,2]") != std::string::npos);
  // Names with JSON-special characters survive.
  StateDict odd{{"a\"b\\c\n\x02\xc3\xa9", ones({2})}};
  io::save_safetensors(dir / "o.safetensors", odd);
  CHECK(io::load_safetensors(dir / "o.safetensors").count("a\"b\\c\n\x02\xc3\xa9") == 1);
  io::save_safetensors(dir / "e.safetensors", StateDict{});
  CHECK(io::load_safetensors(dir / "e.safetensors").empty());
}

TEST_CASE("safetensors reader: hand-made headers, escapes, foreign dtypes") {
  TempDir dir;
  auto load = [&](const std::string& header, const std::string& data, io::Metadata* m = nullptr) {
    write_bytes(dir / "h.safetensors", make_st(header, data));
    return io::load_safetensors(dir / "h.safetensors", m);
  };
  // whitespace, \u escapes with a surrogate pair, key order, a zero-size tensor
  io::Metadata m;
  StateDict a = load(
      " { \"__metadata__\" : { \"k\\u00e9\" : \"\\ud83d\\ude00\\/\" } ,\n"
      " \"w\\u0041\" : { \"shape\" : [ 2 ] , \"data_offsets\" : [ 0 , 8 ] , \"dtype\" : \"F32\" },"
      " \"z\": {\"dtype\": \"I64\", \"shape\": [0, 3], \"data_offsets\": [8, 8]} }",
      raw(std::vector<float>{1.f, 2.f}), &m);
  CHECK(to_vector<float>(a.at("wA")) == std::vector<float>{1.f, 2.f});
  CHECK(a.at("z").shape() == Shape{0, 3});
  CHECK(m.at("k\xc3\xa9") == "\xf0\x9f\x98\x80/");
  // foreign dtypes convert
  StateDict b = load("{\"i\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                     "\"u\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[8,10]},"
                     "\"h\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[10,12]},"
                     "\"bf\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[12,14]}}",
                     raw(std::vector<std::int32_t>{-3, 9}) + std::string("\xff\x07", 2) +
                         raw(std::vector<std::uint16_t>{0x3E00, 0x4049}));
  CHECK(to_vector<std::int64_t>(b.at("i")) == std::vector<std::int64_t>{-3, 9});
  CHECK(to_vector<std::int64_t>(b.at("u")) == std::vector<std::int64_t>{255, 7});
  CHECK(to_vector<float>(b.at("h"))[0] == 1.5f);
  CHECK(to_vector<float>(b.at("bf"))[0] == 3.140625f);
}

TEST_CASE("safetensors reader errors") {
  TempDir dir;
  const std::string d8 = raw(std::vector<float>{1.f, 2.f});
  auto bad = [&](const std::string& header, const std::string& data, const char* msg) {
    write_bytes(dir / "b.safetensors", make_st(header, data));
    CHECK_THROWS_WITH_AS(io::load_safetensors(dir / "b.safetensors"), has("[load_safetensors] '" + (dir / "b.safetensors") + "': "), Error);
    CHECK_THROWS_WITH_AS(io::load_safetensors(dir / "b.safetensors"),
                         doctest::Contains(msg), Error);
  };
  const std::string ok = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", d8, "bad JSON header");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],}}", d8, "expected a string key");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} x", d8, "unexpected text after");
  bad("[1]", d8, "must be a JSON object");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}}", d8, "out of range");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", d8, "needs 12");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"v\":{\"dtype\":\"F32\",\"shape\":[1],"
      "\"data_offsets\":[0,4]}}",
      d8, "overlaps");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", d8, "gap in the data buffer");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", d8, "tensors cover 4");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", d8, "out of range");
  bad("{\"w\":{\"dtype\":\"Q7\",\"shape\":[2],\"data_offsets\":[0,8]}}", d8, "unsupported dtype 'Q7'");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", d8, "non-negative integers");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", d8, "non-negative integers");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", d8, "two non-negative integers");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}", d8, "needs 'dtype', 'shape' and 'data_offsets'");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", d8, "unknown field 'x'");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"w\":{}}", d8, "duplicate key");
  bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}", d8, "overflows");
  bad("{\"w\":{\"dtype\":\"F\\x32\",\"shape\":[2],\"data_offsets\":[0,8]}}", d8, "bad escape");
  bad("{\"w\":{\"dtype\":\"F\\ud800\",\"shape\":[2],\"data_offsets\":[0,8]}}", d8, "unpaired surrogate");
  bad("{\"w\":{\"dtype\":\"F32\n\",\"shape\":[2],\"data_offsets\":[0,8]}}", d8, "control character");
  bad(std::string(100, '[') + std::string(100, ']'), d8, "must be a JSON object");
  bad("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}", d8, "nesting too deep");
  bad("{\"__metadata__\":{\"a\":1}," + ok.substr(1), d8, "metadata value of 'a' is not a string");
  bad("{\"__metadata__\":{\"phasor.complex\":\"[\\\"q\\\"]\"}," + ok.substr(1), d8, "complex tensor 'q'");
  bad("{\"__metadata__\":{\"phasor.complex\":\"[\\\"w\\\"]\"},\"w\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", d8,
      "must be stored as F32/F64 with a trailing dim of 2");
  bad("{\"__metadata__\":{\"phasor.complex\":\"{}\"}," + ok.substr(1), d8, "is not a JSON list of names");
  // header length field: absurd, larger than the file, file shorter than 8 bytes
  std::string huge = make_st(ok, d8);
  huge[6] = 1;
  write_bytes(dir / "huge.safetensors", huge);
  CHECK_THROWS_WITH_AS(io::load_safetensors(dir / "huge.safetensors"), doctest::Contains("exceeds the 100 MB limit"), Error);
  std::string longer = make_st(ok, d8);
  longer[0] = static_cast<char>(longer[0] + 64);
  write_bytes(dir / "long.safetensors", longer);
  CHECK_THROWS_WITH_AS(io::load_safetensors(dir / "long.safetensors"), doctest::Contains("truncated"), Error);
  write_bytes(dir / "tiny.safetensors", "abc");
  CHECK_THROWS_WITH_AS(io::load_safetensors(dir / "tiny.safetensors"), doctest::Contains("truncated"), Error);
  CHECK_THROWS_WITH_AS(io::load_safetensors(dir / "missing.safetensors"), doctest::Contains("no such file"), Error);
  // writer-side errors
  CHECK_THROWS_WITH_AS(io::save_safetensors(dir / "w.safetensors", StateDict{{"a", ones({1})}}, {{"phasor.complex", "x"}}),
                       doctest::Contains("reserved"), Error);
  CHECK_THROWS_WITH_AS(io::save_safetensors(dir / "w.safetensors", StateDict{{"__metadata__", ones({1})}}),
                       doctest::Contains("cannot name a tensor"), Error);
  CHECK_THROWS_WITH_AS(io::save_safetensors(dir / "w.safetensors", StateDict{{"a", Tensor()}}),
                       doctest::Contains("'a' is undefined"), Error);
}

TEST_CASE("safetensors: every truncation errors; header flips never change shapes or dtypes silently") {
  TempDir dir;
  const StateDict sd{{"w", sample({2, 3}, float32)}, {"c", sample({2}, complex128)}, {"i", sample({3}, int64)}};
  io::save_safetensors(dir / "g.safetensors", sd, {{"k", "v"}});
  const std::string good = read_bytes(dir / "g.safetensors");
  for (std::size_t len = 0; len < good.size(); ++len) {
    write_bytes(dir / "x.safetensors", good.substr(0, len));
    CHECK_THROWS_AS(io::load_safetensors(dir / "x.safetensors"), Error);
  }
  std::uint64_t n = 0;
  for (int b = 7; b >= 0; --b) n = (n << 8) | static_cast<unsigned char>(good[static_cast<std::size_t>(b)]);
  // Flips inside "__metadata__" may rename the "phasor.complex" key (the complex tensor then loads as
  // its real view); everywhere else in the header the shapes and dtypes must come back or an Error.
  const std::string header = good.substr(8, n);
  const std::size_t meta_begin = 8 + header.find("\"__metadata__\"");
  const std::size_t meta_end = 8 + header.find('}', meta_begin - 8);
  REQUIRE(meta_begin < meta_end);
  auto signature = [](const StateDict& s) {
    std::vector<std::string> out;
    for (const auto& kv : s) {
      std::string sh;
      for (auto d : kv.second.shape()) sh += " " + std::to_string(d);
      out.push_back(std::string(dtype_name(kv.second.dtype())) + sh);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  int errors = 0;
  for (std::size_t pos = 0; pos < 8 + n; ++pos)
    for (unsigned char mask : {0x01, 0x04, 0x80}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ mask);
      write_bytes(dir / "x.safetensors", bad);
      try {
        const StateDict got = io::load_safetensors(dir / "x.safetensors");
        if (pos < meta_begin || pos > meta_end) CHECK(signature(got) == signature(sd));
      } catch (const Error&) {
        ++errors;
      }
    }
  CHECK(errors > static_cast<int>(n));
}

TEST_CASE("random multi-byte corruption of every format: Error or success, never a crash") {
  TempDir dir;
  const StateDict sd{{"w", sample({3, 4}, float32)}, {"c", sample({2}, complex64)}, {"n", sample({5}, int64)},
                     {"b", sample({2, 2}, bool_)}};
  io::save_npy(dir / "g.npy", sd.at("w"));
  io::save_npz(dir / "g.npz", sd);
  io::save_npz(dir / "gc.npz", sd, true);
  io::save_safetensors(dir / "g.st", sd, {{"k", "v"}});
  std::mt19937 rng(2024);
  for (const std::string name : {"g.npy", "g.npz", "gc.npz", "g.st"}) {
    const std::string good = read_bytes(dir / name);
    int errors = 0, loads = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::string bad = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] = static_cast<char>(rng() & 0xFF);
      if (rng() % 4 == 0) bad.resize(rng() % bad.size());
      write_bytes(dir / "x", bad);
      try {
        if (name == "g.npy") (void)io::load_npy(dir / "x");
        else if (name == "g.st") (void)io::load_safetensors(dir / "x");
        else (void)io::load_npz(dir / "x");
        ++loads;
      } catch (const Error&) {
        ++errors;
      }
    }
    CAPTURE(name);
    CHECK(errors + loads == 300);
    CHECK(errors > 0);
  }
}

// ==== checkpoints ==================================================================================

TEST_CASE("checkpoint round trip and errors") {
  TempDir dir;
  const StateDict model{{"layers.0.weight", sample({4, 3}, float32)},
                        {"layers.0.bias", sample({4}, float32)},
                        {"spectral.weight", sample({2, 2, 5}, complex64)},
                        {"bn.num_batches_tracked", scalar_tensor(std::int64_t(17))}};
  const StateDict opt{{"state.0.exp_avg", sample({4, 3}, float32, 7)},
                      {"state.0.step", scalar_tensor(3.0, float64)},
                      {"param_groups.0.lr", scalar_tensor(1e-3, float64)}};
  io::save_checkpoint(dir / "ck.safetensors", model, opt, {{"epoch", "5"}});
  const io::Checkpoint ck = io::load_checkpoint(dir / "ck.safetensors");
  REQUIRE(ck.model.size() == model.size());
  REQUIRE(ck.optimizer.size() == opt.size());
  for (const auto& [k, t] : model) CHECK(same(ck.model.at(k), t));
  for (const auto& [k, t] : opt) CHECK(same(ck.optimizer.at(k), t));
  CHECK(ck.metadata == io::Metadata{{"epoch", "5"}});
  // the file is plain safetensors with prefixed keys
  const StateDict flat = io::load_safetensors(dir / "ck.safetensors");
  CHECK(flat.count("model.layers.0.weight") == 1);
  CHECK(flat.count("optimizer.param_groups.0.lr") == 1);
  io::save_safetensors(dir / "other.safetensors", StateDict{{"model.a", ones({1})}, {"stray", ones({1})}});
  CHECK_THROWS_WITH_AS(io::load_checkpoint(dir / "other.safetensors"),
                       has("[load_checkpoint] '" + (dir / "other.safetensors") + "': unexpected key 'stray'"), Error);
  CHECK_THROWS_WITH_AS(io::load_checkpoint(dir / "missing"), doctest::Contains("[load_checkpoint]"), Error);
  CHECK_THROWS_WITH_AS(io::save_checkpoint(dir / "ck.safetensors", StateDict{{"a", Tensor()}}, {}),
                       doctest::Contains("[save_checkpoint]"), Error);
  CHECK(same(io::load_checkpoint(dir / "ck.safetensors").model.at("layers.0.bias"), model.at("layers.0.bias")));
}

// ==== atomic writes ================================================================================

TEST_CASE("atomic writes: a failed write keeps the old file and leaves no temporary file") {
  TempDir dir;
  const std::string target = dir / "ck.npz";
  io::save_npz(target, StateDict{{"old", ones({3})}});
  const std::string before = read_bytes(target);
  // An error midway: the second tensor is undefined after the first was already written.
  CHECK_THROWS_WITH_AS(io::save_npz(target, io::NamedTensors{{"a", zeros({1000})}, {"b", Tensor()}}),
                       doctest::Contains("tensor 'b' is undefined"), Error);
  CHECK(read_bytes(target) == before);
  CHECK(dir.files() == std::vector<std::string>{"ck.npz"});
  // An I/O error midway: the file size limit makes write() fail with EFBIG.
  {
    struct rlimit old {};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = old;
    lim.rlim_cur = 4096;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
    bool threw = false;
    std::string msg;
    try {
      io::save_npz(target, StateDict{{"big", zeros({100000}, float64)}});
    } catch (const Error& e) {
      threw = true;
      msg = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
    CHECK(threw);
    CHECK(msg.find("write failed") != std::string::npos);
    CHECK(read_bytes(target) == before);
    CHECK(dir.files() == std::vector<std::string>{"ck.npz"});
  }
  CHECK_THROWS_WITH_AS(io::save_npy(dir / "no/such/dir/x.npy", ones({1})),
                       has("[save_npy] '" + (dir / "no/such/dir/x.npy") + "': cannot create a temporary file"), Error);
  CHECK_THROWS_WITH_AS(io::save_npy(dir.path, ones({1})), doctest::Contains("is a directory"), Error);
  CHECK_THROWS_WITH_AS(io::save_npy(dir / "u.npy", Tensor()), doctest::Contains("undefined tensor"), Error);
  CHECK(io::load_npz(target).count("old") == 1);
  // a successful overwrite replaces the content and keeps the file's permissions
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  io::save_npz(target, StateDict{{"new", ones({2})}});
  CHECK(io::load_npz(target).count("new") == 1);
  CHECK(fs::status(target).permissions() == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  CHECK(dir.files() == std::vector<std::string>{"ck.npz"});
}

// ==== interop with NumPy ============================================================================

TEST_CASE("interop: NumPy writes, phasor reads") {
  if (!have_numpy()) {
    MESSAGE("skipped: /usr/bin/python3 with numpy not found");
    return;
  }
  TempDir dir;
  write_bytes(dir / "w.py", R"PY(
import sys, numpy as np
d = sys.argv[1]
i = np.arange(24)
np.save(d + '/f4.npy', (i * 0.5 - 3).astype(np.float32).reshape(2, 3, 4))
np.save(d + '/f8_fortran.npy', np.asfortranarray((i * 0.25 + 1).reshape(4, 6)))
np.save(d + '/c8.npy', ((i * 0.5 - 3) + 1j * (i * 0.25)).astype(np.complex64).reshape(6, 4))
np.save(d + '/c16_fortran.npy', np.asfortranarray(((i * 0.5 - 3) + 1j * (i * 0.25)).reshape(2, 12)))
np.save(d + '/i8.npy', (i * 7 - 20).astype(np.int64))
np.save(d + '/i4.npy', (i * 7 - 20).astype(np.int32).reshape(3, 8))
np.save(d + '/u1.npy', (i * 10).astype(np.uint8))
np.save(d + '/f2.npy', (i * 0.5 - 3).astype(np.float16))
np.save(d + '/be.npy', (i * 0.5 - 3).astype('>f8'))
np.save(d + '/b1.npy', (i % 3) == 0)
np.save(d + '/scalar.npy', np.float64(2.5))
np.save(d + '/empty.npy', np.zeros((0, 3), np.float32))
arrs = dict(x=(i * 0.5 - 3).reshape(4, 6), n=(i * 7 - 20), c=((i * 0.5 - 3) + 1j * (i * 0.25)).astype(np.complex64))
np.savez(d + '/s.npz', **arrs)
np.savez_compressed(d + '/c.npz', **arrs)
)PY");
  REQUIRE(std::system(("/usr/bin/python3 " + (dir / "w.py") + " " + dir.path).c_str()) == 0);
  std::vector<double> f(24), g(24);
  std::vector<std::int64_t> n(24);
  std::vector<std::complex<double>> c(24);
  for (int i = 0; i < 24; ++i) {
    f[i] = i * 0.5 - 3;
    g[i] = i * 0.25 + 1;
    n[i] = i * 7 - 20;
    c[i] = {i * 0.5 - 3, i * 0.25};
  }
  Tensor f4 = io::load_npy(dir / "f4.npy");
  CHECK(f4.dtype() == float32);
  CHECK(f4.shape() == Shape{2, 3, 4});
  CHECK(to_vector<double>(f4) == f);
  Tensor ff = io::load_npy(dir / "f8_fortran.npy");
  CHECK(ff.shape() == Shape{4, 6});
  CHECK(to_vector<double>(ff) == g);
  Tensor c8 = io::load_npy(dir / "c8.npy");
  CHECK(c8.dtype() == complex64);
  CHECK(to_vector<std::complex<double>>(c8) == c);
  Tensor cf = io::load_npy(dir / "c16_fortran.npy");
  CHECK(cf.dtype() == complex128);
  CHECK(cf.shape() == Shape{2, 12});
  CHECK(to_vector<std::complex<double>>(cf) == c);
  CHECK(to_vector<std::int64_t>(io::load_npy(dir / "i8.npy")) == n);
  Tensor i4 = io::load_npy(dir / "i4.npy");
  CHECK(i4.dtype() == int64);
  CHECK(i4.shape() == Shape{3, 8});
  CHECK(to_vector<std::int64_t>(i4) == n);
  auto u1 = to_vector<std::int64_t>(io::load_npy(dir / "u1.npy"));
  for (int i = 0; i < 24; ++i) CHECK(u1[i] == (i * 10) % 256);
  CHECK(to_vector<double>(io::load_npy(dir / "f2.npy")) == f);  // halves of these values are exact
  CHECK(to_vector<double>(io::load_npy(dir / "be.npy")) == f);
  auto b1 = to_vector<std::int64_t>(io::load_npy(dir / "b1.npy").to(int64));
  for (int i = 0; i < 24; ++i) CHECK(b1[i] == (i % 3 == 0));
  Tensor sc = io::load_npy(dir / "scalar.npy");
  CHECK(sc.dim() == 0);
  CHECK(sc.item<double>() == 2.5);
  CHECK(io::load_npy(dir / "empty.npy").shape() == Shape{0, 3});
  for (const char* z : {"s.npz", "c.npz"}) {
    CAPTURE(z);
    const StateDict sd = io::load_npz(dir / z);
    REQUIRE(sd.size() == 3);
    CHECK(sd.at("x").shape() == Shape{4, 6});
    CHECK(to_vector<double>(sd.at("x")) == f);
    CHECK(to_vector<std::int64_t>(sd.at("n")) == n);
    CHECK(sd.at("c").dtype() == complex64);
    CHECK(to_vector<std::complex<double>>(sd.at("c")) == c);
  }
}

TEST_CASE("interop: phasor writes, NumPy (and a manual safetensors parse) verifies") {
  if (!have_numpy()) {
    MESSAGE("skipped: /usr/bin/python3 with numpy not found");
    return;
  }
  TempDir dir;
  const Tensor i = arange(0, 24, 1, float64);
  const Tensor f = i * 0.5 - 3.0;
  const Tensor c = complex(f, i * 0.25);
  const Tensor n = (arange(0, 24) * 7 - 20);
  std::vector<bool> bv;
  for (int k = 0; k < 24; ++k) bv.push_back(k % 3 == 0);
  const Tensor b = from_vector(bv);
  io::save_npy(dir / "f4.npy", f.to(float32).reshape({2, 3, 4}));
  io::save_npy(dir / "f8t.npy", f.reshape({4, 6}).t());  // non-contiguous: numpy must see the transpose
  io::save_npy(dir / "c8.npy", c.to(complex64).reshape({6, 4}));
  io::save_npy(dir / "c16.npy", c);
  io::save_npy(dir / "i8.npy", n);
  io::save_npy(dir / "b1.npy", b);
  io::save_npy(dir / "scalar.npy", scalar_tensor(2.5, float64));
  io::save_npy(dir / "empty.npy", zeros({0, 3}, float32));
  const StateDict sd{{"x", f.reshape({4, 6})}, {"n", n}, {"c", c.to(complex64)}, {"b", b}};
  io::save_npz(dir / "s.npz", sd);
  io::save_npz(dir / "c.npz", sd, true);
  io::save_safetensors(dir / "t.safetensors", sd, {{"epoch", "3"}});
  write_bytes(dir / "r.py", R"PY(
import sys, json, struct, zipfile, numpy as np
d = sys.argv[1]
i = np.arange(24)
f = i * 0.5 - 3
c = f + 1j * (i * 0.25)
n = i * 7 - 20
b = (i % 3) == 0
def eq(a, want, dtype):
    assert a.dtype == np.dtype(dtype), (a.dtype, dtype)
    assert a.shape == want.shape, (a.shape, want.shape)
    assert np.array_equal(a, want.astype(dtype)), (a, want)
eq(np.load(d + '/f4.npy'), f.reshape(2, 3, 4), np.float32)
eq(np.load(d + '/f8t.npy'), f.reshape(4, 6).T, np.float64)
eq(np.load(d + '/c8.npy'), c.reshape(6, 4), np.complex64)
eq(np.load(d + '/c16.npy'), c, np.complex128)
eq(np.load(d + '/i8.npy'), n, np.int64)
eq(np.load(d + '/b1.npy'), b, np.bool_)
eq(np.load(d + '/scalar.npy'), np.array(2.5), np.float64)
eq(np.load(d + '/empty.npy'), np.zeros((0, 3)), np.float32)
for z in ('s.npz', 'c.npz'):
    with zipfile.ZipFile(d + '/' + z) as zf:
        assert zf.testzip() is None
        assert sorted(zf.namelist()) == ['b.npy', 'c.npy', 'n.npy', 'x.npy'], zf.namelist()
    a = np.load(d + '/' + z)
    eq(a['x'], f.reshape(4, 6), np.float64)
    eq(a['n'], n, np.int64)
    eq(a['c'], c, np.complex64)
    eq(a['b'], b, np.bool_)
raw = open(d + '/t.safetensors', 'rb').read()
hn = struct.unpack('<Q', raw[:8])[0]
assert hn % 8 == 0
h = json.loads(raw[8:8 + hn])
buf = raw[8 + hn:]
meta = h.pop('__metadata__')
assert meta['epoch'] == '3'
assert json.loads(meta['phasor.complex']) == ['c']
types = {'F32': np.float32, 'F64': np.float64, 'I64': np.int64, 'BOOL': np.bool_}
got = {}
end = 0
for k, v in h.items():
    s, e = v['data_offsets']
    got[k] = np.frombuffer(buf[s:e], dtype=types[v['dtype']]).reshape(v['shape'])
    assert s % np.dtype(types[v['dtype']]).itemsize == 0
    end = max(end, e)
assert end == len(buf)
eq(got['x'], f.reshape(4, 6), np.float64)
eq(got['n'], n, np.int64)
eq(got['b'], b, np.bool_)
eq(got['c'][..., 0] + 1j * got['c'][..., 1], c, np.complex64)
try:
    import torch
except Exception:
    torch = None
if torch is not None:
    tc = torch.view_as_complex(torch.from_numpy(got['c'].copy()))
    assert np.array_equal(tc.numpy(), c.astype(np.complex64))
    print('torch view_as_complex ok')
print('python-verify-ok')
)PY");
  CHECK(std::system(("/usr/bin/python3 " + (dir / "r.py") + " " + dir.path).c_str()) == 0);
}
