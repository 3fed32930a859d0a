"""clops.onnx without its optional packages: importing the module works, making a session raises an
ImportError that names the extra (pip install 'clops[onnx]') and the package missing. The absence is
simulated at the module's own seam (clops.onnx._import), and so is the presence of the others: this runs
whether or not onnx is installed."""
import types

import pytest

import clops.onnx


@pytest.mark.parametrize("absent", [("onnxruntime",), ("onnx",), ("onnx", "onnxruntime")])
def test_missing_packages_name_the_extra(monkeypatch, absent):
    def fake_import(name):
        if name.split(".")[0] in absent:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return types.ModuleType(name)  # present, whether or not it is installed here

    monkeypatch.setattr(clops.onnx, "_import", fake_import)
    with pytest.raises(ImportError) as info:
        clops.onnx.InferenceSession(b"not read: the packages are checked first")
    msg = str(info.value)
    assert "pip install 'clops[onnx]'" in msg
    for name in absent:
        assert f"{name} (No module named '{name}')" in msg
    assert info.value.name == absent[0]
    present = {"onnx", "onnxruntime"} - set(absent)
    for name in present:
        assert f"{name} (" not in msg
