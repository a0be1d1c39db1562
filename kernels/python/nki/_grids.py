"""NKI 0.7's tiled and blocked views (nl.tiles, nl.blocks, nl.alloc_tiles, nl.alloc_blocks): a
tensor region navigated in tile or block coordinates. A grid keeps its source tensor, the element
region it selects (a start and an extent per source dimension) and its tile shape, which applies
to the source's trailing dimensions; the leading, untiled dimensions count one element per grid
coordinate. Indexing a grid gives a grid (integers keep the grid's rank); `.data` is the selected
region as one tensor view. Nothing is allocated or moved, but by alloc_tiles and alloc_blocks."""
import math

from neuronxcc.nki._base import caller


def _shape_tuple(value, what):
    if not isinstance(value, tuple) or not all(type(x) is int for x in value):
        raise TypeError(f"{caller()}: {what} must be a tuple of Python integers, got {value!r}")
    if any(x <= 0 for x in value):
        raise ValueError(f"{caller()}: {what} {value} has a non-positive entry")
    return value


class NkiGrid:
    """A tensor region in tile (NkiTileGrid) or block (NkiBlockGrid) coordinates."""

    def __init__(self, source, start, extent, tile_shape, block_shape=None):
        self._source = source
        self._start = tuple(start)
        self._extent = tuple(extent)
        self.tile_shape = tuple(tile_shape)
        self._lead = len(extent) - len(tile_shape)  # untiled leading dimensions
        self.block_shape = None if block_shape is None else tuple(block_shape)

    # -- the grid's geometry
    @property
    def index_step_elements(self):
        """Each grid coordinate's step in source elements."""
        cell = self.tile_shape if self.block_shape is None else tuple(
            t * b for t, b in zip(self.tile_shape, self.block_shape))
        return (1,) * self._lead + cell

    @property
    def shape(self):
        """Tiles (blocks) along each dimension; partial ones at the ends count."""
        return tuple(math.ceil(e / s) for e, s in zip(self._extent, self.index_step_elements))

    @property
    def element_shape(self):
        return self._extent

    @property
    def is_remainder(self):
        """Whether the selection is cut short by the source's end (a partial tile or block)."""
        return any(e % s for e, s in zip(self._extent, self.index_step_elements))

    @property
    def is_data_representable(self):
        return True

    @property
    def dtype(self):
        return self._source.dtype

    @property
    def buffer(self):
        return self._source.buffer

    @property
    def data(self):
        """The selected region as one tensor view of the source."""
        key = tuple(slice(s, s + e) for s, e in zip(self._start, self._extent))
        return self._source[key]

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) > len(self.shape):
            raise IndexError(f"{caller()}: {len(key)} indices for a grid of {len(self.shape)} dimensions")
        key = key + (slice(None),) * (len(self.shape) - len(key))
        start, extent = list(self._start), list(self._extent)
        for d, (k, n, step) in enumerate(zip(key, self.shape, self.index_step_elements)):
            if isinstance(k, int):
                i = k + n if k < 0 else k
                if not 0 <= i < n:
                    raise IndexError(f"{caller()}: grid index {k} on dimension {d} of a grid of shape {self.shape}")
                lo, hi = i, i + 1
            elif isinstance(k, slice):
                lo, hi, st = k.indices(n)
                if st != 1 or hi <= lo:
                    raise IndexError(f"{caller()}: grid slice {k} on dimension {d}: a non-empty range with step 1")
            else:
                raise TypeError(f"{caller()}: a grid is indexed by integers and slices, not {type(k).__name__}")
            start[d] = self._start[d] + lo * step
            extent[d] = min(self._extent[d] - lo * step, (hi - lo) * step)
        return type(self)(self._source, start, extent, self.tile_shape, self.block_shape)

    def __repr__(self):
        kind = "block" if self.block_shape is not None else "tile"
        return f"<{type(self).__name__} {self.shape} {kind}s of {self._source} elements {self._extent}>"


class NkiTileGrid(NkiGrid):
    """A tensor region in tile coordinates."""


class NkiBlockGrid(NkiGrid):
    """A tensor region in block coordinates (block_shape tiles per block)."""


def _region(source):
    """(tensor, start, extent) of a tensor or a grid."""
    if isinstance(source, NkiGrid):
        return source._source, source._start, source._extent
    return source, (0,) * len(source.shape), tuple(source.shape)


def tiles(source, *, tile_shape=None):
    """source (a tensor, a grid) as a grid of tile_shape tiles (a grid's own tile shape by default)."""
    if tile_shape is None:
        if not isinstance(source, NkiGrid):
            raise ValueError(f"{caller()}: nl.tiles of a tensor needs tile_shape")
        tile_shape = source.tile_shape
    tile_shape = _shape_tuple(tile_shape, "tile_shape")
    tensor, start, extent = _region(source)
    if len(tile_shape) > len(extent):
        raise ValueError(f"{caller()}: tile_shape {tile_shape} has more dimensions than the source's {extent}")
    return NkiTileGrid(tensor, start, extent, tile_shape)


def blocks(source, *, tile_shape=None, block_shape):
    """source as a grid of blocks of block_shape tiles of tile_shape elements."""
    block_shape = _shape_tuple(block_shape, "block_shape")
    grid = tiles(source, tile_shape=tile_shape)
    if len(block_shape) != len(grid.tile_shape):
        raise ValueError(f"{caller()}: block_shape {block_shape} and tile_shape {grid.tile_shape} differ in rank")
    return NkiBlockGrid(grid._source, grid._start, grid._extent, grid.tile_shape, block_shape)


def alloc_tiles(ndarray, *, tile_shape, element_shape, buffer, dtype, address=None, name=""):
    """New storage of element_shape as a grid of tiles (ndarray: nl.ndarray, which allocates it)."""
    element_shape = _shape_tuple(element_shape, "element_shape")
    tile_shape = _shape_tuple(tile_shape, "tile_shape")
    if len(tile_shape) < 2 or len(tile_shape) > len(element_shape):
        raise ValueError(f"{caller()}: tile_shape {tile_shape} needs at least 2 dimensions and at most those of "
                         f"element_shape {element_shape}")
    return tiles(ndarray(element_shape, dtype, buffer=buffer, name=name, address=address), tile_shape=tile_shape)


def alloc_blocks(ndarray, *, tile_shape, block_shape, element_shape, buffer, dtype, address=None, name=""):
    grid = alloc_tiles(ndarray, tile_shape=tile_shape, element_shape=element_shape, buffer=buffer, dtype=dtype,
                       address=address, name=name)
    return blocks(grid, block_shape=block_shape)
