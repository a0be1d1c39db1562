// isagen: writes the SystemVerilog packages and the C++ headers of the instruction set and
// the hardware presets from their one machine-readable description.
//
//   isagen <ncore_isa.json> <ncore_presets.json> <out_dir>
//
// writes <out_dir>/rtl/ncore_isa_pkg.sv, <out_dir>/rtl/ncore_cfg_pkg.sv,
// <out_dir>/firmware/include/ncore/isa_gen.hpp, .../presets_gen.hpp and .../act_consts_gen.hpp
// (the activation functions' constants, also in ncore_isa_pkg.sv), and GTKWave translate
// filter files (<out_dir>/waves/filters/<enum>.txt, opcode.txt) that show the instruction
// fields by name in the waveforms. The build runs it
// into the build tree and the `isa_drift` test compares those files with the committed ones.
//
// Bit layout: a struct's fields are listed most significant first (SystemVerilog packed
// order); the generator gives every scalar field its least-significant-bit offset so the C++
// encoder writes exactly the bits the RTL's packed struct reads.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

struct EnumValue {
  std::string name;
  unsigned value;
  unsigned bytes;  // dtype only
  std::string doc;
  int stream = -1;  // engine only: index of its instruction stream in a Program, -1 for none
};

struct Enum {
  std::string name;
  unsigned width;
  std::string doc;
  std::vector<EnumValue> values;
};

struct Field {
  std::string name;
  std::string type;  // enum or struct name; empty for plain bits
  unsigned width = 0;  // per element, for plain bits
  unsigned count = 1;
  bool is_signed = false;
  std::string doc;
};

struct Struct {
  std::string name;
  std::string doc;
  std::vector<Field> fields;
};

// An activation-function constant: bits-wide words, a scalar (rows = cols = 0), an array
// (rows = 0) or an array of arrays.
struct Const {
  std::string name;
  unsigned bits = 32;
  unsigned rows = 0, cols = 0;
  bool msb_first = false;  // SystemVerilog: element 0 in the most significant bits
  std::vector<uint64_t> words;  // row by row
  std::string doc;
};

struct Isa {
  std::vector<Const> consts;
  std::vector<Enum> enums;
  std::vector<Struct> structs;
  unsigned opcode_width = 8;
  json instructions;
};

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error(msg); }

