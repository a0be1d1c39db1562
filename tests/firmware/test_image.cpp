// Program image: round trips, and rejection of every kind of malformed image with an
// ImageError that says what is wrong (never a crash, never another exception type).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

#include "ncore/error.hpp"
#include "ncore/program.hpp"
#include "ncore/validate.hpp"
#include "kernels/kernel.hpp"

namespace {

namespace isa = ncore::isa;
const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

std::string image_of(const ncore::Program& p) {
  std::ostringstream o;
  p.write_image(o);
  return o.str();
}

// A version 3 image's body (without its checksum), and a body sealed with its checksum.
std::string body_of(const std::string& img) { return img.substr(0, img.size() - 4); }
std::string sealed(const std::string& body) {
  const uint32_t c = ncore::image_checksum(reinterpret_cast<const uint8_t*>(body.data()), body.size());
  std::string b = body;
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>(c >> (8 * i)));
  return b;
}

// An image edited in place, its checksum made right again, so that the reader's other checks see
// the edit (version 3 images only: the version field at byte 8).
std::string resealed(const std::string& b) {
  if (b.size() < 20 || static_cast<uint8_t>(b[8]) != 3) return b;
  return sealed(body_of(b));
}

ncore::Program parse_raw(const std::string& bytes) {
  std::istringstream in(bytes);
  return ncore::Program::read_image(in);
}
ncore::Program parse(const std::string& bytes) { return parse_raw(resealed(bytes)); }

std::string read_error_raw(const std::string& bytes) {
  try {
    parse_raw(bytes);
  } catch (const ncore::ImageError& e) {
    return e.what();
  }
  return "<no error>";
}
std::string read_error(const std::string& bytes) { return read_error_raw(resealed(bytes)); }

void put_u32(std::string& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
}

// A small hand-made Program: one memset on the vector engine, one location.
ncore::Program tiny_program();

// read_error of the image of tiny_program() after `damage`.
std::string damaged_error(const std::function<void(ncore::Program&)>& damage) {
  ncore::Program p = tiny_program();
  damage(p);
  return read_error(image_of(p));
}

ncore::Program tiny_program() {
  ncore::Program p;
  p.kernel = "k";
  p.preset = "trn2";
  p.streams = ncore::make_streams(16);
  p.hbm_bytes = 256;
  ncore::HbmTensor x;
  x.name = "x";
  x.dtype = isa::Dtype::fp32;
  x.shape = {64};
  x.bytes = 256;
  x.role = ncore::TensorRole::input;
  p.hbm_tensors.push_back(x);
  p.locations.push_back({"kernels/x.cpp", 7});
  isa::Insn i{};
  i.opcode = isa::Opcode::memset;
  i.engine = isa::Engine::dve;
  i.dst.mem = isa::Buffer::sbuf;
  i.dst.dtype = isa::Dtype::fp32;
  i.dst.num_part = 128;
  i.dst.size = {16, 1, 1, 1};
  i.dst.stride = {1, 0, 0, 0};
  i.upd_sem = 3;
  i.upd_op = isa::SemOp::inc;
  p.streams[3].insns.push_back({i, 0});
  return p;
}

ncore::Program traced_matmul() {
  kernels::Args a;
  a.kernel = "matmul";
  a.set("k", 256);
  a.set("m", 128);
  a.set("n", 512);
  a.dtype = isa::Dtype::bf16;
  return kernels::build(a, trn2());
}

// The byte offset of the first tensor's init_bytes field in an image of tiny_program().
constexpr size_t kTinyInitAt = 8 + 4 + 4 + (4 + 1) + (4 + 4) + 8 + 4 + (4 + 1) + 1 + 1 + 4 + 8 + 8 + 8;

ncore::Program traced(const std::string& kernel, int64_t n) {
  kernels::Args a;
  a.kernel = kernel;
  a.set("n", n);
  if (kernel == "tiled") a.set("row_chunk", 128);
  if (kernel == "stream") a.set("free_dim", 2);
  return kernels::build(a, trn2());
}

}  // namespace

