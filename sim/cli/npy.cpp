// .npy reading and writing; see npy.hpp.
#include "cli/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "ncore/error.hpp"
#include "ncore/size.hpp"
#include "ncore/numerics.hpp"

namespace ncore::sim {
namespace {

const char kMagic[] = "\x93NUMPY";

[[noreturn]] void bad(const std::string& what, const std::string& msg) {
  throw InputError(fmt::format("{}: not a usable .npy file: {}", what, msg));
}

// The integer element types and the dtype whose values they hold ('|b1', bool, as uint8).
struct IntDescr {
  const char* descr;
  isa::Dtype dtype;
};
constexpr IntDescr kIntDescrs[] = {{"|i1", isa::Dtype::int8},   {"|u1", isa::Dtype::uint8},  {"|b1", isa::Dtype::uint8},
                                   {"<i2", isa::Dtype::int16},  {"<u2", isa::Dtype::uint16}, {"<i4", isa::Dtype::int32},
                                   {"<u4", isa::Dtype::uint32}};

const IntDescr* int_descr(const std::string& descr) {
  for (const auto& d : kIntDescrs)
    if (descr == d.descr) return &d;
  return nullptr;
}

unsigned elem_size(const std::string& descr) {
  if (descr == "<f4") return 4;
  if (descr == "<f2") return 2;
  if (const IntDescr* d = int_descr(descr)) return isa::dtype_bytes(d->dtype);
  return 0;
}

// Value of key `key` in the header dict, as raw text.
std::string dict_value(const std::string& h, const std::string& key, const std::string& what) {
  const std::string k = "'" + key + "'";
  auto p = h.find(k);
  if (p == std::string::npos) bad(what, "header has no " + k);
  p = h.find(':', p + k.size());
  if (p == std::string::npos) bad(what, "header entry " + k + " has no value");
  ++p;
  while (p < h.size() && std::isspace(static_cast<unsigned char>(h[p]))) ++p;
  if (p >= h.size()) bad(what, "header is truncated");
  size_t e = p;
  if (h[p] == '\'') {
    e = h.find('\'', p + 1);
    if (e == std::string::npos) bad(what, "unterminated string in header");
    return h.substr(p + 1, e - p - 1);
  }
  if (h[p] == '(') {
    e = h.find(')', p);
    if (e == std::string::npos) bad(what, "unterminated shape tuple in header");
    return h.substr(p, e - p + 1);
  }
  while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
  std::string v = h.substr(p, e - p);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  return v;
}

}  // namespace

uint64_t NpyArray::elements() const {
  // npy_parse has checked that the file holds this many elements
  const auto n = count_product(shape.begin(), shape.end());
  return n ? *n : 0;
}

NpyArray npy_parse(const std::vector<uint8_t>& b, const std::string& what) {
  if (b.size() < 10 || std::memcmp(b.data(), kMagic, 6) != 0) bad(what, "missing the \\x93NUMPY magic");
  const unsigned major = b[6];
  size_t hlen = 0, hstart = 0;
  if (major == 1) {
    hlen = b[8] | (b[9] << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) bad(what, "truncated header length");
    hlen = b[8] | (b[9] << 8) | (static_cast<size_t>(b[10]) << 16) | (static_cast<size_t>(b[11]) << 24);
    hstart = 12;
  } else {
    bad(what, fmt::format("format version {}.{} is not supported (1.0, 2.0 and 3.0 are)", major, b[7]));
  }
  if (hstart + hlen > b.size()) bad(what, "header runs past the end of the file");
  const std::string h(reinterpret_cast<const char*>(b.data() + hstart), hlen);
  NpyArray a;
  a.descr = dict_value(h, "descr", what);
  // native byte order is little-endian here; one-byte types carry no order
  if (a.descr.size() == 3 && a.descr[0] == '=') a.descr[0] = a.descr[2] == '1' ? '|' : '<';
  if (a.descr.size() == 3 && a.descr[0] == '<' && a.descr[2] == '1') a.descr[0] = '|';
  if (a.descr == "|u2") a.descr = "<u2";
  if (!elem_size(a.descr) && a.descr.size() == 3 && a.descr[0] == '>' && elem_size("<" + a.descr.substr(1)))
    bad(what, fmt::format("element type '{}' is big-endian: the model reads little-endian data (the byte order of "
                          "'<{}'; convert with a.astype('<{}'))",
                          a.descr, a.descr.substr(1), a.descr.substr(1)));
  if (!elem_size(a.descr))
    bad(what, fmt::format("element type '{}' is not supported (use float32 '<f4', float16 '<f2', '<u2' bfloat16 "
                          "bits, or an integer or bool array)",
                          a.descr));
  if (dict_value(h, "fortran_order", what) != "False") bad(what, "Fortran-ordered arrays are not supported");
  const std::string shape = dict_value(h, "shape", what);
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    bad(what, fmt::format("shape '{}' is not a tuple", shape));
  std::string num;
  for (char c : shape.substr(1)) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      num += c;
    } else if (c == ',' || c == ')') {
      if (!num.empty()) {
        if (num.size() > 12) bad(what, "dimension too large");
        a.shape.push_back(std::stoll(num));
        num.clear();
      }
    } else if (!std::isspace(static_cast<unsigned char>(c)) && c != 'L') {
      bad(what, "malformed shape " + shape);
    }
  }
  const uint64_t have = b.size() - hstart - hlen;
  // In 128 bits: the product of the dimensions may overflow 64 (and wrap to the file's size).
  unsigned __int128 need = elem_size(a.descr);
  for (auto d : a.shape) need = std::min<unsigned __int128>(need * static_cast<uint64_t>(d), ~uint64_t{0});
  if (have != need)
    bad(what, fmt::format("shape ({}) of {} needs {} data bytes but the file has {}", fmt::join(a.shape, ", "), a.descr,
                          need == ~uint64_t{0} ? std::string("more than 2^64") : std::to_string(uint64_t(need)), have));
  a.data.assign(b.begin() + static_cast<long>(hstart + hlen), b.end());
  return a;
}

