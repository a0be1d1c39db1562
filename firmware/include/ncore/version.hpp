// The model's version and the git revision it was built from ("5f1b6279a0c3", with "-dirty" for
// uncommitted changes; "unknown" outside a git checkout). Every command prints them for
// --version, and every JSON report and profile records them beside the preset, so a figure can
// always be traced to the model that produced it.
#pragma once

#include <string>

namespace ncore {

const char* version();   // the project's version, "0.3.0"
const char* revision();  // git describe of the source tree at build time

// "<tool> <version> (revision <revision>)"
inline std::string version_line(const std::string& tool) {
  return tool + " " + version() + " (revision " + revision() + ")";
}

}  // namespace ncore