TEST_CASE("image round trip keeps every field", "[firmware][image]") {
  for (const auto& p : {traced("tiled", 1024), traced("stream", 1024), traced("direct_alloc", 256000), tiny_program(),
                        traced("transpose", 256), traced_matmul()}) {
    const std::string img = image_of(p);
    const ncore::Program q = parse(img);
    CHECK(q.kernel == p.kernel);
    CHECK(q.preset == p.preset);
    CHECK(q.hbm_bytes == p.hbm_bytes);
    REQUIRE(q.hbm_tensors.size() == p.hbm_tensors.size());
    for (size_t k = 0; k < p.hbm_tensors.size(); ++k) {
      CHECK(q.hbm_tensors[k].name == p.hbm_tensors[k].name);
      CHECK(q.hbm_tensors[k].shape == p.hbm_tensors[k].shape);
      CHECK(q.hbm_tensors[k].offset == p.hbm_tensors[k].offset);
      CHECK(q.hbm_tensors[k].bytes == p.hbm_tensors[k].bytes);
      CHECK(q.hbm_tensors[k].role == p.hbm_tensors[k].role);
      CHECK(q.hbm_tensors[k].dtype == p.hbm_tensors[k].dtype);
      CHECK(q.hbm_tensors[k].init == p.hbm_tensors[k].init);
    }
    REQUIRE(q.locations.size() == p.locations.size());
    for (size_t k = 0; k < p.locations.size(); ++k) {
      CHECK(q.locations[k].file == p.locations[k].file);
      CHECK(q.locations[k].line == p.locations[k].line);
    }
    REQUIRE(q.streams.size() == p.streams.size());
    for (size_t s = 0; s < p.streams.size(); ++s) {
      REQUIRE(q.streams[s].insns.size() == p.streams[s].insns.size());
      for (size_t k = 0; k < p.streams[s].insns.size(); ++k) {
        uint8_t a[isa::kInsnBytes], b[isa::kInsnBytes];
        isa::encode(p.streams[s].insns[k].insn, a);
        isa::encode(q.streams[s].insns[k].insn, b);
        CHECK(std::memcmp(a, b, sizeof a) == 0);
        CHECK(q.streams[s].insns[k].loc == p.streams[s].insns[k].loc);
      }
    }
    CHECK(image_of(q) == img);
    CHECK(q.listing() == p.listing());
  }
}

TEST_CASE("image layout starts with magic, version and record size", "[firmware][image]") {
  const std::string img = image_of(tiny_program());
  CHECK(img.compare(0, 8, std::string("NCIMG\0\0\0", 8)) == 0);
  CHECK(static_cast<uint8_t>(img[8]) == 3);  // version 3, little-endian
  CHECK(static_cast<uint8_t>(img[12]) == isa::kInsnBytes);
  // kernel name "k": length 1 then the byte
  CHECK(static_cast<uint8_t>(img[16]) == 1);
  CHECK(img[20] == 'k');
}

TEST_CASE("image save and load through a file", "[firmware][image]") {
  const ncore::Program p = traced("naive", 128);
  const std::string path = "firmware_test_image.ncimg";
  p.save(path);
  const ncore::Program q = ncore::Program::load(path);
  CHECK(q.listing() == p.listing());
  std::remove(path.c_str());
  CHECK_THROWS_AS(ncore::Program::load("/nonexistent/dir/x.ncimg"), ncore::ImageError);
}

TEST_CASE("image header errors", "[firmware][image]") {
  const std::string good = image_of(tiny_program());
  std::string b = good;
  b[0] = 'X';
  CHECK_THAT(read_error(b), Catch::Contains("bad magic"));
  b = good;
  put_u32(b, 8, 7);
  CHECK_THAT(read_error(b), Catch::Contains("unsupported image format version 7"));
  b = good;
  put_u32(b, 12, 99);
  CHECK_THAT(read_error(b), Catch::Contains("instruction records are 99 bytes"));
  CHECK_THAT(read_error(""), Catch::Contains("truncated"));

  CHECK_THAT(damaged_error([](ncore::Program& p) { p.preset = "nope"; }),
             Catch::Contains("unknown hardware preset 'nope'"));
  CHECK_THAT(damaged_error([](ncore::Program& p) { p.streams.pop_back(); }),
             Catch::Contains("20 streams, but preset 'trn2' has 21"));
  CHECK_THAT(damaged_error([](ncore::Program& p) { std::swap(p.streams[0].name, p.streams[1].name); }),
             Catch::Contains("expected 'pe'"));
}

