// src/io/io_util.hpp - pieces shared by the file formats: error helper, whole-file reads, atomic
// writes, CRC-32, element decoding of foreign types, and the .npy header codec.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::io::detail {

/// Throws Error(op, "'path': what").
[[noreturn]] void fail(const char* op, const std::string& path, const std::string& what);

/// The whole file's bytes; throws naming `op` and `path` when it cannot be opened or read.
std::vector<unsigned char> read_file(const std::string& path, const char* op);

/// Writes a file atomically: bytes go to a temporary file next to `path`; commit() flushes, fsyncs,
/// renames it over `path` and fsyncs the directory. Without commit() (an exception) the temporary
/// file is removed and `path` is untouched.
class AtomicWriter {
 public:
  AtomicWriter(const std::string& path, const char* op);
  ~AtomicWriter();
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;
  /// Appends `n` bytes.
  void write(const void* data, std::size_t n);
  /// Bytes written so far.
  std::uint64_t position() const { return pos_; }
  /// Makes the file visible under its final name.
  void commit();

 private:
  std::string path_, tmp_;
  const char* op_;
  int fd_ = -1;
  std::uint64_t pos_ = 0;
  bool done_ = false;
};

/// CRC-32 (zip / IEEE 802.3 polynomial), continuing from `crc` (0 to start).
std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t n);

/// A CPU, contiguous, autograd-free tensor with t's values (t itself when already so).
Tensor host_contiguous(const Tensor& t, const char* op);

/// An element type as stored in a file.
struct ElemType {
  char kind;         // 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex, 'B' bfloat16
  int size;          // bytes per element
  bool big_endian;   // byte order in the file
};
/// The phasor dtype an ElemType loads as, or false when unsupported.
bool load_dtype(const ElemType& e, Dtype& out);
/// Converts `count` elements of type `e` at `src` into `dst` (of dtype load_dtype(e)); throws
/// naming `op`/`where` when a value cannot be represented exactly (uint64 above int64's range).
void decode_elements(const unsigned char* src, std::int64_t count, const ElemType& e, void* dst, const char* op,
                     const std::string& where);

/// Product of sizes, or false on overflow / negative sizes.
bool checked_numel(const std::vector<std::int64_t>& shape, std::int64_t& out);

/// The .npy bytes before the data (magic, version, header) for a C-order array.
std::string npy_header(Dtype dtype, const Shape& shape);
/// Parses a complete .npy image of `n` bytes into a new tensor; `where` names it in errors.
Tensor npy_decode(const unsigned char* p, std::size_t n, const char* op, const std::string& where);

}  // namespace phasor::io::detail
