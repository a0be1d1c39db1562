"""neuronxcc.nki.compiler (ncc) on the ncore model: the decorators kernels carry, and direct
allocation (ncc.sbuf.mod_alloc)."""
from . import _core


def skip_middle_end_transformations(func=None, **kwargs):
    """Accepted as is: this model traces the kernel as written (no middle-end transformations)."""
    if func is None:
        return lambda f: f
    return func


def enable_stack_allocator(func=None, **kwargs):
    if func is None:
        return lambda f: f
    return func


force_auto_alloc = enable_stack_allocator


class _Alloc:
    def __init__(self, base_addr, base_partition, num_par_tiles, num_free_tiles):
        self.base_addr = _core.integer(base_addr, "base_addr of mod_alloc")
        self.base_partition = _core.integer(base_partition, "base_partition of mod_alloc")
        self.num_par_tiles = tuple(_core.dims(num_par_tiles, "num_par_tiles of mod_alloc"))
        self.num_free_tiles = tuple(_core.dims(num_free_tiles, "num_free_tiles of mod_alloc"))


class _Space:
    def __init__(self, name):
        self._name = name

    def mod_alloc(self, base_addr=0, *, base_partition=0, num_par_tiles=(), num_free_tiles=(), **kwargs):
        """Places the physical tiles of a tensor (B..., par_dim(P), F...): logical tile i at partition
        base_partition + (i mod num_par_tiles) * P and byte base_addr + (i mod num_free_tiles) *
        (bytes of one tile per partition)."""
        if self._name != "sbuf":
            raise ValueError("direct allocation is modelled in the SBUF only (ncc.sbuf.mod_alloc)")
        return _Alloc(base_addr, base_partition, num_par_tiles, num_free_tiles)


sbuf = _Space("sbuf")
psum = _Space("psum")