NpyArray npy_load(const std::string& path, const std::string& what_in) {
  const std::string what = what_in.empty() ? path : what_in;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(fmt::format("{}: is a directory, not a .npy file", what));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open for reading", what));
  std::vector<uint8_t> b;
  try {
    b.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: cannot read the file", what));
  }
  if (in.bad()) throw InputError(fmt::format("{}: cannot read the file", what));
  return npy_parse(b, what);
}

std::vector<uint8_t> npy_serialize(const NpyArray& a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i) shape += fmt::format("{}{}", a.shape[i], (a.shape.size() == 1 || i + 1 < a.shape.size()) ? ", " : "");
  if (a.shape.size() == 1) shape.pop_back();
  shape += ")";
  std::string h = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", a.descr, shape);
  // Pad so that the data starts on a 64-byte boundary, ending the header with a newline. Format
  // version 1.0 has a 2-byte header length; a longer header (a shape of many dimensions) needs 2.0.
  const bool v2 = 10 + h.size() + 1 + 63 > 0xffff;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = prefix + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(v2 ? 2 : 1);
  out.push_back(0);
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<uint8_t>(h.size() >> (8 * i)));
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

void npy_save(const std::string& path, const NpyArray& a) {
  const auto b = npy_serialize(a);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(fmt::format("{}: cannot open for writing", path));
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!out) throw InputError(fmt::format("{}: write failed", path));
}

run::Array npy_to_array(const NpyArray& a, isa::Dtype dt, const std::string& what) {
  run::Array out;
  out.shape = a.shape;
  out.dtype = dt;
  out.origin = what;
  const uint64_t n = a.elements();
  const unsigned esz = isa::dtype_bytes(dt);
  out.bytes.resize(n * esz);
  auto put = [&](uint64_t i, uint32_t bits) { std::memcpy(out.bytes.data() + i * esz, &bits, esz); };
  if (a.descr == "<f4") {
    for (uint64_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, a.data.data() + 4 * i, 4);
      put(i, num::from_float(f, dt));
    }
  } else if (a.descr == "<f2") {
    if (dt == isa::Dtype::bf16)
      throw InputError(what + ": float16 data given for a bfloat16 kernel (use float32 or '<u2' bfloat16 bits)");
    for (uint64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, a.data.data() + 2 * i, 2);
      put(i, dt == isa::Dtype::fp16 ? h : num::from_f32_bits(num::to_f32_bits(h, isa::Dtype::fp16), dt));
    }
  } else if (a.descr == "<u2" && dt == isa::Dtype::bf16) {  // bfloat16 bit patterns
    out.bytes = a.data;
  } else {  // integers (or bools): their own bytes for their own dtype, else each value converted
    const isa::Dtype src = int_descr(a.descr)->dtype;
    if (isa::dtype_bytes(src) == esz && (src == dt || a.descr == "|b1")) {
      out.bytes = a.data;
    } else {
      const unsigned ssz = isa::dtype_bytes(src);
      for (uint64_t i = 0; i < n; ++i)
        put(i, num::from_f32_bits(num::to_f32_bits(num::load_bytes(a.data.data() + i * ssz, ssz), src), dt));
    }
  }
  return out;
}

NpyArray array_to_npy(const run::Array& a) {
  NpyArray n;
  n.shape = a.shape;
  if (a.dtype == isa::Dtype::fp16) {
    n.descr = "<f2";
    n.data = a.bytes;
    return n;
  }
  for (const auto& d : kIntDescrs)
    if (d.dtype == a.dtype) {  // integers as their own type (uint8 as uint8, not bool)
      n.descr = d.descr;
      n.data = a.bytes;
      return n;
    }
  n.descr = "<f4";
  const unsigned esz = isa::dtype_bytes(a.dtype);
  const uint64_t count = a.bytes.size() / esz;
  n.data.resize(4 * count);
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, a.bytes.data() + i * esz, esz);
    const uint32_t f = num::to_f32_bits(bits, a.dtype);
    std::memcpy(n.data.data() + 4 * i, &f, 4);
  }
  return n;
}

}  // namespace ncore::sim