json load_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) fail("cannot open " + p.string());
  try {
    return json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    fail(p.string() + ": " + e.what());
  }
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string camel(const std::string& s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

std::string first_sentence(const std::string& s) {
  auto p = s.find(". ");
  return p == std::string::npos ? s : s.substr(0, p + 1);
}

// Short SystemVerilog prefix of an enum's values (ENGINE_PE, DT_FP32, ...).
std::string sv_prefix(const std::string& enum_name) {
  static const std::map<std::string, std::string> p = {
      {"engine", "ENGINE_"}, {"buffer", "BUF_"},     {"dtype", "DT_"},  {"alu_op", "ALU_"},
      {"sem_cond", "COND_"}, {"sem_op", "SEMOP_"},   {"sem_when", "WHEN_"}, {"opcode", "OP_"}};
  auto it = p.find(enum_name);
  return it == p.end() ? upper(enum_name) + "_" : it->second;
}

uint64_t parse_word(const json& v, const std::string& name, unsigned bits) {
  const std::string h = v.get<std::string>();
  if (h.empty() || h.size() > bits / 4 || h.find_first_not_of("0123456789ABCDEFabcdef") != std::string::npos)
    fail("act constant " + name + ": \"" + h + "\" is not a hex number of at most " + std::to_string(bits / 4) + " digits");
  return std::stoull(h, nullptr, 16);
}

Const parse_const(const json& c) {
  Const k;
  k.name = c.at("name");
  k.bits = c.at("bits").get<unsigned>();
  if (k.bits != 32 && k.bits != 64) fail("act constant " + k.name + ": bits must be 32 or 64");
  k.msb_first = c.value("order", "") == "msb_first";
  k.doc = c.value("doc", "");
  const json& v = c.at("value");
  if (v.is_string()) {
    k.words.push_back(parse_word(v, k.name, k.bits));
    return k;
  }
  for (auto& e : v) {
    if (e.is_string()) {
      k.words.push_back(parse_word(e, k.name, k.bits));
      continue;
    }
    if (k.cols != 0 && e.size() != k.cols) fail("act constant " + k.name + ": rows of different lengths");
    k.cols = static_cast<unsigned>(e.size());
    ++k.rows;
    for (auto& w : e) k.words.push_back(parse_word(w, k.name, k.bits));
  }
  if (k.rows == 0) k.cols = static_cast<unsigned>(k.words.size());
  if (k.words.empty() || (k.rows != 0 && k.words.size() != size_t{k.rows} * k.cols))
    fail("act constant " + k.name + ": no value, or a mix of words and rows");
  return k;
}

Isa parse_isa(const json& j) {
  Isa isa;
  isa.opcode_width = j.at("opcode_width").get<unsigned>();
  for (auto& [name, e] : j.at("enums").items()) {
    Enum en{name, e.at("width").get<unsigned>(), e.value("doc", ""), {}};
    for (auto& v : e.at("values")) {
      unsigned value = v.at("value").get<unsigned>();
      if (value >= (1u << en.width)) fail("enum " + name + " value " + v.at("name").get<std::string>() + " does not fit its width");
      en.values.push_back({v.at("name"), value, v.value("bytes", 0u), v.value("doc", ""), v.value("stream", -1)});
    }
    isa.enums.push_back(std::move(en));
  }
  // The opcode enumeration is derived from the instruction list.
  Enum op{"opcode", isa.opcode_width, "Instruction opcodes.", {}};
  for (auto& ins : j.at("instructions")) {
    unsigned value = ins.at("opcode").get<unsigned>();
    for (auto& v : op.values)
      if (v.value == value) fail("duplicate opcode " + std::to_string(value));
    op.values.push_back({ins.at("name"), value, 0, ins.value("doc", "")});
  }
  isa.enums.push_back(std::move(op));
  // Structs, in dependency order as listed.
  for (auto& [name, s] : j.at("structs").items()) {
    Struct st{name, s.value("doc", ""), {}};
    for (auto& f : s.at("fields")) {
      Field fd;
      fd.name = f.at("name");
      fd.type = f.value("type", "");
      fd.width = f.value("width", 0u);
      fd.count = f.value("count", 1u);
      fd.is_signed = f.value("signed", false);
      fd.doc = f.value("doc", "");
      if (fd.type.empty() && (fd.width == 0 || fd.width > 64)) fail("field " + name + "." + fd.name + " needs a width of 1..64");
      st.fields.push_back(std::move(fd));
    }
    isa.structs.push_back(std::move(st));
  }
  isa.instructions = j.at("instructions");
  for (auto& c : j.value("act_constants", json::array())) isa.consts.push_back(parse_const(c));
  return isa;
}

const Enum* find_enum(const Isa& isa, const std::string& n) {
  for (auto& e : isa.enums)
    if (e.name == n) return &e;
  return nullptr;
}
const Struct* find_struct(const Isa& isa, const std::string& n) {
  for (auto& s : isa.structs)
    if (s.name == n) return &s;
  return nullptr;
}

unsigned field_bits(const Isa& isa, const Field& f);
unsigned struct_bits(const Isa& isa, const Struct& s) {
  unsigned b = 0;
  for (auto& f : s.fields) b += field_bits(isa, f) * f.count;
  return b;
}
unsigned field_bits(const Isa& isa, const Field& f) {
  if (f.type.empty()) return f.width;
  if (auto* e = find_enum(isa, f.type)) return e->width;
  if (auto* s = find_struct(isa, f.type)) return struct_bits(isa, *s);
  fail("unknown type " + f.type);
}

// ----------------------------------------------------------------------------------------
// SystemVerilog
// ----------------------------------------------------------------------------------------

std::string sv_type(const Isa& isa, const Field& f) {
  if (f.type.empty()) {
    std::string base = "logic " + std::string(f.is_signed ? "signed " : "");
    // A part-select of a packed array is unsigned whatever its declaration, so element
    // arrays are declared unsigned and read through $signed() where the field is signed.
    if (f.count > 1) return "logic [" + std::to_string(f.count - 1) + ":0][" + std::to_string(f.width - 1) + ":0]";
    return f.width == 1 ? "logic" : base + "[" + std::to_string(f.width - 1) + ":0]";
  }
  if (find_enum(isa, f.type)) return f.type + "_e";
  return f.type + "_t";
}

// ----------------------------------------------------------------------------------------
// Activation-function constants
// ----------------------------------------------------------------------------------------

// The comment that opens every generated file: where it comes from (tools/function-lengths and
// readers look for the first line), then what it holds, one comment line per entry of `about`.
std::string generated_banner(const std::string& source, std::initializer_list<const char*> about) {
  std::string s = "// Generated by firmware/isagen from firmware/isa/" + source + ". Do not edit: run `make isa`.\n//\n";
  for (const char* line : about) s += std::string("// ") + line + "\n";
  return s;
}

// A word's hexadecimal digits, upper case, bits / 4 of them: 3FB8AA3B.
std::string hex_digits(uint64_t w, unsigned bits) {
  std::ostringstream h;
  h << std::uppercase << std::hex << std::setfill('0') << std::setw(static_cast<int>(bits / 4)) << w;
  return h.str();
}

// A word as SystemVerilog writes it: 32'h3FB8_AA3B.
std::string sv_word(uint64_t w, unsigned bits) {
  const std::string d = hex_digits(w, bits);
  std::string r;
  for (size_t i = 0; i < d.size(); ++i) r += (i && i % 4 == 0 ? "_" : "") + d.substr(i, 1);
  return std::to_string(bits) + "'h" + r;
}

std::string gen_sv_consts(const Isa& isa) {
  std::ostringstream o;
  o << "  ////////////////////////////////////\n  // Activation function constants //\n  ////////////////////////////////////\n\n"
       "  // The fixed constants of the activation functions' sequences (ncore_fp_pkg), shared bit for\n"
       "  // bit with the golden model (act_consts_gen.hpp). Arrays: element i at bits [W*i +: W]\n"
       "  // (arrays of arrays row by row), but for an msb_first bit string.\n";
  for (const Const& c : isa.consts) {
    const size_t n = c.words.size();
    o << "  // " << c.doc << "\n  localparam logic [" << n * c.bits - 1 << ":0] Act" << c.name << " = ";
    if (n == 1 && c.cols == 0) {
      o << sv_word(c.words[0], c.bits) << ";\n";
      continue;
    }
    o << "{";
    for (size_t i = 0; i < n; ++i) {
      const size_t k = c.msb_first ? i : n - 1 - i;  // the concatenation's first word is the most significant
      o << (i == 0 ? "" : (i % 4 == 0 ? ",\n      " : ", ")) << sv_word(c.words[k], c.bits);
    }
    o << "};\n";
  }
  return o.str() + "\n";
}

// A word as C++ writes it: 0x3FB8AA3Bu.
std::string cpp_word(uint64_t w, unsigned bits) { return "0x" + hex_digits(w, bits) + (bits == 64 ? "ull" : "u"); }

std::string gen_cpp_consts(const Isa& isa) {
  std::ostringstream o;
  o << generated_banner("ncore_isa.json",
                        {"The fixed constants of the activation functions' sequences (act_math.hpp), shared bit for",
                         "bit with the RTL (ncore_isa_pkg's Act* parameters, used by ncore_fp_pkg)."})
    << "#pragma once\n\n#include <cstdint>\n\nnamespace ncore::num::am {\n\n";
  for (const Const& c : isa.consts) {
    o << "// " << c.doc << "\ninline constexpr uint" << c.bits << "_t k" << c.name;
    if (c.rows) o << "[" << c.rows << "]";
    if (c.cols) o << "[" << c.cols << "]";
    o << " = ";
    if (!c.cols) {
      o << cpp_word(c.words[0], c.bits) << ";\n";
      continue;
    }
    o << "{";
    for (size_t i = 0; i < c.words.size(); ++i) {
      const bool row_start = c.rows && i % c.cols == 0;
      if (i) o << (row_start ? "},\n    " : (i % 4 == 0 && !c.rows ? ",\n    " : ", "));
      if (row_start) o << (i ? "{" : "\n    {");
      o << cpp_word(c.words[i], c.bits);
    }
    o << (c.rows ? "}};\n" : "};\n");
  }
  o << "\n}  // namespace ncore::num::am\n";
  return o.str();
}

std::string gen_sv_isa(const Isa& isa) {
  std::ostringstream o;
  o << generated_banner("ncore_isa.json",
                        {"The NeuronCore model's instruction set: enumerations, operand structs and the decoded",
                         "instruction word that sequencers hand to the engines."})
    << "package ncore_isa_pkg;\n\n";
  o << "  //////////////////\n  // Enumerations //\n  //////////////////\n\n";
  for (auto& e : isa.enums) {
    o << "  // " << e.doc << "\n";
    o << "  typedef enum logic [" << e.width - 1 << ":0] {\n";
    for (size_t i = 0; i < e.values.size(); ++i) {
      auto& v = e.values[i];
      o << "    " << sv_prefix(e.name) << upper(v.name) << " = " << e.width << "'d" << v.value
        << (i + 1 < e.values.size() ? "," : "") << "  // " << first_sentence(v.doc) << "\n";
    }
    o << "  } " << e.name << "_e;\n\n";
  }
  if (auto* dt = find_enum(isa, "dtype")) {
    o << "  // Bytes per element of each dtype.\n";
    o << "  function automatic logic [2:0] dtype_bytes(dtype_e dt);\n    unique case (dt)\n";
    for (auto& v : dt->values)
      o << "      " << sv_prefix("dtype") << upper(v.name) << ": dtype_bytes = 3'd" << v.bytes << ";\n";
    o << "      default: dtype_bytes = 3'd4;\n    endcase\n  endfunction\n\n";
  }
  o << "  /////////////\n  // Structs //\n  /////////////\n\n";
  for (auto& s : isa.structs) {
    o << "  // " << s.doc << " (" << struct_bits(isa, s) << " bits)\n";
    o << "  typedef struct packed {\n";
    for (auto& f : s.fields) {
      o << "    " << sv_type(isa, f) << " " << f.name << ";";
      if (!f.doc.empty()) o << "  // " << f.doc;
      o << "\n";
    }
    o << "  } " << s.name << "_t;\n\n";
  }
  o << gen_sv_consts(isa);
  o << "  localparam int unsigned InsnBits = " << struct_bits(isa, *find_struct(isa, "insn")) << ";\n\n";
  o << "endpackage\n";
  return o.str();
}

// ----------------------------------------------------------------------------------------
// C++
// ----------------------------------------------------------------------------------------

std::string cpp_scalar_type(const Field& f) {
  if (f.width == 1) return "bool";
  if (f.width <= 32) return f.is_signed ? "int32_t" : "uint32_t";
  return f.is_signed ? "int64_t" : "uint64_t";
}

std::string cpp_type(const Isa& isa, const Field& f) {
  std::string t;
  if (f.type.empty()) t = cpp_scalar_type(f);
  else if (find_enum(isa, f.type)) t = camel(f.type);
  else t = camel(f.type);
  if (f.count > 1) return "std::array<" + t + ", " + std::to_string(f.count) + ">";
  return t;
}

// Emits encode/decode statements for struct `s` whose least significant bit is at `base`
// (an expression), accessing members through `acc`.
void emit_codec(const Isa& isa, const Struct& s, std::ostream& enc, std::ostream& dec, const std::string& acc, unsigned base) {
  unsigned pos = base + struct_bits(isa, s);
  for (auto& f : s.fields) {
    unsigned fb = field_bits(isa, f);
    pos -= fb * f.count;
    for (unsigned k = 0; k < f.count; ++k) {
      unsigned lsb = pos + k * fb;  // element 0 in the least significant bits
      std::string member = acc + f.name + (f.count > 1 ? "[" + std::to_string(k) + "]" : "");
      if (auto* sub = find_struct(isa, f.type)) {
        emit_codec(isa, *sub, enc, dec, member + ".", lsb);
      } else if (find_enum(isa, f.type)) {
        enc << "  put_bits(out, " << lsb << ", " << fb << ", static_cast<uint64_t>(" << member << "));\n";
        dec << "  " << member << " = static_cast<" << camel(f.type) << ">(get_bits(in, " << lsb << ", " << fb << "));\n";
      } else {
        std::string t = cpp_scalar_type(f);
        enc << "  put_bits(out, " << lsb << ", " << fb << ", static_cast<uint64_t>(" << member << "));\n";
        if (f.is_signed)
          dec << "  " << member << " = static_cast<" << t << ">(sign_extend(get_bits(in, " << lsb << ", " << fb << "), " << fb << "));\n";
        else if (fb == 1)
          dec << "  " << member << " = get_bits(in, " << lsb << ", 1) != 0;\n";
        else
          dec << "  " << member << " = static_cast<" << t << ">(get_bits(in, " << lsb << ", " << fb << "));\n";
      }
    }
  }
}

// The engines that own an instruction stream, in a Program's stream order (their `stream`
// attribute, which must number them 0..n-1).
void emit_stream_kinds(const Enum& engine, std::ostream& o) {
  std::vector<const EnumValue*> order;
  for (auto& v : engine.values)
    if (v.stream >= 0) {
      if (static_cast<size_t>(v.stream) >= order.size()) order.resize(static_cast<size_t>(v.stream) + 1, nullptr);
      if (order[static_cast<size_t>(v.stream)]) fail("engine stream " + std::to_string(v.stream) + " given twice");
      order[static_cast<size_t>(v.stream)] = &v;
    }
  for (size_t i = 0; i < order.size(); ++i)
    if (!order[i]) fail("engine streams must be numbered 0..n-1 (no engine has stream " + std::to_string(i) + ")");
  o << "// The engines with an instruction stream of their own, in a Program's stream order; the DMA\n"
       "// queues' streams follow them.\n"
       "enum class StreamKind : uint8_t {";
  for (size_t i = 0; i < order.size(); ++i) o << (i ? ", " : " ") << order[i]->name << " = " << i;
  o << " };\ninline constexpr unsigned kNumEngineStreams = " << order.size() << ";\n";
  o << "inline constexpr Engine kStreamEngine[kNumEngineStreams] = {";
  for (size_t i = 0; i < order.size(); ++i) o << (i ? ", " : "") << "Engine::" << order[i]->name;
  o << "};\n// The stream index of an engine's own stream, or -1 (none, dma).\n"
       "inline constexpr int engine_stream(Engine e) {\n  switch (e) {\n";
  for (size_t i = 0; i < order.size(); ++i) o << "    case Engine::" << order[i]->name << ": return " << i << ";\n";
  o << "    default: return -1;\n  }\n}\n\n";
}

std::string gen_cpp_isa(const Isa& isa) {
  std::ostringstream o;
  const Struct& insn = *find_struct(isa, "insn");
  unsigned bits = struct_bits(isa, insn);
  unsigned bytes = (bits + 63) / 64 * 8;
  o << generated_banner("ncore_isa.json",
                        {"The NeuronCore model's instruction set for C++: enumerations, the decoded instruction,",
                         "its bit encoding (identical to the RTL's packed struct ncore_isa_pkg::insn_t) and the",
                         "per-instruction metadata used by the scheduler, the listing and the checkers."})
    << "#pragma once\n\n#include <array>\n#include <cstdint>\n#include <cstring>\n#include <string_view>\n\n"
       "namespace ncore::isa {\n\n";
  o << "inline constexpr unsigned kInsnBits = " << bits << ";\n";
  o << "inline constexpr unsigned kInsnBytes = " << bytes << ";  // image record: bits rounded up to 64\n\n";
  for (auto& e : isa.enums) {
    o << "// " << e.doc << "\n";
    o << "enum class " << camel(e.name) << " : uint8_t {\n";
    for (auto& v : e.values) o << "  " << v.name << " = " << v.value << ",  // " << v.doc << "\n";
    o << "};\n";
    o << "inline constexpr unsigned k" << camel(e.name) << "Width = " << e.width << ";\n";
    o << "inline constexpr const char* to_string(" << camel(e.name) << " v) {\n  switch (v) {\n";
    for (auto& v : e.values) o << "    case " << camel(e.name) << "::" << v.name << ": return \"" << v.name << "\";\n";
    o << "  }\n  return \"?\";\n}\n";
    o << "inline bool from_string(std::string_view s, " << camel(e.name) << "& out) {\n";
    for (auto& v : e.values) o << "  if (s == \"" << v.name << "\") { out = " << camel(e.name) << "::" << v.name << "; return true; }\n";
    o << "  return false;\n}\n";
    o << "inline constexpr bool is_valid(" << camel(e.name) << " v) {\n  switch (v) {\n";
    for (auto& v : e.values) o << "    case " << camel(e.name) << "::" << v.name << ":\n";
    o << "      return true;\n  }\n  return false;\n}\n";
    o << "inline constexpr std::array<" << camel(e.name) << ", " << e.values.size() << "> k" << camel(e.name)
      << "Values = {";
    for (size_t k = 0; k < e.values.size(); ++k)
      o << (k ? ", " : "") << camel(e.name) << "::" << e.values[k].name;
    o << "};  // every value, in the description's order\n\n";
  }
  if (auto* dt = find_enum(isa, "dtype")) {
    o << "inline constexpr unsigned dtype_bytes(Dtype d) {\n  switch (d) {\n";
    for (auto& v : dt->values) o << "    case Dtype::" << v.name << ": return " << v.bytes << ";\n";
    o << "  }\n  return 0;\n}\n\n";
  }
  if (auto* en = find_enum(isa, "engine")) emit_stream_kinds(*en, o);
  for (auto& s : isa.structs) {
    o << "// " << s.doc << "\n";
    o << "struct " << camel(s.name) << " {\n";
    for (auto& f : s.fields) {
      o << "  " << cpp_type(isa, f) << " " << f.name << "{};";
      if (!f.doc.empty()) o << "  // " << f.doc;
      o << "\n";
    }
    o << "};\n\n";
  }
  o << "namespace detail {\n"
       "inline void put_bits(uint8_t* out, unsigned lsb, unsigned width, uint64_t v) {\n"
       "  for (unsigned i = 0; i < width; ++i) {\n"
       "    unsigned b = lsb + i;\n"
       "    if ((v >> i) & 1u) out[b >> 3] = static_cast<uint8_t>(out[b >> 3] | (1u << (b & 7)));\n"
       "  }\n"
       "}\n"
       "inline uint64_t get_bits(const uint8_t* in, unsigned lsb, unsigned width) {\n"
       "  uint64_t v = 0;\n"
       "  for (unsigned i = 0; i < width; ++i) {\n"
       "    unsigned b = lsb + i;\n"
       "    v |= static_cast<uint64_t>((in[b >> 3] >> (b & 7)) & 1u) << i;\n"
       "  }\n"
       "  return v;\n"
       "}\n"
       "inline int64_t sign_extend(uint64_t v, unsigned width) {\n"
       "  uint64_t m = 1ull << (width - 1);\n"
       "  return static_cast<int64_t>((v ^ m) - m);\n"
       "}\n"
       "}  // namespace detail\n\n";
  std::ostringstream enc, dec;
  emit_codec(isa, insn, enc, dec, "i.", 0);
  o << "// Writes the instruction's bits into out[0..kInsnBytes), little-endian bit order.\n";
  o << "inline void encode(const Insn& i, uint8_t* out) {\n  using namespace detail;\n  std::memset(out, 0, kInsnBytes);\n"
    << enc.str() << "}\n\n";
  o << "inline Insn decode(const uint8_t* in) {\n  using namespace detail;\n  Insn i;\n" << dec.str() << "  return i;\n}\n\n";

  // Instruction metadata.
  o << "// How an instruction uses an operand field.\n"
       "struct OperandInfo {\n  const char* field;  // dst, src0, src1, s0, s1\n  bool optional;\n"
       "  bool hbm, sbuf, psum;  // buffers allowed\n};\n\n"
       "struct InsnInfo {\n  Opcode opcode;\n  const char* name;\n  Engine engine;  // Engine::none: any stream\n"
       "  const char* doc;\n  unsigned num_operands;\n  std::array<OperandInfo, 5> operands;\n};\n\n";
  o << "inline constexpr InsnInfo kInsnInfo[] = {\n";
  for (auto& ins : isa.instructions) {
    std::string eng = ins.at("engine");
    o << "    {Opcode::" << ins.at("name").get<std::string>() << ", \"" << ins.at("name").get<std::string>() << "\", Engine::"
      << (eng == "any" ? "none" : eng) << ",\n     " << json(ins.value("doc", "")).dump() << ",\n     "
      << ins.at("operands").size() << ", {{";
    bool first = true;
    for (auto& op : ins.at("operands")) {
      auto b = op.at("buffers");
      auto has = [&](const char* n) { return std::find(b.begin(), b.end(), n) != b.end(); };
      o << (first ? "" : ", ") << "{\"" << op.at("field").get<std::string>() << "\", " << (op.value("optional", false) ? "true" : "false")
        << ", " << (has("hbm") ? "true" : "false") << ", " << (has("sbuf") ? "true" : "false") << ", "
        << (has("psum") ? "true" : "false") << "}";
      first = false;
    }
    o << "}}},\n";
  }
  o << "};\n\n";
  o << "inline const InsnInfo* find_info(Opcode op) {\n  for (const auto& i : kInsnInfo)\n    if (i.opcode == op) return &i;\n  return nullptr;\n}\n\n";
  o << "}  // namespace ncore::isa\n";
  return o.str();
}

// ----------------------------------------------------------------------------------------
// Presets
// ----------------------------------------------------------------------------------------

// GTKWave translate filter file: each value as GTKWave prints a field of `width` bits in hex
// (one digit per 4 bits, zero-padded: GTKWave matches the whole string, without case), then its
// name. GTKWave 3.3 uses a filter file only on a trace that has no enum table of its own; the
// FST gives every enum-typed field one (Verilator writes the SystemVerilog names), so the save
// files show such a field as a vector of its bits, which has none (see waves/*.gtkw).
std::string gen_filter(const std::string& what, unsigned width, const std::vector<std::pair<unsigned, std::string>>& values) {
  std::ostringstream o;
  o << "# GTKWave translate filter: " << what << " by name (generated by firmware/isagen; run `make isa`).\n";
  o << "# Values in hex as GTKWave shows the field; for a vector of the field's bits (see waves/*.gtkw).\n";
  const unsigned digits = (width + 3) / 4;
  for (const auto& [v, name] : values) {
    std::ostringstream hex;
    hex << std::uppercase << std::hex;
    hex.width(digits);
    hex.fill('0');
    hex << v;
    o << hex.str() << " " << name << "\n";
  }
  return o.str();
}

// The filter files: one per enum, and the opcodes.
std::map<std::string, std::string> gen_filters(const Isa& isa) {
  std::map<std::string, std::string> files;
  for (const auto& e : isa.enums) {
    std::vector<std::pair<unsigned, std::string>> values;
    for (const auto& v : e.values) values.emplace_back(v.value, v.name);
    files[e.name] = gen_filter(e.name + " (" + std::to_string(e.width) + " bits)", e.width, values);
  }
  std::vector<std::pair<unsigned, std::string>> ops;
  for (const auto& in : isa.instructions) ops.emplace_back(in.at("opcode").get<unsigned>(), in.at("name").get<std::string>());
  std::sort(ops.begin(), ops.end());
  files["opcode"] = gen_filter("opcode (" + std::to_string(isa.opcode_width) + " bits)", isa.opcode_width, ops);
  return files;
}

std::string gen_sv_cfg(const json& p) {
  std::ostringstream o;
  o << generated_banner("ncore_presets.json",
                        {"Hardware configuration: one struct, named presets, derived numbers as localparams in",
                         "the modules that use them. Sources of the numbers are in the JSON file."})
    << "package ncore_cfg_pkg;\n\n";
  o << "  typedef struct packed {\n";
  for (auto& prm : p.at("params"))
    if (prm.at("rtl").get<bool>()) o << "    int unsigned " << camel(prm.at("name")) << ";\n";
  o << "  } cfg_t;\n\n";
  // A preset is a concatenation of its fields in the struct's order, each named in a comment (Yosys
  // 0.23 reads no assignment pattern, '{Name: value}).
  for (auto& pr : p.at("presets")) {
    o << "  // " << pr.at("doc").get<std::string>() << "\n";
    o << "  localparam cfg_t Cfg" << camel(pr.at("name")) << " = {\n";
    std::vector<std::pair<std::string, std::string>> items;
    for (auto& prm : p.at("params"))
      if (prm.at("rtl").get<bool>())
        items.emplace_back("32'd" + std::to_string(pr.at("values").at(prm.at("name").get<std::string>()).get<long long>()),
                           camel(prm.at("name")));
    size_t w = 0;
    for (const auto& [v, n] : items) w = std::max(w, v.size() + 1);
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string v = items[i].first + (i + 1 < items.size() ? "," : "");
      o << "    " << v << std::string(w + 1 - v.size(), ' ') << "// " << items[i].second << "\n";
    }
    o << "  };\n\n";
  }
  o << "  // Preset by number (the top level's Preset parameter).\n";
  o << "  function automatic cfg_t preset(int unsigned id);\n    unique case (id)\n";
  for (auto& pr : p.at("presets"))
    o << "      " << pr.at("values").at("id").get<int>() << ": preset = Cfg" << camel(pr.at("name")) << ";\n";
  o << "      default: preset = Cfg" << camel(p.at("presets")[0].at("name")) << ";\n    endcase\n  endfunction\n\n";
  o << "endpackage\n";
  return o.str();
}

