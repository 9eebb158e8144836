// src/io/io_util.cpp - error helper, positioned reads, atomic writes, CRC-32, element decoding.
#include "io/io_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "phasor/creation.hpp"
#include "phasor/error.hpp"

#ifdef PHASOR_HAVE_ZLIB
#include <zlib.h>
#endif

static_assert(std::endian::native == std::endian::little, "phasor's file formats assume a little-endian host");

namespace phasor::io::detail {

void fail(const char* op, const std::string& path, const std::string& what) {
  throw Error(op, "'" + path + "': " + what);
}

namespace {
std::string errno_text(int e) { return std::strerror(e); }
}  // namespace

InputFile::InputFile(const std::string& path, const char* op) : path_(path), op_(op) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    const int e = errno;
    fail(op, path, e == ENOENT ? "no such file" : "cannot open for reading: " + errno_text(e));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    fail(op, path, "cannot stat: " + errno_text(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail(op, path, S_ISDIR(st.st_mode) ? "is a directory, not a file" : "is not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(std::uint64_t offset, void* dst, std::size_t n) const {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const std::size_t chunk = n < (std::size_t(1) << 30) ? n : (std::size_t(1) << 30);
    const ssize_t r = ::pread(fd_, p, chunk, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(op_, path_, "read error: " + errno_text(errno));
    }
    if (r == 0) fail(op_, path_, "file ended early (truncated or changed while reading)");
    p += r;
    n -= static_cast<std::size_t>(r);
    offset += static_cast<std::uint64_t>(r);
  }
}

// ---- atomic writes ---------------------------------------------------------------------------------

AtomicWriter::AtomicWriter(const std::string& path, const char* op) : path_(path), op_(op) {
  if (path.empty()) throw Error(op, "empty path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fail(op, path, "is a directory");
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  tmp_ = dir + "." + base + ".tmp-XXXXXX";
  std::vector<char> name(tmp_.begin(), tmp_.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) {
    const int e = errno;
    fail(op, path, "cannot create a temporary file in '" + (dir.empty() ? std::string(".") : dir) +
                       "': " + errno_text(e));
  }
  tmp_.assign(name.data());
  // mkstemp makes the file 0600; give it the existing target's mode, or rw-r--r-- for a new file.
  const mode_t mode = (::stat(path.c_str(), &st) == 0) ? (st.st_mode & 07777) : 0644;
  (void)::fchmod(fd_, mode);
}

AtomicWriter::~AtomicWriter() {
  if (done_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(tmp_.c_str());
}

void AtomicWriter::write(const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const std::size_t chunk = n < (std::size_t(1) << 30) ? n : (std::size_t(1) << 30);
    const ssize_t w = ::write(fd_, p, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(op_, path_, "write failed after " + std::to_string(pos_) + " bytes: " + errno_text(errno));
    }
    p += w;
    n -= static_cast<std::size_t>(w);
    pos_ += static_cast<std::uint64_t>(w);
  }
}

void AtomicWriter::commit() {
  if (::fsync(fd_) != 0) fail(op_, path_, "fsync failed: " + errno_text(errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(op_, path_, "close failed: " + errno_text(errno));
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail(op_, path_, "rename failed: " + errno_text(errno));
  done_ = true;
  // Make the rename itself durable (best effort: some file systems refuse fsync on directories).
  const auto slash = path_.find_last_of('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path_.substr(0, slash + 1);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

// ---- CRC-32 ----------------------------------------------------------------------------------------

namespace {
struct CrcTable {
  std::array<std::array<std::uint32_t, 256>, 4> t{};
  CrcTable() {
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (std::uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 4; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
};
const CrcTable& crc_table() {
  static const CrcTable table;
  return table;
}
}  // namespace

std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t n) {
#ifdef PHASOR_HAVE_ZLIB
  // zlib's CRC-32 is the same function, and faster.
  const auto* z = static_cast<const Bytef*>(data);
  uLong c = crc;
  while (n > 0) {
    const uInt chunk = static_cast<uInt>(n < (1u << 30) ? n : (1u << 30));
    c = ::crc32(c, z, chunk);
    z += chunk;
    n -= chunk;
  }
  return static_cast<std::uint32_t>(c);
#else
  return crc32_portable(crc, data, n);
#endif
}

std::uint32_t crc32_portable(std::uint32_t crc, const void* data, std::size_t n) {
  const auto& t = crc_table().t;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
  while (n >= 4) {  // slicing-by-4
    c ^= static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
    c = t[3][c & 0xFF] ^ t[2][(c >> 8) & 0xFF] ^ t[1][(c >> 16) & 0xFF] ^ t[0][c >> 24];
    p += 4;
    n -= 4;
  }
  while (n--) c = t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  return ~c;
}

// ---- tensors and element types ---------------------------------------------------------------------

Tensor host_contiguous(const Tensor& t, const char* op) {
  if (!t.defined()) throw Error(op, "undefined tensor");
  Tensor c = t.detach();
  if (!c.device().is_cpu()) c = c.to(Device::cpu());
  return c.contiguous();
}

bool checked_numel(const std::vector<std::int64_t>& shape, std::int64_t& out) {
  std::int64_t n = 1;
  for (auto s : shape) {
    if (s < 0) return false;
    if (__builtin_mul_overflow(n, s, &n)) return false;
  }
  // Keep byte counts (n * 16) representable too.
  if (n > std::numeric_limits<std::int64_t>::max() / 16) return false;
  out = n;
  return true;
}

bool load_dtype(const ElemType& e, Dtype& out) {
  switch (e.kind) {
    case 'b':
      if (e.size != 1) return false;
      out = Dtype::Bool;
      return true;
    case 'i':
    case 'u':
      if (e.size != 1 && e.size != 2 && e.size != 4 && e.size != 8) return false;
      out = Dtype::Int64;
      return true;
    case 'f':
      if (e.size == 2 || e.size == 4) out = Dtype::Float32;
      else if (e.size == 8) out = Dtype::Float64;
      else return false;
      return true;
    case 'B':
      if (e.size != 2) return false;
      out = Dtype::Float32;
      return true;
    case 'c':
      if (e.size == 8) out = Dtype::Complex64;
      else if (e.size == 16) out = Dtype::Complex128;
      else return false;
      return true;
    default:
      return false;
  }
}

namespace {

inline std::uint64_t load_uint(const unsigned char* p, int size, bool big) {
  std::uint64_t v = 0;
  if (big) {
    for (int k = 0; k < size; ++k) v = (v << 8) | p[k];
  } else {
    for (int k = size - 1; k >= 0; --k) v = (v << 8) | p[k];
  }
  return v;
}

inline float bits_to_float(std::uint32_t b) { return std::bit_cast<float>(b); }

/// IEEE half -> float (exact: every half is a float).
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  int exp = (h >> 10) & 0x1F;
  std::uint32_t mant = h & 0x3FFu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3FFu;
      bits = sign | (static_cast<std::uint32_t>(exp) << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else {
    bits = sign | (static_cast<std::uint32_t>(exp - 15 + 127) << 23) | (mant << 13);
  }
  return bits_to_float(bits);
}

}  // namespace

bool is_native(const ElemType& e) {
  Dtype dt;
  if (!load_dtype(e, dt) || e.big_endian) return false;
  switch (e.kind) {
    case 'i': return e.size == 8;
    case 'f': return e.size == 4 || e.size == 8;
    case 'c': return true;
    default: return false;  // bool bytes are normalized to 0/1; unsigned, half and bfloat16 convert
  }
}

Tensor read_elements(const Shape& shape, const ElemType& e, std::int64_t n,
                     const std::function<void(void*, std::size_t)>& read_raw, const char* op, const std::string& where) {
  Dtype dt;
  if (!load_dtype(e, dt)) throw Error(op, "'" + where + "': unsupported element type");
  Tensor t = empty(shape, dt);
  if (n == 0) return t;
  const std::size_t bytes = static_cast<std::size_t>(n) * static_cast<std::size_t>(e.size);
  if (is_native(e)) {
    read_raw(t.data_ptr(), bytes);
  } else {
    std::vector<unsigned char> buf(bytes);
    read_raw(buf.data(), bytes);
    decode_elements(buf.data(), n, e, t.data_ptr(), op, where);
  }
  return t;
}

void decode_elements(const unsigned char* src, std::int64_t count, const ElemType& e, void* dst, const char* op,
                     const std::string& where) {
  Dtype dt;
  if (!load_dtype(e, dt)) throw Error(op, "'" + where + "': unsupported element type");
  const std::size_t n = static_cast<std::size_t>(count);
  const std::size_t sz = static_cast<std::size_t>(e.size);
  if (is_native(e)) {
    std::memcpy(dst, src, n * sz);
    return;
  }
  switch (e.kind) {
    case 'b': {
      auto* d = static_cast<unsigned char*>(dst);
      for (std::size_t i = 0; i < n; ++i) d[i] = src[i] != 0;
      return;
    }
    case 'i': {
      auto* d = static_cast<std::int64_t*>(dst);
      const int shift = 64 - 8 * e.size;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t u = load_uint(src + i * sz, e.size, e.big_endian);
        d[i] = shift ? static_cast<std::int64_t>(u << shift) >> shift : static_cast<std::int64_t>(u);
      }
      return;
    }
    case 'u': {
      auto* d = static_cast<std::int64_t*>(dst);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t u = load_uint(src + i * sz, e.size, e.big_endian);
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          throw Error(op, "'" + where + "': uint64 value " + std::to_string(u) + " at element " + std::to_string(i) +
                              " does not fit int64");
        d[i] = static_cast<std::int64_t>(u);
      }
      return;
    }
    case 'B': {
      auto* d = static_cast<float*>(dst);
      for (std::size_t i = 0; i < n; ++i)
        d[i] = bits_to_float(static_cast<std::uint32_t>(load_uint(src + i * 2, 2, e.big_endian)) << 16);
      return;
    }
    case 'f':
    case 'c': {
      if (e.kind == 'f' && e.size == 2) {
        auto* d = static_cast<float*>(dst);
        for (std::size_t i = 0; i < n; ++i)
          d[i] = half_to_float(static_cast<std::uint16_t>(load_uint(src + i * 2, 2, e.big_endian)));
        return;
      }
      // Byte-swapped floats (complex: each part swapped on its own).
      const int part = e.kind == 'c' ? e.size / 2 : e.size;
      const std::size_t parts = n * sz / static_cast<std::size_t>(part);
      auto* d = static_cast<unsigned char*>(dst);
      for (std::size_t i = 0; i < parts; ++i)
        for (int k = 0; k < part; ++k) d[i * part + k] = src[i * part + (part - 1 - k)];
      return;
    }
    default:
      throw Error(op, "'" + where + "': unsupported element type");
  }
}

}  // namespace phasor::io::detail
