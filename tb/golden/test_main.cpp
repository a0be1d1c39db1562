// Catch2 main of the golden-model and numerics tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
