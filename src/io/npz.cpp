// src/io/npz.cpp - NumPy .npz: a zip archive of .npy entries, written and read by a small zip codec.
// Writer: local header + data per entry, central directory, end record; entries stored or deflated
// (zlib, raw deflate), zip64 records only when a size or offset needs them, fixed 1980-01-01 time
// stamps so equal inputs give byte-identical files. Reader: locates the end record, walks the central
// directory (zip64 aware), checks every size and offset against the file, inflates, verifies CRC-32.
#include <algorithm>
#include <cstring>
#include <set>

#include "io/io_util.hpp"
#include "phasor/io.hpp"

#ifdef PHASOR_HAVE_ZLIB
#include <zlib.h>
#endif

namespace phasor::io {
namespace {

using detail::fail;
constexpr std::uint64_t kZip64Limit = 0xFFFFFFFFull;

// ---- little-endian byte helpers -------------------------------------------------------------------------
void put16(std::string& s, std::uint32_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>((v >> 8) & 0xFF));
}
void put32(std::string& s, std::uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}
void put64(std::string& s, std::uint64_t v) {
  put32(s, static_cast<std::uint32_t>(v));
  put32(s, static_cast<std::uint32_t>(v >> 32));
}
std::uint32_t rd16(const unsigned char* p) { return p[0] | (p[1] << 8); }
std::uint32_t rd32(const unsigned char* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}
std::uint64_t rd64(const unsigned char* p) { return std::uint64_t(rd32(p)) | std::uint64_t(rd32(p + 4)) << 32; }

/// A byte range that is hashed and (optionally) compressed as one stream.
struct Piece {
  const void* data;
  std::size_t size;
};

#ifdef PHASOR_HAVE_ZLIB
/// Raw-deflates the concatenation of `pieces`.
std::string deflate_pieces(const std::vector<Piece>& pieces, const std::string& path) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    fail("save_npz", path, "zlib deflateInit failed");
  std::string out;
  unsigned char buf[1 << 16];
  auto drain = [&](int flush) {
    int rc;
    do {
      zs.next_out = buf;
      zs.avail_out = sizeof buf;
      rc = deflate(&zs, flush);
      if (rc == Z_STREAM_ERROR) {
        deflateEnd(&zs);
        fail("save_npz", path, "zlib deflate failed");
      }
      out.append(reinterpret_cast<char*>(buf), sizeof buf - zs.avail_out);
    } while (zs.avail_out == 0);
    return rc;
  };
  for (const auto& pc : pieces) {
    const auto* p = static_cast<const unsigned char*>(pc.data);
    std::size_t left = pc.size;
    while (left > 0) {
      const std::size_t chunk = left < (1u << 30) ? left : (1u << 30);
      zs.next_in = const_cast<unsigned char*>(p);
      zs.avail_in = static_cast<uInt>(chunk);
      drain(Z_NO_FLUSH);
      p += chunk;
      left -= chunk;
    }
  }
  zs.next_in = nullptr;
  zs.avail_in = 0;
  while (drain(Z_FINISH) != Z_STREAM_END) {
  }
  deflateEnd(&zs);
  return out;
}
#endif

bool is_ascii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

struct CentralEntry {
  std::string name;
  std::uint32_t crc;
  std::uint64_t csize, usize, offset;
  std::uint16_t method;
};

// The fields a local file header and its central directory record share, from "version needed"
// to "extra field length" (sizes read 0xFFFFFFFF when the zip64 extra field holds them).
void put_entry_fields(std::string& s, const CentralEntry& e, bool z64, std::uint32_t extra_len) {
  put16(s, z64 ? 45 : 20);
  put16(s, is_ascii(e.name) ? 0 : 0x0800);  // UTF-8 names flagged
  put16(s, e.method);
  put16(s, 0);       // time 00:00:00
  put16(s, 0x0021);  // date 1980-01-01
  put32(s, e.crc);
  put32(s, z64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(e.csize));
  put32(s, z64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(e.usize));
  put16(s, static_cast<std::uint32_t>(e.name.size()));
  put16(s, extra_len);
}

}  // namespace