TEST_CASE("image counts beyond sane limits", "[firmware][image]") {
  const ncore::Program p = tiny_program();
  const std::string good = image_of(p);
  // tensor count: after magic(8) version(4) insn_bytes(4) kernel(4+1) preset(4+4) hbm_bytes(8)
  const size_t tensor_count_at = 8 + 4 + 4 + (4 + 1) + (4 + 4) + 8;
  REQUIRE(static_cast<uint8_t>(good[tensor_count_at]) == 1);
  std::string b = good;
  put_u32(b, tensor_count_at, 0xffffffffu);
  CHECK_THAT(read_error(b), Catch::Contains("tensor count 4294967295 exceeds the limit"));
  // kernel name length
  b = good;
  put_u32(b, 16, 0x7fffffffu);
  CHECK_THAT(read_error(b), Catch::Contains("exceeds the limit"));
  // hbm_bytes beyond the preset's HBM (trn2: 96 GiB)
  b = good;
  b[tensor_count_at - 3] = 0x20;  // 2^45 bytes
  CHECK_THAT(read_error(b), Catch::Contains("exceeds the 103079215104 bytes of HBM of preset trn2"));
}

TEST_CASE("a damaged image is refused by its checksum", "[firmware][image]") {
  const std::string good = image_of(traced("naive", 128));
  REQUIRE_NOTHROW(parse_raw(good));
  // one flipped bit anywhere after the version field, the checksum's own bits included
  std::mt19937 rng(7);
  for (int k = 0; k < 200; ++k) {
    std::string b = good;
    const size_t at = 12 + rng() % (b.size() - 12);
    b[at] = static_cast<char>(b[at] ^ (1u << (rng() % 8)));
    INFO("bit flipped at byte " << at);
    CHECK_THAT(read_error_raw(b), Catch::Contains("the image is damaged"));
  }
  // the hbm_bytes field of the header, the one a flipped bit made claim 16.8 GB
  std::string b = good;
  const size_t hbm_at = 8 + 4 + 4 + (4 + good[16]) + (4 + 4);
  b[hbm_at + 4] = static_cast<char>(b[hbm_at + 4] ^ 0x04);
  CHECK_THAT(read_error_raw(b), Catch::Contains("the image is damaged"));
}

