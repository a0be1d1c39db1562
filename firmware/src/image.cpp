// The Program's binary image: what the tracer writes and the simulator and golden model load.
//
// All integers little-endian; a string is a u32 byte count and the bytes (no terminator).
//
//   magic        8 bytes  "NCIMG\0\0\0"
//   version      u32      kImageVersion
//   insn_bytes   u32      isa::kInsnBytes (the record size; a mismatch means another ISA)
//   kernel       string
//   preset       string   a preset name known to this build ("trn2", ...)
//   hbm_bytes    u64
//   tensors      u32 count, then each: name string, dtype u8, role u8, rank u32,
//                rank x i64 dims, offset u64, bytes u64, init_bytes u64 and that many
//                bytes (version 2; the tensor's contents: `bytes` for a constant, 0 otherwise)
//   locations    u32 count, then each: file string, line u32
//   streams      u32 count (5 + the preset's DMA queues), then each: name string,
//                engine u8, queue u32, instruction count u32, then per instruction the
//                isa::encode() record (insn_bytes bytes) and its location index u32
//   checksum     u32      (version 3) CRC-32 (zlib's) of every byte before it
//
// Nothing may follow the last stream (and the checksum). A version 3 image whose checksum does
// not match is refused before its header is read further. Version 1 images (no init_bytes field, no constants)
// are still read. read_image checks every count against a sane limit before trusting it
// (init bytes against the bytes left in the image), every enum field of every decoded
// instruction, that each instruction belongs to its stream's engine and queue, every
// location index, runs validate_insn on each instruction and finally validate_program
// (every multiply against the stationary operand before it), so that a Program that loads is
// one the simulator can run without range checks of its own.
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <ostream>
#include <istream>

#include "ncore/error.hpp"
#include "ncore/program.hpp"
#include "ncore/validate.hpp"

