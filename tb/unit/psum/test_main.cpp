// Catch2 main of the PSUM unit bench.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