TEST_CASE("image instruction errors", "[firmware][image]") {
  // the first instruction of the dve stream (3)
  const auto first = [](ncore::Program& p) -> isa::Insn& { return p.streams[3].insns[0].insn; };
  SECTION("location index out of range") {
    CHECK_THAT(damaged_error([](ncore::Program& p) { p.streams[3].insns[0].loc = 5; }),
               Catch::Contains("location index 5 is out of range (the table has 1 entries)"));
  }
  SECTION("invalid opcode") {
    CHECK_THAT(damaged_error([&](ncore::Program& p) { first(p).opcode = static_cast<isa::Opcode>(77); }),
               Catch::Contains("field opcode holds an invalid value"));
  }
  SECTION("invalid dtype in an operand") {
    CHECK_THAT(damaged_error([&](ncore::Program& p) { first(p).dst.dtype = static_cast<isa::Dtype>(12); }),
               Catch::Contains("field dst.dtype holds an invalid value"));
  }
  SECTION("invalid semaphore op") {
    CHECK_THAT(damaged_error([&](ncore::Program& p) { first(p).upd_op = static_cast<isa::SemOp>(7); }),
               Catch::Contains("field upd_op holds an invalid value"));
  }
  SECTION("engine does not match the stream") {
    // a vector-engine memset in the pe stream
    CHECK_THAT(damaged_error([](ncore::Program& p) { std::swap(p.streams[0].insns, p.streams[3].insns); }),
               Catch::Contains("memset instruction for engine dve in the stream of engine pe"));
  }
  SECTION("instruction outside SBUF") {
    const std::string e = damaged_error([&](ncore::Program& p) { first(p).dst.offset = trn2().sbuf_bytes; });
    CHECK_THAT(e, Catch::Contains("stream dve instruction 0"));
    CHECK_THAT(e, Catch::Contains("outside the"));
  }
  SECTION("access pattern whose extent overflows 64-bit arithmetic") {
    CHECK_THAT(damaged_error([&](ncore::Program& p) {
                 first(p).dst.size = {0xffffffffu, 0xffffffffu, 1, 1};
                 first(p).dst.stride = {0x7fffffff, 0x7fffffff, 0, 0};
               }),
               Catch::Contains("operand dst: its free sizes hold more elements than any memory"));
  }
  SECTION("tensor outside hbm_bytes") {
    CHECK_THAT(damaged_error([](ncore::Program& p) { p.hbm_tensors[0].offset = 64; }),
               Catch::Contains("lies outside hbm_bytes 256"));
  }
  SECTION("trailing bytes") {
    CHECK_THAT(read_error_raw(sealed(body_of(image_of(tiny_program())) + "xy")), Catch::Contains("2 unexpected bytes"));
  }
}

TEST_CASE("every truncation of an image is rejected", "[firmware][image]") {
  for (const auto& p : {traced("naive", 128), traced("transpose", 128)}) {
    const std::string good = image_of(p);
    REQUIRE_NOTHROW(parse(good));
    // Every length, except inside the 64 KiB of the identity constant, where every 61st will do.
    size_t skip_lo = good.size(), skip_hi = good.size();
    if (const ncore::HbmTensor* id = p.find_tensor("identity_fp32")) {
      const size_t at = good.find(std::string(id->init.begin(), id->init.end()));
      REQUIRE(at != std::string::npos);
      skip_lo = at + 64;
      skip_hi = at + id->init.size() - 64;
    }
    for (size_t len = 0; len < good.size(); len += (len >= skip_lo && len < skip_hi) ? 61 : 1) {
      const std::string e = read_error(good.substr(0, len));
      INFO("length " << len);
      CHECK((e.find("truncated") != std::string::npos || e.find("bad magic") != std::string::npos));
    }
  }
}

TEST_CASE("constant tensors: stored in the image, loaded into HBM", "[firmware][image]") {
  const ncore::Program p = traced("transpose", 128);
  const ncore::HbmTensor* id = p.find_tensor("identity_fp32");
  REQUIRE(id);
  REQUIRE(id->role == ncore::TensorRole::constant);
  REQUIRE(id->init.size() == id->bytes);
  const ncore::Program q = parse(image_of(p));
  REQUIRE(q.find_tensor("identity_fp32"));
  CHECK(q.find_tensor("identity_fp32")->init == id->init);
  CHECK(q.find_tensor("a_tensor")->init.empty());
  CHECK_THAT(q.listing(), Catch::Contains("identity_fp32") && Catch::Contains("constant"));
  std::vector<uint8_t> hbm(q.hbm_bytes, 0xAB);
  q.load_constants(hbm.data(), hbm.size());
  CHECK(std::vector<uint8_t>(hbm.begin() + id->offset, hbm.begin() + id->offset + id->bytes) == id->init);
  CHECK(hbm[q.find_tensor("a_tensor")->offset] == 0xAB);  // nothing else is touched
  std::vector<uint8_t> hbm2(q.hbm_bytes, 0);
  q.load_constants(hbm2.data());
  CHECK(std::vector<uint8_t>(hbm2.begin() + id->offset, hbm2.begin() + id->offset + id->bytes) == id->init);
  CHECK_THROWS_WITH(q.load_constants(hbm.data(), id->offset + 4),
                    Catch::Contains("constant tensor 'identity_fp32' at [") &&
                        Catch::Contains("lies outside the"));
}

