// Catch2 main of the scalar-engine unit bench.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
