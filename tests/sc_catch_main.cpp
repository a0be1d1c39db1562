// Catch2 runner for test programs that use SystemC: main() starts SystemC's kernel, which
// calls sc_main, which runs the tests.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <systemc.h>

int sc_main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }

int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  // no banner in the test output
  return sc_core::sc_elab_and_sim(argc, argv);
}