TEST_CASE("image tensor init bytes and version 1 images", "[firmware][image]") {
  // A constant's init must be exactly its bytes; other tensors have none.
  ncore::Program p = tiny_program();
  p.hbm_tensors[0].role = ncore::TensorRole::constant;
  CHECK_THAT(read_error(image_of(p)), Catch::Contains("'x' (constant) has 0 init bytes, expected 256"));
  p.hbm_tensors[0].init.assign(256, 7);
  CHECK(parse(image_of(p)).hbm_tensors[0].init == std::vector<uint8_t>(256, 7));
  p.hbm_tensors[0].role = ncore::TensorRole::input;
  CHECK_THAT(read_error(image_of(p)), Catch::Contains("'x' (not a constant) has 256 init bytes, expected 0"));
  p.hbm_tensors[0].role = static_cast<ncore::TensorRole>(4);
  CHECK_THAT(read_error(image_of(p)), Catch::Contains("invalid role 4"));
  // init count beyond the image
  std::string b = image_of(tiny_program());
  REQUIRE(b.substr(kTinyInitAt, 8) == std::string(8, '\0'));
  b[kTinyInitAt + 5] = 1;
  CHECK_THAT(read_error(b), Catch::Contains("init bytes"));
  // Version 1: the same without the init field (and without the checksum).
  b = body_of(image_of(tiny_program()));
  put_u32(b, 8, 1);
  b.erase(kTinyInitAt, 8);
  const ncore::Program v1 = parse(b);
  CHECK(v1.listing() == tiny_program().listing());
  CHECK(v1.hbm_tensors[0].init.empty());
}

TEST_CASE("an image whose tensor-engine stream is inconsistent is rejected", "[firmware][image]") {
  ncore::Program p = traced_matmul();
  REQUIRE_NOTHROW(parse(image_of(p)));
  auto& pe = p.streams[0].insns;
  const auto first_ls = std::find_if(pe.begin(), pe.end(), [](const ncore::Instruction& i) {
    return i.insn.opcode == isa::Opcode::load_stationary;
  });
  REQUIRE(first_ls != pe.end());
  first_ls->insn.opcode = isa::Opcode::sem_wait;  // the first multiply has no stationary operand
  first_ls->insn.upd_op = isa::SemOp::none;
  CHECK_THAT(read_error(image_of(p)),
             Catch::Contains("tensor engine stream") &&
                 Catch::Contains("no load_stationary precedes this multiply on the tensor engine's stream"));
}

TEST_CASE("randomly corrupted images are rejected or read, never crash", "[firmware][image]") {
  const std::string good = image_of(traced("tiled", 512));
  std::mt19937 rng(12345);
  int rejected = 0, accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string b = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<char>(rng());
    if (trial % 10 == 0) b.resize(rng() % b.size());
    try {
      const ncore::Program q = parse(b);
      (void)q.listing();  // a Program that loads can be listed
      ++accepted;
    } catch (const ncore::ImageError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 0);
  CHECK(rejected + accepted == 3000);
  // The header and tensor table of an image with a constant (the identity of a transpose).
  const std::string with_constant = image_of(traced("transpose", 128));
  const size_t table_end = with_constant.find("kernels/src/matrix.cpp");
  REQUIRE(table_end != std::string::npos);
  rejected = 0;
  for (int trial = 0; trial < 500; ++trial) {
    std::string b = with_constant;
    b[16 + rng() % (table_end - 16)] ^= static_cast<char>(1u << (rng() % 8));
    try {
      (void)parse(b).listing();
    } catch (const ncore::ImageError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 0);
}

TEST_CASE("corrupted instruction records are rejected or read, never crash", "[firmware][image]") {
  // Corrupt only the instruction records of the dve stream, where every field is an enum,
  // an address or a size that the reader must check.
  const ncore::Program p = traced("stream", 25600);
  const std::string good = image_of(p);
  const size_t rec = isa::kInsnBytes + 4;
  const size_t n_dve = p.streams[3].insns.size();
  REQUIRE(n_dve > 0);
  // Streams are written in order; find the dve records by encoding the first one.
  uint8_t first[isa::kInsnBytes];
  isa::encode(p.streams[3].insns[0].insn, first);
  const size_t at = good.find(std::string(reinterpret_cast<const char*>(first), sizeof first));
  REQUIRE(at != std::string::npos);
  std::mt19937 rng(777);
  int rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string b = good;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) b[at + rng() % (rec * n_dve)] ^= static_cast<char>(1u << (rng() % 8));
    try {
      parse(b).listing();
    } catch (const ncore::ImageError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 1000);
}

