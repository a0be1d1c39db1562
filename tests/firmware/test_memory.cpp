// Overflow-checked counts (ncore/size.hpp) and the host memory that holds HBM (ncore/memory.hpp).
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "ncore/error.hpp"
#include "ncore/memory.hpp"
#include "ncore/size.hpp"

TEST_CASE("counts are refused above 2^60, never wrapped", "[firmware][size]") {
  using ncore::count_mul;
  using ncore::count_product;
  using ncore::kMaxCount;
  CHECK(count_mul(0, 5) == 0u);
  CHECK(count_mul(1u << 20, 1u << 20) == uint64_t{1} << 40);
  CHECK(count_mul(kMaxCount, 1) == kMaxCount);
  CHECK_FALSE(count_mul(kMaxCount, 2));
  CHECK_FALSE(count_mul(kMaxCount + 1, 1));
  CHECK_FALSE(count_mul(uint64_t{1} << 32, uint64_t{1} << 32));  // 2^64 wraps to 0 in plain arithmetic
  CHECK_FALSE(count_mul(3, 6148914691236517206ull));            // 2^64 + 2: wraps to 2
  const std::vector<int64_t> fits{128, 4096, 512};
  CHECK(count_product(fits.begin(), fits.end()) == 128u * 4096u * 512u);
  const std::vector<int64_t> wraps{int64_t{1} << 32, int64_t{1} << 32, 4};  // the (2**32, 2**32, 4)
  CHECK_FALSE(count_product(wraps.begin(), wraps.end()));
  const std::vector<int64_t> huge{128, int64_t{1} << 62};
  CHECK_FALSE(count_product(huge.begin(), huge.end()));
  const std::vector<int64_t> zero{int64_t{1} << 62, int64_t{1} << 62, 0};  // empty, whatever the others
  CHECK(count_product(zero.begin(), zero.end()) == 0u);
  const std::vector<int64_t> negative{4, -1};
  CHECK_FALSE(count_product(negative.begin(), negative.end()));
}

TEST_CASE("HBM memory is zero and costs only what is touched", "[firmware][memory]") {
  // 64 GiB on a machine that may have less: reserved, not committed.
  ncore::ZeroedBytes big(uint64_t{64} << 30);
  REQUIRE(big.size() == uint64_t{64} << 30);
  CHECK(big.data()[0] == 0);
  CHECK(big.data()[big.size() - 1] == 0);
  big.data()[(uint64_t{32} << 30) + 5] = 7;
  CHECK(big.data()[(uint64_t{32} << 30) + 5] == 7);
  // moving keeps the bytes where they are
  ncore::ZeroedBytes moved = std::move(big);
  CHECK(big.size() == 0);
  CHECK(moved.data()[(uint64_t{32} << 30) + 5] == 7);
  ncore::ZeroedBytes empty(0);
  CHECK(empty.size() == 0);
}

TEST_CASE("copy_into_zeroed copies every byte that is not zero", "[firmware][memory]") {
  std::vector<uint8_t> src(5 * 4096 + 123, 0);
  src[10] = 1;
  src[3 * 4096 + 7] = 2;
  src[src.size() - 1] = 3;
  ncore::ZeroedBytes dst(src.size());
  ncore::copy_into_zeroed(dst.data(), src.data(), src.size());
  CHECK(std::memcmp(dst.data(), src.data(), src.size()) == 0);
}