void save_npz(const std::string& path, const NamedTensors& tensors, bool compressed) {
  const char* op = "save_npz";
#ifndef PHASOR_HAVE_ZLIB
  if (compressed) fail(op, path, "compressed .npz needs zlib, which this build of phasor lacks");
#endif
  {
    std::set<std::string> seen;
    for (const auto& [name, t] : tensors) {
      if (name.empty()) fail(op, path, "empty tensor name");
      if (name.find('\0') != std::string::npos) fail(op, path, "tensor name contains a NUL byte");
      if (name.size() + 4 > 0xFFFF) fail(op, path, "tensor name longer than 65531 bytes");
      if (!seen.insert(name).second) fail(op, path, "duplicate tensor name '" + name + "'");
    }
  }
  detail::AtomicWriter w(path, op);
  std::vector<CentralEntry> central;
  for (const auto& [name, t] : tensors) {
    // Validated entry by entry while writing: a bad tensor aborts midway and the target survives.
    if (!t.defined()) fail(op, path, "tensor '" + name + "' is undefined");
    const Tensor c = detail::host_contiguous(t, op);
    const std::string header = detail::npy_header(c.dtype(), c.shape());
    std::vector<Piece> pieces{{header.data(), header.size()}};
    if (c.numel() > 0) pieces.push_back({c.data_ptr(), c.nbytes()});
    CentralEntry e;
    e.name = name + ".npy";
    e.crc = 0;
    e.usize = 0;
    for (const auto& pc : pieces) {
      e.crc = detail::crc32(e.crc, pc.data, pc.size);
      e.usize += pc.size;
    }
    std::string packed;
#ifdef PHASOR_HAVE_ZLIB
    if (compressed) packed = deflate_pieces(pieces, path);
#endif
    e.method = compressed ? 8 : 0;
    e.csize = compressed ? packed.size() : e.usize;
    e.offset = w.position();
    const bool z64 = e.usize >= kZip64Limit || e.csize >= kZip64Limit;
    std::string lh;
    put32(lh, 0x04034b50);
    put_entry_fields(lh, e, z64, z64 ? 20 : 0);
    lh += e.name;
    if (z64) {
      put16(lh, 0x0001);
      put16(lh, 16);
      put64(lh, e.usize);
      put64(lh, e.csize);
    }
    w.write(lh.data(), lh.size());
    if (compressed) {
      w.write(packed.data(), packed.size());
    } else {
      for (const auto& pc : pieces) w.write(pc.data, pc.size);
    }
    central.push_back(std::move(e));
  }
  const std::uint64_t cd_offset = w.position();
  std::string cd;
  for (const auto& e : central) {
    const bool z64 = e.usize >= kZip64Limit || e.csize >= kZip64Limit || e.offset >= kZip64Limit;
    put32(cd, 0x02014b50);
    put16(cd, (3u << 8) | (z64 ? 45 : 20));  // made by: unix
    put_entry_fields(cd, e, z64, z64 ? 28 : 0);
    put16(cd, 0);                 // comment
    put16(cd, 0);                 // disk
    put16(cd, 0);                 // internal attributes
    put32(cd, 0100644u << 16);    // regular file, rw-r--r--
    put32(cd, z64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(e.offset));
    cd += e.name;
    if (z64) {
      put16(cd, 0x0001);
      put16(cd, 24);
      put64(cd, e.usize);
      put64(cd, e.csize);
      put64(cd, e.offset);
    }
  }
  w.write(cd.data(), cd.size());
  const std::uint64_t cd_size = cd.size();
  const std::uint64_t n = central.size();
  std::string end;
  const bool z64_end = n >= 0xFFFF || cd_size >= kZip64Limit || cd_offset >= kZip64Limit;
  if (z64_end) {
    const std::uint64_t z64_pos = cd_offset + cd_size;
    put32(end, 0x06064b50);
    put64(end, 44);
    put16(end, (3u << 8) | 45);
    put16(end, 45);
    put32(end, 0);
    put32(end, 0);
    put64(end, n);
    put64(end, n);
    put64(end, cd_size);
    put64(end, cd_offset);
    put32(end, 0x07064b50);
    put32(end, 0);
    put64(end, z64_pos);
    put32(end, 1);
  }
  put32(end, 0x06054b50);
  put16(end, 0);
  put16(end, 0);
  put16(end, z64_end ? 0xFFFF : static_cast<std::uint32_t>(n));
  put16(end, z64_end ? 0xFFFF : static_cast<std::uint32_t>(n));
  put32(end, z64_end ? 0xFFFFFFFFu : static_cast<std::uint32_t>(cd_size));
  put32(end, z64_end ? 0xFFFFFFFFu : static_cast<std::uint32_t>(cd_offset));
  put16(end, 0);
  w.write(end.data(), end.size());
  w.commit();
}