// A well-formed activation (copy, scale 1, bias -0) in place on tiny_program()'s first
// tile, no semaphore update: the instruction the validate_insn cases below vary.
static isa::Insn copy_activation() {
  isa::Insn act = tiny_program().streams[3].insns[0].insn;
  act.opcode = isa::Opcode::activation;
  act.engine = isa::Engine::act;
  act.func = isa::ActFunc{};
  act.src0 = act.dst;
  act.imm0 = 0x3f800000u;
  act.imm1 = 0x80000000u;
  act.upd_op = isa::SemOp::none;
  return act;
}

// Found by the fuzz_validate target: the box of an operand whose 32-bit sizes and strides span
// more than 64 bits overflowed int64 in validate_insn (undefined behaviour; a wrapped box
// could pass the bounds checks). Every operand, the activation's reduce result (dst2) too, is
// now refused with a message before its box is computed.
TEST_CASE("validate_insn refuses operands whose extent overflows 64 bits", "[firmware][image]") {
  const ncore::Preset& pr = trn2();
  const isa::Insn act = copy_activation();
  ncore::validate_insn(act, pr, 256);  // the well-formed instruction passes

  isa::Insn huge = act;
  huge.src0.size = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
  huge.src0.stride = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
  CHECK_THROWS_WITH(ncore::validate_insn(huge, pr, 256),
                    Catch::Contains("operand src0: its free sizes hold more elements than any memory"));

  isa::Insn wide = act;  // 2^32 elements, strides that span 2^50 bytes
  wide.src0.size = {0x10000u, 0x10000u, 1, 1};
  wide.src0.stride = {INT32_MIN, INT32_MIN, 0, 0};
  CHECK_THROWS_WITH(ncore::validate_insn(wide, pr, 256),
                    Catch::Contains("operand src0: its strides span more bytes than any memory holds"));

  isa::Insn red = act;  // the add-reduce result (dst2), which the image loader's own check missed
  red.dst2 = act.dst;
  red.dst2.size = {0x10000u, 0x10000u, 1, 1};
  red.dst2.stride = {0x7fffffff, 0x7fffffff, 0, 0};
  CHECK_THROWS_WITH(ncore::validate_insn(red, pr, 256), Catch::Contains("operand dst2: its strides span"));

  // Through an image: refused with an ImageError that names the operand.
  ncore::Program p = tiny_program();
  p.streams[3].insns.clear();
  p.streams[1].insns.push_back({red, 0});
  CHECK_THAT(read_error(image_of(p)), Catch::Contains("operand dst2: its strides span"));
}

