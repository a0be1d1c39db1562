"""pytest setup for the Python front end's tests: run through build/ncore-python (which puts the
build's neuronxcc and ncore on the path); the example kernels (kernels/python/examples) are
imported as modules."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "kernels", "python", "examples")
sys.path.insert(0, EXAMPLES)


@pytest.fixture(autouse=True)
def _options():
    """Every test starts from the default options (rtl backend, trn2, no check)."""
    import ncore
    ncore.set_options(backend=None, config=None, check=None, threads=None, pe_model=None, profile=None,
                      dma_queues=None, verbose=None, quiet=None, waves=None, waves_scope=None, waves_window=None)
    yield
