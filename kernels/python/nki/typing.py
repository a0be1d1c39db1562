"""nki.typing: the annotations kernels may carry (accepted, not checked): `a: nt.tensor[128, 512]`."""
from neuronxcc.nki.typing import mutable_tensor, scalar, tensor  # noqa: F401  (the same annotations)