namespace ncore {
namespace {

// Limits on counts read from an image, far above any real Program, so that garbage is
// rejected before anything is allocated for it.
constexpr uint32_t kMaxString = 4096;
constexpr uint32_t kMaxTensors = 4096;
constexpr uint32_t kMaxRank = 8;
constexpr uint32_t kMaxLocations = 1u << 20;
constexpr uint32_t kMaxStreamInsns = 1u << 24;

class Writer {
 public:
  void bytes(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  void u8(uint8_t v) { buf_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  const std::string& data() const { return buf_; }

 private:
  std::string buf_;
};

class Reader {
 public:
  explicit Reader(std::vector<uint8_t> b) : buf_(std::move(b)) {}
  void section(std::string s) { section_ = std::move(s); }
  const std::string& section() const { return section_; }
  size_t pos() const { return pos_; }
  size_t left() const { return buf_.size() - pos_; }
  size_t size() const { return buf_.size(); }
  const uint8_t* begin() const { return buf_.data(); }
  void drop_tail(size_t n) { buf_.resize(buf_.size() - n); }

  const uint8_t* take(size_t n) {
    if (left() < n)
      throw ImageError(fmt::format("truncated image: {} needs {} more bytes at offset {}, but only {} remain",
                                   section_, n, pos_, left()));
    const uint8_t* p = buf_.data() + pos_;
    pos_ += n;
    return p;
  }
  uint8_t u8() { return *take(1); }
  uint32_t u32() {
    const uint8_t* p = take(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
    return v;
  }
  uint64_t u64() {
    const uint8_t* p = take(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
    return v;
  }
  uint32_t count(uint32_t limit, const char* what) {
    const uint32_t n = u32();
    if (n > limit) throw ImageError(fmt::format("{}: {} count {} exceeds the limit of {}", section_, what, n, limit));
    return n;
  }
  std::string str(const char* what) {
    const uint32_t n = count(kMaxString, what);
    const uint8_t* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }

 private:
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
  std::string section_ = "header";
};

}  // namespace

uint32_t image_checksum(const uint8_t* p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  while (n > 0) {  // zlib takes a 32-bit length
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    c = crc32(c, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(c);
}

namespace {

[[noreturn]] void bad(const Reader& r, const std::string& what) {
  throw ImageError(fmt::format("{}: {}", r.section(), what));
}

// Enum fields of one decoded instruction; a name for the first one that is out of range.
const char* bad_enum_field(const isa::Insn& i) {
  if (!isa::is_valid(i.opcode)) return "opcode";
  if (!isa::is_valid(i.engine)) return "engine";
  if (!isa::is_valid(i.wait_cond)) return "wait_cond";
  if (!isa::is_valid(i.upd_op)) return "upd_op";
  if (!isa::is_valid(i.upd_when)) return "upd_when";
  if (!isa::is_valid(i.op0)) return "op0";
  if (!isa::is_valid(i.op1)) return "op1";
  const struct {
    const char* name;
    const isa::Ap& ap;
  } aps[] = {{"dst", i.dst}, {"src0", i.src0}, {"src1", i.src1}};
  static thread_local std::string msg;
  for (const auto& a : aps) {
    if (!isa::is_valid(a.ap.mem)) return (msg = fmt::format("{}.mem", a.name)).c_str();
    if (!isa::is_valid(a.ap.dtype)) return (msg = fmt::format("{}.dtype", a.name)).c_str();
  }
  if (!isa::is_valid(i.s0.mem)) return "s0.mem";
  if (!isa::is_valid(i.s0.dtype)) return "s0.dtype";
  if (!isa::is_valid(i.s1.mem)) return "s1.mem";
  if (!isa::is_valid(i.s1.dtype)) return "s1.dtype";
  return nullptr;
}

}  // namespace

void Program::write_image(std::ostream& out) const {
  Writer w;
  w.bytes(kImageMagic, sizeof kImageMagic);
  w.u32(kImageVersion);
  w.u32(isa::kInsnBytes);
  w.str(kernel);
  w.str(preset);
  w.u64(hbm_bytes);
  w.u32(static_cast<uint32_t>(hbm_tensors.size()));
  for (const auto& t : hbm_tensors) {
    w.str(t.name);
    w.u8(static_cast<uint8_t>(t.dtype));
    w.u8(static_cast<uint8_t>(t.role));
    w.u32(static_cast<uint32_t>(t.shape.size()));
    for (int64_t d : t.shape) w.u64(static_cast<uint64_t>(d));
    w.u64(t.offset);
    w.u64(t.bytes);
    w.u64(t.init.size());
    w.bytes(t.init.data(), t.init.size());
  }
  w.u32(static_cast<uint32_t>(locations.size()));
  for (const auto& l : locations) {
    w.str(l.file);
    w.u32(l.line);
  }
  w.u32(static_cast<uint32_t>(streams.size()));
  uint8_t rec[isa::kInsnBytes];
  for (const auto& s : streams) {
    w.str(s.name);
    w.u8(static_cast<uint8_t>(s.engine));
    w.u32(s.queue);
    w.u32(static_cast<uint32_t>(s.insns.size()));
    for (const auto& in : s.insns) {
      isa::encode(in.insn, rec);
      w.bytes(rec, sizeof rec);
      w.u32(in.loc);
    }
  }
  w.u32(image_checksum(reinterpret_cast<const uint8_t*>(w.data().data()), w.data().size()));
  out.write(w.data().data(), static_cast<std::streamsize>(w.data().size()));
}

namespace {

// The header's version, after the magic; a version 3 image's CRC-32 checked and dropped.
uint32_t read_version(Reader& r) {
  r.section("header");
  const uint8_t* magic = r.take(sizeof kImageMagic);
  if (std::memcmp(magic, kImageMagic, sizeof kImageMagic) != 0)
    throw ImageError("not a Program image: bad magic (expected \"NCIMG\" followed by three zero bytes)");
  const uint32_t version = r.u32();
  if (version < 1 || version > kImageVersion)
    throw ImageError(fmt::format("unsupported image format version {} (this build reads versions 1 to {})", version,
                                 kImageVersion));
  if (version >= 3) {
    if (r.size() < r.pos() + 4) throw ImageError("truncated image: no checksum");
    const uint8_t* end = r.begin() + r.size() - 4;
    const uint32_t want = uint32_t{end[0]} | uint32_t{end[1]} << 8 | uint32_t{end[2]} << 16 | uint32_t{end[3]} << 24;
    const uint32_t have = image_checksum(r.begin(), r.size() - 4);
    if (want != have)
      throw ImageError(fmt::format("the image is damaged: its CRC-32 is {:08x} but its contents give {:08x} (a "
                                   "truncated, changed or corrupted file; save the image again)",
                                   want, have));
    r.drop_tail(4);
  }
  return version;
}

// One entry of the tensor table, checked against HBM's size (max_hbm_bytes, the header's hbm_bytes).
HbmTensor read_tensor(Reader& r, uint32_t version, uint64_t max_hbm_bytes, uint64_t hbm_bytes) {
  HbmTensor t;
  t.name = r.str("name length");
  t.dtype = static_cast<isa::Dtype>(r.u8());
  if (!isa::is_valid(t.dtype)) bad(r, fmt::format("invalid dtype {}", static_cast<unsigned>(t.dtype)));
  const uint8_t role = r.u8();
  if (role > static_cast<uint8_t>(TensorRole::constant)) bad(r, fmt::format("invalid role {}", role));
  t.role = static_cast<TensorRole>(role);
  const uint32_t rank = r.count(kMaxRank, "rank");
  uint64_t elems = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    const uint64_t v = r.u64();
    if (v > max_hbm_bytes) bad(r, fmt::format("dimension {} has size {}", d, static_cast<int64_t>(v)));
    elems *= v;
    if (elems > max_hbm_bytes) bad(r, "shape has more elements than HBM can hold");
    t.shape.push_back(static_cast<int64_t>(v));
  }
  t.offset = r.u64();
  t.bytes = r.u64();
  if (t.bytes != elems * isa::dtype_bytes(t.dtype))
    bad(r, fmt::format("'{}' has {} bytes but its shape and dtype need {}", t.name, t.bytes,
                       elems * isa::dtype_bytes(t.dtype)));
  if (t.offset > hbm_bytes || t.bytes > hbm_bytes - t.offset)
    bad(r, fmt::format("'{}' at [{}, {}) lies outside hbm_bytes {}", t.name, t.offset, t.offset + t.bytes, hbm_bytes));
  if (version >= 2) {
    const uint64_t n = r.u64();
    const uint64_t want = t.role == TensorRole::constant ? t.bytes : 0;
    if (n != want)
      bad(r, fmt::format("'{}' ({}) has {} init bytes, expected {}", t.name,
                         t.role == TensorRole::constant ? "constant" : "not a constant", n, want));
    if (n > r.left())
      bad(r, fmt::format("truncated image: '{}' has {} init bytes, but only {} bytes remain", t.name, n, r.left()));
    const uint8_t* b = r.take(static_cast<size_t>(n));
    t.init.assign(b, b + n);
  } else if (t.role == TensorRole::constant) {
    bad(r, fmt::format("'{}' is a constant, which a version 1 image cannot hold", t.name));
  }
  return t;
}

// Stream si of the stream table (expected to be `e`), each instruction checked against the
// preset and the Program read so far.
void read_stream(Reader& r, uint32_t si, const Stream& e, const Preset& preset, const Program& p, Stream& s) {
  r.section(fmt::format("stream {}", si));
  s.name = r.str("name length");
  const uint8_t engine = r.u8();
  s.engine = static_cast<isa::Engine>(engine);
  s.queue = r.u32();
  if (s.name != e.name || s.engine != e.engine || s.queue != e.queue)
    bad(r, fmt::format("stream {} is '{}' (engine {}, queue {}), expected '{}' (engine {}, queue {})", si, s.name,
                       isa::is_valid(s.engine) ? isa::to_string(s.engine) : std::to_string(engine).c_str(), s.queue,
                       e.name, isa::to_string(e.engine), e.queue));
  r.section(fmt::format("stream {}", s.name));
  const uint32_t ni = r.count(kMaxStreamInsns, "instruction");
  s.insns.reserve(std::min<uint32_t>(ni, 1u << 16));
  for (uint32_t k = 0; k < ni; ++k) {
    r.section(fmt::format("stream {} instruction {}", s.name, k));
    Instruction ins;
    ins.insn = isa::decode(r.take(isa::kInsnBytes));
    ins.loc = r.u32();
    const isa::Insn& i = ins.insn;
    if (const char* f = bad_enum_field(i)) bad(r, fmt::format("field {} holds an invalid value", f));
    if (i.engine != s.engine)
      bad(r, fmt::format("{} instruction for engine {} in the stream of engine {}", isa::to_string(i.opcode),
                         isa::to_string(i.engine), isa::to_string(s.engine)));
    if (s.engine == isa::Engine::dma && i.dma_queue != s.queue)
      bad(r, fmt::format("instruction for DMA queue {} in the stream of queue {}", i.dma_queue, s.queue));
    if (ins.loc >= p.locations.size())
      bad(r, fmt::format("location index {} is out of range (the table has {} entries)", ins.loc, p.locations.size()));
    try {
      validate_insn(i, preset, p.hbm_bytes);
    } catch (const SimError& err) {
      bad(r, err.what());
    }
    s.insns.push_back(ins);
  }
}

}  // namespace

Program Program::read_image(std::istream& in) {
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Reader r(std::move(bytes));
  Program p;
  const uint32_t version = read_version(r);
  const uint32_t insn_bytes = r.u32();
  if (insn_bytes != isa::kInsnBytes)
    bad(r, fmt::format("instruction records are {} bytes, but this build's ISA uses {}-byte records", insn_bytes,
                       isa::kInsnBytes));
  p.kernel = r.str("kernel name length");
  p.preset = r.str("preset name length");
  const Preset* preset = find_preset(p.preset);
  if (!preset) bad(r, fmt::format("unknown hardware preset '{}'", p.preset));
  p.hbm_bytes = r.u64();
  const uint64_t max_hbm_bytes = std::min(uint64_t{1} << preset->hbm_addr_bits, preset->hbm_capacity_bytes);
  if (p.hbm_bytes > max_hbm_bytes)
    bad(r, fmt::format("hbm_bytes {} exceeds the {} bytes of HBM of preset {} (a corrupted header?)", p.hbm_bytes,
                       max_hbm_bytes, preset->name));

  r.section("tensor table");
  const uint32_t nt = r.count(kMaxTensors, "tensor");
  p.hbm_tensors.reserve(nt);
  for (uint32_t k = 0; k < nt; ++k) {
    r.section(fmt::format("tensor table entry {}", k));
    p.hbm_tensors.push_back(read_tensor(r, version, max_hbm_bytes, p.hbm_bytes));
  }

  r.section("location table");
  const uint32_t nl = r.count(kMaxLocations, "location");
  p.locations.reserve(std::min<uint32_t>(nl, 4096));
  for (uint32_t k = 0; k < nl; ++k) {
    r.section(fmt::format("location table entry {}", k));
    SourceLoc l;
    l.file = r.str("file name length");
    l.line = r.u32();
    p.locations.push_back(std::move(l));
  }

  r.section("stream table");
  const unsigned want_streams = kNumEngineStreams + static_cast<unsigned>(preset->dma_queues);
  const uint32_t ns = r.count(kNumEngineStreams + 16, "stream");
  if (ns != want_streams)
    bad(r, fmt::format("{} streams, but preset '{}' has {} (5 engines + {} DMA queues)", ns, p.preset, want_streams,
                       preset->dma_queues));
  const std::vector<Stream> expect = make_streams(static_cast<unsigned>(preset->dma_queues));
  p.streams.resize(ns);
  for (uint32_t si = 0; si < ns; ++si) read_stream(r, si, expect[si], *preset, p, p.streams[si]);
  if (r.left() != 0) throw ImageError(fmt::format("{} unexpected bytes after the last stream", r.left()));
  try {
    validate_program(p, *preset);
  } catch (const SimError& err) {
    throw ImageError(fmt::format("tensor engine stream: {}", err.what()));
  }
  return p;
}

}  // namespace ncore