void save_npz(const std::string& path, const StateDict& tensors, bool compressed) {
  save_npz(path, NamedTensors(tensors.begin(), tensors.end()), compressed);
}

StateDict load_npz(const std::string& path) {
  // Reads the end record and central directory, then each entry: stored entries go straight from the
  // file into their tensors (CRC computed on the way), deflated ones through an inflate buffer.
  const char* op = "load_npz";
  const detail::InputFile f(path, op);
  const std::uint64_t n = f.size();
  if (n < 22) fail(op, path, "not a zip archive (" + std::to_string(n) + " bytes, too short)");
  // End of central directory: scan back over a possible archive comment.
  const std::uint64_t tail_len = n < 22 + 0xFFFF ? n : 22 + 0xFFFF;
  const std::uint64_t tail_off = n - tail_len;
  std::vector<unsigned char> tail(static_cast<std::size_t>(tail_len));
  f.read_at(tail_off, tail.data(), tail.size());
  const unsigned char* t = tail.data();
  std::uint64_t epos = 0;  // within tail
  bool found = false;
  for (std::uint64_t pos = tail_len - 22 + 1; pos-- > 0;) {
    if (rd32(t + pos) == 0x06054b50 && pos + 22 + rd16(t + pos + 20) <= tail_len) {
      epos = pos;
      found = true;
      break;
    }
  }
  if (!found) fail(op, path, "not a zip archive (no end-of-central-directory record; truncated?)");
  const std::uint64_t eocd = tail_off + epos;
  if (rd16(t + epos + 4) != 0 || rd16(t + epos + 6) != 0) fail(op, path, "multi-disk zip archives are not supported");
  std::uint64_t count = rd16(t + epos + 10);
  std::uint64_t cd_size = rd32(t + epos + 12);
  std::uint64_t cd_offset = rd32(t + epos + 16);
  std::uint64_t cd_limit = eocd;  // the central directory ends before this
  if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu) {
    unsigned char loc[20];
    if (eocd < 20) fail(op, path, "corrupt zip: missing zip64 locator");
    f.read_at(eocd - 20, loc, 20);
    if (rd32(loc) != 0x07064b50) fail(op, path, "corrupt zip: missing zip64 locator");
    const std::uint64_t z = rd64(loc + 8);
    unsigned char rec[56];
    if (z > eocd - 20 || eocd - 20 - z < 56) fail(op, path, "corrupt zip: bad zip64 end-of-central-directory offset");
    f.read_at(z, rec, 56);
    if (rd32(rec) != 0x06064b50) fail(op, path, "corrupt zip: bad zip64 end-of-central-directory record");
    count = rd64(rec + 32);
    cd_size = rd64(rec + 40);
    cd_offset = rd64(rec + 48);
    cd_limit = z;
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset)
    fail(op, path, "corrupt zip: central directory (offset " + std::to_string(cd_offset) + ", size " +
                       std::to_string(cd_size) + ") lies outside the file");
  if (count > cd_size / 46) fail(op, path, "corrupt zip: " + std::to_string(count) + " entries cannot fit the central directory");
  std::vector<unsigned char> cdbuf(static_cast<std::size_t>(cd_size));
  f.read_at(cd_offset, cdbuf.data(), cdbuf.size());
  const unsigned char* p = cdbuf.data();
  StateDict out;
  std::uint64_t q = 0;
  const std::uint64_t cd_end = cd_size;
  for (std::uint64_t k = 0; k < count; ++k) {
    if (cd_end - q < 46 || rd32(p + q) != 0x02014b50)
      fail(op, path, "corrupt zip: bad central directory entry " + std::to_string(k));
    const std::uint32_t flags = rd16(p + q + 8);
    CentralEntry e;
    e.method = static_cast<std::uint16_t>(rd16(p + q + 10));
    e.crc = rd32(p + q + 16);
    e.csize = rd32(p + q + 20);
    e.usize = rd32(p + q + 24);
    const std::uint64_t nlen = rd16(p + q + 28), elen = rd16(p + q + 30), clen = rd16(p + q + 32);
    e.offset = rd32(p + q + 42);
    if (cd_end - q - 46 < nlen + elen + clen)
      fail(op, path, "corrupt zip: central directory entry " + std::to_string(k) + " overruns the directory");
    e.name.assign(reinterpret_cast<const char*>(p + q + 46), nlen);
    // zip64 extra: the 0xFFFFFFFF fields, in order usize, csize, offset.
    const unsigned char* x = p + q + 46 + nlen;
    const unsigned char* xend = x + elen;
    const bool need_u = e.usize == 0xFFFFFFFFu, need_c = e.csize == 0xFFFFFFFFu, need_o = e.offset == 0xFFFFFFFFu;
    if (need_u || need_c || need_o) {
      bool got = false;
      while (xend - x >= 4) {
        const std::uint32_t id = rd16(x), len = rd16(x + 2);
        if (static_cast<std::uint64_t>(xend - x - 4) < len) break;
        if (id == 0x0001) {
          const unsigned char* fld = x + 4;
          const std::uint32_t need = 8u * (need_u + need_c + need_o);
          if (len < need) fail(op, path, "corrupt zip: short zip64 extra field in entry '" + e.name + "'");
          if (need_u) e.usize = rd64(fld), fld += 8;
          if (need_c) e.csize = rd64(fld), fld += 8;
          if (need_o) e.offset = rd64(fld);
          got = true;
          break;
        }
        x += 4 + len;
      }
      if (!got) fail(op, path, "corrupt zip: entry '" + e.name + "' lacks its zip64 sizes");
    }
    q += 46 + nlen + elen + clen;
    const std::string& nm = e.name;
    const std::string where = path + ":" + nm;
    if (flags & 1) fail(op, path, "entry '" + nm + "' is encrypted");
    if (nm.size() < 4 || nm.compare(nm.size() - 4, 4, ".npy") != 0)
      fail(op, path, "entry '" + nm + "' is not a .npy array");
    // Local header: only its name and extra lengths matter (sizes may be deferred to a data descriptor).
    unsigned char lh[30];
    if (e.offset > n || n - e.offset < 30) fail(op, path, "corrupt zip: bad local header offset for entry '" + nm + "'");
    f.read_at(e.offset, lh, 30);
    if (rd32(lh) != 0x04034b50) fail(op, path, "corrupt zip: bad local header for entry '" + nm + "'");
    const std::uint64_t data = e.offset + 30 + rd16(lh + 26) + rd16(lh + 28);
    if (data > n || e.csize > n - data)
      fail(op, path, "corrupt zip: data of entry '" + nm + "' (" + std::to_string(e.csize) +
                         " bytes) runs past the end of the file");
    const std::string crc_error = "CRC mismatch in entry '" + nm + "' (data corrupt)";
    Tensor tensor;
    if (e.method == 0) {
      if (e.csize != e.usize) fail(op, path, "corrupt zip: stored entry '" + nm + "' has different sizes");
      std::uint32_t crc = 0;
      try {
        unsigned char pre[12] = {};
        const std::size_t avail = static_cast<std::size_t>(std::min<std::uint64_t>(e.usize, 12));
        f.read_at(data, pre, avail);
        const std::uint64_t off = detail::npy_data_offset(pre, avail, e.usize, op, where);
        std::vector<unsigned char> head(static_cast<std::size_t>(off));
        f.read_at(data, head.data(), head.size());
        const detail::NpyInfo info = detail::npy_parse(head.data(), off, e.usize, op, where);
        crc = detail::crc32(0, head.data(), head.size());
        tensor = detail::npy_load(
            info,
            [&](void* dst, std::size_t bytes) {
              f.read_at(data + off, dst, bytes);
              crc = detail::crc32(crc, dst, bytes);
            },
            op, where);
      } catch (const Error&) {
        // A damaged entry reports as such rather than as whatever its damage looks like.
        std::uint32_t c = 0;
        std::vector<unsigned char> chunk(1 << 20);
        for (std::uint64_t at = 0; at < e.usize;) {
          const std::size_t m = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), e.usize - at));
          f.read_at(data + at, chunk.data(), m);
          c = detail::crc32(c, chunk.data(), m);
          at += m;
        }
        if (c != e.crc) fail(op, path, crc_error);
        throw;
      }
      if (crc != e.crc) fail(op, path, crc_error);
    } else if (e.method == 8) {
#ifdef PHASOR_HAVE_ZLIB
      // Deflate expands at most ~1032:1; larger claims are corrupt (and would waste memory).
      if (e.usize > e.csize * 1100 + 4096)
        fail(op, path, "corrupt zip: entry '" + nm + "' claims " + std::to_string(e.usize) + " bytes from " +
                           std::to_string(e.csize) + " compressed");
      std::vector<unsigned char> packed(static_cast<std::size_t>(e.csize));
      f.read_at(data, packed.data(), packed.size());
      std::vector<unsigned char> inflated(static_cast<std::size_t>(e.usize));
      z_stream zs{};
      if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) fail(op, path, "zlib inflateInit failed");
      zs.next_in = packed.data();
      std::uint64_t in_left = e.csize, out_left = e.usize;
      unsigned char* out_p = inflated.data();
      unsigned char dummy = 0;
      int rc = Z_OK;
      while (rc == Z_OK) {
        const uInt in_chunk = static_cast<uInt>(in_left < (1u << 30) ? in_left : (1u << 30));
        zs.avail_in = in_chunk;
        const uInt out_chunk = static_cast<uInt>(out_left < (1u << 30) ? out_left : (1u << 30));
        // With no room left, offer one byte of scratch so an over-long stream is detected.
        zs.next_out = out_chunk ? out_p : &dummy;
        zs.avail_out = out_chunk ? out_chunk : 1;
        rc = inflate(&zs, Z_NO_FLUSH);
        const uInt used_in = in_chunk - zs.avail_in;
        const uInt made = (out_chunk ? out_chunk : 1) - zs.avail_out;
        in_left -= used_in;
        if (!out_chunk && made) {
          rc = Z_DATA_ERROR;
          break;
        }
        out_p += made;
        out_left -= made;
        if (rc == Z_OK && used_in == 0 && made == 0) rc = Z_BUF_ERROR;
      }
      inflateEnd(&zs);
      if (rc != Z_STREAM_END || out_left != 0)
        fail(op, path, "corrupt zip: entry '" + nm + "' does not inflate to its recorded " + std::to_string(e.usize) +
                           " bytes");
      if (detail::crc32(0, inflated.data(), inflated.size()) != e.crc) fail(op, path, crc_error);
      tensor = detail::npy_decode(inflated.data(), inflated.size(), op, where);
#else
      fail(op, path, "entry '" + nm + "' is deflated and this build of phasor lacks zlib");
#endif
    } else {
      fail(op, path, "entry '" + nm + "' uses unsupported zip compression method " + std::to_string(e.method));
    }
    if (!out.emplace(nm.substr(0, nm.size() - 4), std::move(tensor)).second)
      fail(op, path, "duplicate entry '" + nm + "'");
  }
  return out;
}

}  // namespace phasor::io
