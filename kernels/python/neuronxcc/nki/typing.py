"""neuronxcc.nki.typing: the annotations kernels may carry (accepted, not checked)."""


class _Annotation:
    def __getitem__(self, item):
        return self


tensor = _Annotation()
mutable_tensor = _Annotation()
scalar = _Annotation()
