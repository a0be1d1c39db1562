# Embeds a text file into the simulator as a C++ string constant, at build time (so that an
# edit of the file rebuilds it): cmake -DINPUT=file -DOUTPUT=file.cpp -DSYMBOL=name -P embed.cmake
# writes `const char* const ncore::sim::SYMBOL` holding the file's text as a raw string literal.
file(READ "${INPUT}" content)
string(FIND "${content}" ")NCORE_EMBED\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} holds the raw-string delimiter )NCORE_EMBED\"")
endif()
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from sim/${name} by sim/embed.cmake; edit that file instead.\n"
  "namespace ncore::sim {\n"
  "extern const char* const ${SYMBOL};\n"
  "const char* const ${SYMBOL} = R\"NCORE_EMBED(${content})NCORE_EMBED\";\n"
  "}  // namespace ncore::sim\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