std::string gen_cpp_cfg(const json& p) {
  std::ostringstream o;
  o << generated_banner("ncore_presets.json",
                        {"Hardware configuration presets for C++ (the same numbers as rtl/ncore_cfg_pkg.sv)."})
    << "#pragma once\n\n#include <cstdint>\n#include <string_view>\n\nnamespace ncore {\n\n";
  o << "struct Preset {\n  const char* name;\n  const char* doc;\n";
  for (auto& prm : p.at("params")) {
    o << "  uint64_t " << prm.at("name").get<std::string>() << ";";
    if (!prm.at("doc").get<std::string>().empty()) o << "  // " << prm.at("doc").get<std::string>();
    o << "\n";
  }
  o << "};\n\n";
  o << "inline constexpr Preset kPresets[] = {\n";
  for (auto& pr : p.at("presets")) {
    o << "    {\"" << pr.at("name").get<std::string>() << "\", \"" << pr.at("doc").get<std::string>() << "\"";
    for (auto& prm : p.at("params")) o << ", " << pr.at("values").at(prm.at("name").get<std::string>()).get<long long>();
    o << "},\n";
  }
  o << "};\n\n";
  o << "// A parameter of the presets: its name, whether the RTL is built with it (rtl/ncore_cfg_pkg.sv), and its\n"
       "// field.\nstruct PresetParam {\n  const char* name;\n  bool rtl;\n  uint64_t Preset::*field;\n};\n\n";
  o << "inline constexpr PresetParam kPresetParams[] = {\n";
  for (auto& prm : p.at("params")) {
    const std::string n = prm.at("name").get<std::string>();
    o << "    {\"" << n << "\", " << (prm.at("rtl").get<bool>() ? "true" : "false") << ", &Preset::" << n << "},\n";
  }
  o << "};\n\n";
  o << "// The preset called `name` as the table gives it, or nullptr.\n"
       "constexpr const Preset* find_builtin_preset(std::string_view name) {\n"
       "  for (const auto& p : kPresets)\n    if (name == p.name) return &p;\n  return nullptr;\n}\n\n"
       "// The preset called `name` as this process runs it: the table's, with the what-if values set\n"
       "// (ncore/preset_values.hpp), or nullptr.\n"
       "const Preset* find_preset(std::string_view name);\n\n";
  o << "}  // namespace ncore\n";
  return o.str();
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  // Leave the file (and its timestamp) alone when nothing changed.
  {
    std::ifstream in(p, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      if (ss.str() == text) return;
    }
  }
  std::ofstream out(p, std::ios::binary);
  if (!out) fail("cannot write " + p.string());
  out << text;
}