// The overlap rule (a destination that overlaps a source must be exactly in place), checked byte
// range by byte range: one range per contiguous run. Found by the fuzz_validate target: listing
// every element of a 4-million-element operand took seconds per instruction.
TEST_CASE("validate_insn finds partly overlapping operands run by run", "[firmware][image]") {
  const ncore::Preset& pr = trn2();
  isa::Insn act = copy_activation();
  act.dst.size = {16, 4, 1, 1};
  act.dst.stride = {2, 64, 0, 0};
  act.src0 = act.dst;
  const uint32_t esz = isa::dtype_bytes(act.dst.dtype);

  isa::Insn apart = act;  // the odd elements against the even ones: the boxes overlap, the bytes do not
  apart.src0.offset += esz;
  ncore::validate_insn(apart, pr, 256);

  isa::Insn runs = act;  // contiguous runs of 16, shifted by one element: they share bytes
  runs.dst.stride = {1, 64, 0, 0};
  runs.src0 = runs.dst;
  runs.src0.offset += esz;
  CHECK_THROWS_WITH(ncore::validate_insn(runs, pr, 256), Catch::Contains("the destination overlaps operand"));

  isa::Insn gaps = runs;  // the same runs, the source's a row further: apart
  gaps.src0.offset = runs.dst.offset + 16 * esz;
  ncore::validate_insn(gaps, pr, 256);

  isa::Insn many = act;  // interleaved, but 128 x 129 x 64 separate elements: too many ranges to compare
  many.dst.start_part = 0;
  many.dst.num_part = 128;
  many.dst.size = {64, 129, 1, 1};
  many.dst.stride = {2, 128, 0, 0};
  many.src0 = many.dst;
  many.src0.offset += esz;
  CHECK_THROWS_WITH(ncore::validate_insn(many, pr, 256), Catch::Contains("too many to check that they are apart"));

  isa::Insn again = act;  // a source reading one element again (stride 0) inside a destination run
  again.dst.stride = {1, 64, 0, 0};
  again.src0.stride = {0, 64, 0, 0};
  again.src0.offset += 5 * esz;
  CHECK_THROWS_WITH(ncore::validate_insn(again, pr, 256), Catch::Contains("the destination overlaps operand"));
}

// The bitvec ALU ops work on the elements' bits: every operand one integer dtype, and no
// arithmetic op beside them in a tensor_scalar; the tensor engine takes float operands only.
TEST_CASE("validate_insn: bitvec ops need one integer dtype, the tensor engine floats", "[firmware][image]") {
  const ncore::Preset& pr = trn2();
  isa::Insn ts = copy_activation();
  ts.opcode = isa::Opcode::tensor_scalar;
  ts.engine = isa::Engine::dve;
  ts.src0.dtype = ts.dst.dtype = isa::Dtype::int32;
  ts.op0 = isa::AluOp::bitwise_and;
  ts.imm0 = 0xFF;
  ncore::validate_insn(ts, pr, 256);  // int32 throughout: accepted

  isa::Insn f = ts;
  f.dst.dtype = isa::Dtype::fp32;
  CHECK_THROWS_WITH(ncore::validate_insn(f, pr, 256),
                    Catch::Contains("the bitvec op bitwise_and needs every operand of one integer dtype; dst is fp32"));
  isa::Insn mixed = ts;  // two integer dtypes
  mixed.src0.dtype = isa::Dtype::int16;
  mixed.dst.dtype = isa::Dtype::uint16;
  CHECK_THROWS_WITH(ncore::validate_insn(mixed, pr, 256), Catch::Contains("src0 is int16"));
  isa::Insn both = ts;
  both.op1 = isa::AluOp::add;
  CHECK_THROWS_WITH(ncore::validate_insn(both, pr, 256),
                    Catch::Contains("the bitvec op bitwise_and cannot be combined with the arithmetic op add"));

  isa::Insn red = ts;  // a bitwise_or reduction over int32: accepted; over fp32: refused
  red.opcode = isa::Opcode::tensor_reduce;
  red.op0 = isa::AluOp::bitwise_or;
  red.red_axes = 1;
  red.dst.size = {1, 1, 1, 1};
  red.dst.offset = 256;  // apart from the 16 int32 of src0
  ncore::validate_insn(red, pr, 256);
  red.src0.dtype = isa::Dtype::fp32;
  CHECK_THROWS_WITH(ncore::validate_insn(red, pr, 256), Catch::Contains("src0 is fp32"));

  isa::Insn ls = ts;
  ls.opcode = isa::Opcode::load_stationary;
  ls.engine = isa::Engine::pe;
  ls.src0.dtype = isa::Dtype::int8;
  CHECK_THROWS_WITH(ncore::validate_insn(ls, pr, 256),
                    Catch::Contains("the stationary operand is int8: the tensor engine multiplies float32, tfloat32, "
                                    "bfloat16, float16, float8_e4m3 or float8_e5m2"));
}
