"""The torch of the PyTorch tests, and their helpers. Where torch cannot be imported the importing test
module skips, except under CLOPS_REQUIRE_TORCH=1 (CI: .ci/run installs python3-torch), where that is an
error: the comparisons must run, never skip."""
import os

import numpy as np
import pytest

from conftest import random_array

if os.environ.get("CLOPS_REQUIRE_TORCH") == "1":
    import torch
else:
    torch = pytest.importorskip("torch")
F = torch.nn.functional


def random_tensor(shape, dtype, seed=0):
    """Random bits of a torch dtype (NaNs with payloads, -0.0, denormals for the floats; bfloat16 too)."""
    if dtype is torch.bfloat16:
        return torch.from_numpy(random_array(shape, np.int16, seed)).view(torch.bfloat16)
    return torch.from_numpy(random_array(shape, torch.empty(0, dtype=dtype).numpy().dtype, seed))


def same_tensor(a, b):
    """Same type, dtype, shape and bits (NaN payloads included; any strides)."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return False
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    a, b = a.detach().contiguous().reshape(-1), b.detach().contiguous().reshape(-1)
    if a.dtype.is_floating_point and a.element_size() == 2:
        a, b = a.view(torch.int16), b.view(torch.int16)
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()
