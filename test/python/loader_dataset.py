"""A map-style dataset whose items run clops, for the DataLoader tests of test_fork.py (docs/python.md,
"DataLoader workers"). Its own module, importing only NumPy and clops: spawn-started workers import it to
unpickle the dataset (a class of the test module would make them import pytest's conftest too)."""
import numpy as np

import clops

SHAPE = (1, 8, 6, 10)


def item_input(i):
    """The input of item i (the parent computes the reference from the same)."""
    return np.random.default_rng(i).random(SHAPE, dtype=np.float32)


class Upscale:
    """Item i: clops.depth_to_space of item_input(i), block 2, on `device`, and the worker's pid."""

    def __init__(self, device, n=8):
        self.device, self.n = device, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import os
        return clops.depth_to_space(item_input(i), 2, device=self.device)[0], os.getpid()