// The width of the access pattern's byte offset, which bounds every preset's HBM addresses.
unsigned ap_offset_width(const Isa& isa) {
  for (const auto& st : isa.structs)
    if (st.name == "ap")
      for (const auto& f : st.fields)
        if (f.name == "offset") return f.width;
  fail("the ISA has no ap.offset field");
}

void check_presets(const json& p, const Isa& isa) {
  const unsigned offset_bits = ap_offset_width(isa);
  for (auto& pr : p.at("presets")) {
    for (auto& prm : p.at("params"))
      if (!pr.at("values").contains(prm.at("name").get<std::string>()))
        fail("preset " + pr.at("name").get<std::string>() + " lacks " + prm.at("name").get<std::string>());
    auto v = pr.at("values");
    if (v.at("num_partitions").get<long>() % v.at("dma_engines").get<long>() != 0)
      fail("preset " + pr.at("name").get<std::string>() + ": num_partitions must be a multiple of dma_engines");
    if (v.at("sbuf_bytes").get<long>() % v.at("sbuf_line_bytes").get<long>() != 0)
      fail("preset " + pr.at("name").get<std::string>() + ": sbuf_bytes must be a multiple of sbuf_line_bytes");
    if (v.at("hbm_addr_bits").get<long>() < 1 || v.at("hbm_addr_bits").get<unsigned long>() > offset_bits)
      fail("preset " + pr.at("name").get<std::string>() + ": hbm_addr_bits must be 1 to " + std::to_string(offset_bits) +
           " (the width of ap.offset)");
    for (const char* k : {"dma_hbm_credits", "dma_queue_inflight", "dma_engine_inflight"})
      if (v.at(k).get<long>() < 1) fail("preset " + pr.at("name").get<std::string>() + ": " + k + " must be at least 1");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: isagen <ncore_isa.json> <ncore_presets.json> <out_dir>\n";
    return 2;
  }
  try {
    Isa isa = parse_isa(load_json(argv[1]));
    json presets = load_json(argv[2]);
    check_presets(presets, isa);
    fs::path out = argv[3];
    write_file(out / "rtl/ncore_isa_pkg.sv", gen_sv_isa(isa));
    write_file(out / "rtl/ncore_cfg_pkg.sv", gen_sv_cfg(presets));
    write_file(out / "firmware/include/ncore/isa_gen.hpp", gen_cpp_isa(isa));
    write_file(out / "firmware/include/ncore/presets_gen.hpp", gen_cpp_cfg(presets));
    write_file(out / "firmware/include/ncore/act_consts_gen.hpp", gen_cpp_consts(isa));
    for (const auto& [name, text] : gen_filters(isa)) write_file(out / "waves/filters" / (name + ".txt"), text);
  } catch (const std::exception& e) {
    std::cerr << "isagen: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
