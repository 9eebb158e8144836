// src/io/io_util.hpp - pieces shared by the file formats: error helper, positioned reads, atomic
// writes, CRC-32, element decoding of foreign types, and the .npy header codec.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "phasor/tensor.hpp"

namespace phasor::io::detail {

/// Throws Error(op, "'path': what").
[[noreturn]] void fail(const char* op, const std::string& path, const std::string& what);

/// A regular file opened for positioned reads (lets readers fill tensors without a staging copy).
class InputFile {
 public:
  /// Opens `path`; throws naming `op` when missing, a directory or unreadable.
  InputFile(const std::string& path, const char* op);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  /// Size in bytes at open time.
  std::uint64_t size() const { return size_; }
  /// Reads exactly `n` bytes at `offset` into `dst`; throws when the file is shorter.
  void read_at(std::uint64_t offset, void* dst, std::size_t n) const;

 private:
  std::string path_;
  const char* op_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

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
/// The same CRC-32 from phasor's own table (used when zlib is absent).
std::uint32_t crc32_portable(std::uint32_t crc, const void* data, std::size_t n);

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
/// True when elements of type `e` are bit-identical to those of load_dtype(e) (a plain copy loads them).
bool is_native(const ElemType& e);
/// Converts `count` elements of type `e` at `src` into `dst` (of dtype load_dtype(e)); throws
/// naming `op`/`where` when a value cannot be represented exactly (uint64 above int64's range).
void decode_elements(const unsigned char* src, std::int64_t count, const ElemType& e, void* dst, const char* op,
                     const std::string& where);

/// Product of sizes, or false on overflow / negative sizes.
bool checked_numel(const std::vector<std::int64_t>& shape, std::int64_t& out);

/// The .npy bytes before the data (magic, version, header) for a C-order array.
std::string npy_header(Dtype dtype, const Shape& shape);
/// What a .npy header says.
struct NpyInfo {
  ElemType elem{};          // element type in the file
  std::string descr;        // e.g. "<f4"
  Shape shape;              // logical shape
  bool fortran = false;     // column-major data
  std::int64_t numel = 0;   // product of shape
  std::uint64_t data_offset = 0;  // where the elements start
};
/// Given the first min(total, 12) bytes of a .npy image of `total` bytes, the offset where its data
/// begins (preamble + header); checks magic, version and that the header fits.
std::uint64_t npy_data_offset(const unsigned char* p, std::size_t avail, std::uint64_t total, const char* op,
                              const std::string& where);
/// Parses the header in the first `data_offset` bytes; checks the data size equals total - data_offset.
NpyInfo npy_parse(const unsigned char* p, std::uint64_t data_offset, std::uint64_t total, const char* op,
                  const std::string& where);
/// The tensor `info` describes (C order), filled by read_raw(dst, nbytes) with the file's element bytes.
Tensor npy_load(const NpyInfo& info, const std::function<void(void*, std::size_t)>& read_raw, const char* op,
                const std::string& where);
/// Parses a complete in-memory .npy image of `n` bytes into a new tensor; `where` names it in errors.
Tensor npy_decode(const unsigned char* p, std::size_t n, const char* op, const std::string& where);
/// Allocates a tensor of `shape`/`dtype` and fills it from `n` file elements of type `e` delivered by
/// read_raw(dst, nbytes): directly for native types, through a staging buffer and decode_elements otherwise.
Tensor read_elements(const Shape& shape, const ElemType& e, std::int64_t n,
                     const std::function<void(void*, std::size_t)>& read_raw, const char* op, const std::string& where);

}  // namespace phasor::io::detail
