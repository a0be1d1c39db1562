// Catch2 main of the FP unit bench and the ISA layout test.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
