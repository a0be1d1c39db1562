// Program image: round trips, and rejection of every kind of malformed image with an
// ImageError that says what is wrong (never a crash, never another exception type).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

#include "ncore/error.hpp"
#include "ncore/program.hpp"
#include "nki/registry.hpp"

namespace {

namespace isa = ncore::isa;
const ncore::Preset& trn2() { return *ncore::find_preset("trn2"); }

std::string image_of(const ncore::Program& p) {
  std::ostringstream o;
  p.write_image(o);
  return o.str();
}

ncore::Program parse(const std::string& bytes) {
  std::istringstream in(bytes);
  return ncore::Program::read_image(in);
}

std::string read_error(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const ncore::ImageError& e) {
    return e.what();
  }
  return "<no error>";
}

void put_u32(std::string& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
}

// A small hand-made Program: one memset on the vector engine, one location.
ncore::Program tiny_program() {
  ncore::Program p;
  p.kernel = "k";
  p.preset = "trn2";
  p.streams = ncore::make_streams(16);
  p.hbm_bytes = 256;
  p.hbm_tensors.push_back({"x", isa::Dtype::fp32, {64}, 0, 256, ncore::TensorRole::input});
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

ncore::Program traced(const std::string& kernel, int64_t n) {
  kernels::Args a;
  a.kernel = kernel;
  a.n = n;
  a.row_chunk = 128;
  a.free_dim = 2;
  return kernels::build(a, trn2());
}

}  // namespace

TEST_CASE("image round trip keeps every field", "[firmware][image]") {
  for (const auto& p : {traced("tiled", 1024), traced("stream", 1024), traced("direct_alloc", 256000), tiny_program()}) {
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
  CHECK(static_cast<uint8_t>(img[8]) == 1);  // version 1, little-endian
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

  ncore::Program p = tiny_program();
  p.preset = "nope";
  CHECK_THAT(read_error(image_of(p)), Catch::Contains("unknown hardware preset 'nope'"));
  p = tiny_program();
  p.streams.pop_back();
  CHECK_THAT(read_error(image_of(p)), Catch::Contains("20 streams, but preset 'trn2' has 21"));
  p = tiny_program();
  std::swap(p.streams[0].name, p.streams[1].name);
  CHECK_THAT(read_error(image_of(p)), Catch::Contains("expected 'pe'"));
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
  // hbm_bytes beyond 40 bits
  b = good;
  b[tensor_count_at - 1] = 0x7f;
  CHECK_THAT(read_error(b), Catch::Contains("hbm_bytes"));
}

TEST_CASE("image instruction errors", "[firmware][image]") {
  SECTION("location index out of range") {
    ncore::Program p = tiny_program();
    p.streams[3].insns[0].loc = 5;
    CHECK_THAT(read_error(image_of(p)),
               Catch::Contains("location index 5 is out of range (the table has 1 entries)"));
  }
  SECTION("invalid opcode") {
    ncore::Program p = tiny_program();
    p.streams[3].insns[0].insn.opcode = static_cast<isa::Opcode>(77);
    CHECK_THAT(read_error(image_of(p)), Catch::Contains("field opcode holds an invalid value"));
  }
  SECTION("invalid dtype in an operand") {
    ncore::Program p = tiny_program();
    p.streams[3].insns[0].insn.dst.dtype = static_cast<isa::Dtype>(9);
    CHECK_THAT(read_error(image_of(p)), Catch::Contains("field dst.dtype holds an invalid value"));
  }
  SECTION("invalid semaphore op") {
    ncore::Program p = tiny_program();
    p.streams[3].insns[0].insn.upd_op = static_cast<isa::SemOp>(7);
    CHECK_THAT(read_error(image_of(p)), Catch::Contains("field upd_op holds an invalid value"));
  }
  SECTION("engine does not match the stream") {
    ncore::Program p = tiny_program();
    std::swap(p.streams[0].insns, p.streams[3].insns);  // a vector-engine memset in the pe stream
    CHECK_THAT(read_error(image_of(p)),
               Catch::Contains("memset instruction for engine dve in the stream of engine pe"));
  }
  SECTION("instruction outside SBUF") {
    ncore::Program p = tiny_program();
    p.streams[3].insns[0].insn.dst.offset = trn2().sbuf_bytes;
    const std::string e = read_error(image_of(p));
    CHECK_THAT(e, Catch::Contains("stream dve instruction 0"));
    CHECK_THAT(e, Catch::Contains("outside the"));
  }
  SECTION("access pattern whose extent overflows 64-bit arithmetic") {
    ncore::Program p = tiny_program();
    p.streams[3].insns[0].insn.dst.size = {0xffffffffu, 0xffffffffu, 1, 1};
    p.streams[3].insns[0].insn.dst.stride = {0x7fffffff, 0x7fffffff, 0, 0};
    CHECK_THAT(read_error(image_of(p)), Catch::Contains("operand dst spans more elements than any memory holds"));
  }
  SECTION("tensor outside hbm_bytes") {
    ncore::Program p = tiny_program();
    p.hbm_tensors[0].offset = 64;
    CHECK_THAT(read_error(image_of(p)), Catch::Contains("lies outside hbm_bytes 256"));
  }
  SECTION("trailing bytes") {
    CHECK_THAT(read_error(image_of(tiny_program()) + "xy"), Catch::Contains("2 unexpected bytes"));
  }
}

TEST_CASE("every truncation of an image is rejected", "[firmware][image]") {
  const std::string good = image_of(traced("naive", 128));
  REQUIRE_NOTHROW(parse(good));
  for (size_t len = 0; len < good.size(); ++len) {
    const std::string e = read_error(good.substr(0, len));
    INFO("length " << len);
    CHECK((e.find("truncated") != std::string::npos || e.find("bad magic") != std::string::npos));
  }
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
