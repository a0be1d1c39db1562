"""nki.isa.constants: the enums the ISA calls take (also nki.isa.engine, nki.isa.dge_mode, ...)."""
import enum


class engine(enum.Enum):
    """The engines (the model runs each instruction on the engine its lowering picks)."""
    tensor = "tensor"
    vector = "vector"
    scalar = "scalar"
    gpsimd = "gpsimd"
    dma = "dma"
    sync = "sync"
    unknown = "unknown"


class reduce_cmd(enum.IntEnum):
    """The accumulator registers' commands (the values are this model's)."""
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class dge_mode(enum.IntEnum):
    """DMA descriptor generation (the model's DMAs take the same time in each); NKI's values, which
    kernels also pass as integers."""
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(enum.IntEnum):
    """Out-of-bounds access (the model refuses any at trace time); NKI's values."""
    error = 0
    skip = 1


class matmul_perf_mode(enum.Enum):
    none = "none"
    double_row = "double_row"


class nc_version(enum.IntEnum):
    gen2 = 2  # Trn1/Inf2
    gen3 = 3  # Trn2
    gen4 = 4  # Trn3


class dma_engine(enum.Enum):
    dma = "dma"
    gpsimd_dma = "gpsimd_dma"
