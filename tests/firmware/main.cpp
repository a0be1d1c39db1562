// Catch2 main of the firmware tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
