"""nki.compiler: the configuration objects @nki.jit takes (compile_config=, specialization_config=).
This model compiles nothing (the kernel is traced into its Program), so they are accepted and kept."""


class _Config:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"


class CompileConfig(_Config):
    """Per-kernel compile options (accepted; they change nothing the model runs)."""


class SpecializationConfig(_Config):
    """Per-kernel specialization options (accepted; the kernel is traced by Python as NKI 0.7 does)."""


class AddressRotation(_Config):
    """Whether the backend may rotate an allocation's address (accepted)."""
