// nki.compiler (ncc): direct allocation. mod_alloc places the physical tiles of a tensor of
// shape (B..., par_dim(P), F...) itself: logical tile (i0, i1, ...) lives at partition
// base_partition + lin(num_par_tiles, i mod num_par_tiles) * P and byte
// base_addr + lin(num_free_tiles, i mod num_free_tiles) * (bytes of one tile per partition),
// lin being the row-major linear index. An empty tuple means one physical tile.
#pragma once

#include <cstdint>
#include <vector>

#include "nki/tensor.hpp"

namespace nki::ncc::sbuf {

Alloc mod_alloc(int64_t base_addr, int64_t base_partition = 0, std::vector<int64_t> num_par_tiles = {},
                std::vector<int64_t> num_free_tiles = {});

}  // namespace nki::ncc::sbuf
