#!/usr/bin/env python3
"""Writes the .npy fixtures in this directory. Run once; the outputs are committed.

Needs only the Python standard library (no numpy): the files are written byte
for byte as numpy.save() writes them (format 1.0, header padded to 64 bytes).
The expected outputs are typed in from the specification's published examples
(../../../shared/spec/dml_depth_to_space1.txt, onnx_depth_to_space.txt), not
computed, so they check the operators independently.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def header(descr, shape, fortran):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, 'True' if fortran else 'False', repr(tuple(shape)))
    if shape:
        d += ' ' * (21 - len(repr(shape[-1 if fortran else 0])))
    raw = d.encode('latin1')
    hlen = len(raw) + 1
    pad = 64 - ((6 + 2 + 2 + hlen) % 64)
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', hlen + pad) + raw + b' ' * pad + b'\n'


def flat(nested):
    if isinstance(nested, list):
        out = []
        for x in nested:
            out.extend(flat(x))
        return out
    return [nested]


def c_to_f(values, shape):
    """Reorders a C-order flat list into Fortran order."""
    n = len(values)
    out = [None] * n
    for ci in range(n):
        idx, rem = [], ci
        for d in reversed(shape):
            idx.append(rem % d)
            rem //= d
        idx.reverse()
        fi, mul = 0, 1
        for k, d in enumerate(shape):
            fi += idx[k] * mul
            mul *= d
        out[fi] = values[ci]
    return out


def save(name, descr, fmt, shape, values, fortran=False):
    if fortran:
        values = c_to_f(values, shape)
    n = 1
    for d in shape:
        n *= d
    assert len(values) == n, (name, len(values), n)
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(header(descr, list(shape), fortran))
        f.write(struct.pack('<%d%s' % (n, fmt), *values))


DML_IN = [[[[0, 1, 2], [3, 4, 5]], [[9, 10, 11], [12, 13, 14]],
           [[18, 19, 20], [21, 22, 23]], [[27, 28, 29], [30, 31, 32]],
           [[36, 37, 38], [39, 40, 41]], [[45, 46, 47], [48, 49, 50]],
           [[54, 55, 56], [57, 58, 59]], [[63, 64, 65], [66, 67, 68]]]]
DCR_OUT = [[[[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56],
             [3, 21, 4, 22, 5, 23], [39, 57, 40, 58, 41, 59]],
            [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65],
             [12, 30, 13, 31, 14, 32], [48, 66, 49, 67, 50, 68]]]]
CRD_OUT = [[[[0, 9, 1, 10, 2, 11], [18, 27, 19, 28, 20, 29],
             [3, 12, 4, 13, 5, 14], [21, 30, 22, 31, 23, 32]],
            [[36, 45, 37, 46, 38, 47], [54, 63, 55, 64, 56, 65],
             [39, 48, 40, 49, 41, 50], [57, 66, 58, 67, 59, 68]]]]

# DirectML DEPTH_TO_SPACE1 examples (UINT32) and SpaceToDepth back.
save('dml_input_u32.npy', '<u4', 'I', (1, 8, 2, 3), flat(DML_IN))
save('dml_input_u32_fortran.npy', '<u4', 'I', (1, 8, 2, 3), flat(DML_IN), fortran=True)
save('dml_d2s_dcr_u32.npy', '<u4', 'I', (1, 2, 4, 6), flat(DCR_OUT))
save('dml_d2s_crd_u32.npy', '<u4', 'I', (1, 2, 4, 6), flat(CRD_OUT))
save('dml_d2s_dcr_u32_fortran.npy', '<u4', 'I', (1, 2, 4, 6), flat(DCR_OUT), fortran=True)

# ONNX DepthToSpace examples (float32, same values).
save('onnx_input_f32.npy', '<f4', 'f', (1, 8, 2, 3), [float(v) for v in flat(DML_IN)])
save('onnx_d2s_dcr_f32.npy', '<f4', 'f', (1, 2, 4, 6), [float(v) for v in flat(DCR_OUT)])
save('onnx_d2s_crd_f32.npy', '<f4', 'f', (1, 2, 4, 6), [float(v) for v in flat(CRD_OUT)])

# MaxUnpooling: a 2x2/stride-2 max pool of two 4x4 channels, undone. Indices are
# flat over the whole 1x2x4x4 output (channel 1 starts at 16), as DirectML and ONNX.
UNPOOL_X = [5.0, 6.0, 7.0, 8.0, 1.5, -2.0, 3.25, 4.0]
UNPOOL_I = [1, 7, 8, 15, 16, 22, 29, 26]
UNPOOL_Y = [0.0, 5.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 6.0,
            7.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 8.0,
            1.5, 0.0, 0.0, 0.0,
            0.0, 0.0, -2.0, 0.0,
            0.0, 0.0, 4.0, 0.0,
            0.0, 3.25, 0.0, 0.0]
save('unpool_input_f32.npy', '<f4', 'f', (1, 2, 2, 2), UNPOOL_X)
save('unpool_indices_i64.npy', '<i8', 'q', (1, 2, 2, 2), UNPOOL_I)
save('unpool_indices_u32.npy', '<u4', 'I', (1, 2, 2, 2), UNPOOL_I)
save('unpool_indices_bad_i64.npy', '<i8', 'q', (1, 2, 2, 2), UNPOOL_I[:7] + [32])
save('unpool_expected_f32.npy', '<f4', 'f', (1, 2, 4, 4), UNPOOL_Y)

# MaxUnpooling with PyTorch's per-plane indices (issue 23): what
# torch.nn.functional.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
# returns for a float32 x of shape (2, 3, 7, 6), then max_unpool2d's output
# (2, 3, 7, 6). The pool is computed below as PyTorch's CPU kernel does it
# (aten/src/ATen/native/cpu/MaxPoolKernel.cpp: padding never wins, the window is
# scanned row by row and a value replaces the maximum only if greater, so ties
# keep the first; the index is h * W + w within the (n, c) plane), and, when
# torch imports (Debian's python3-torch: /usr/bin/python3 make_fixtures.py),
# checked against torch's own max_pool2d and max_unpool2d; the committed files
# were written that way, with torch 1.13. Values are small integers, so
# overlapping windows often share a maximum and name the same element. The flat
# file holds the same indices plus (n * C + c) * H * W, as DirectML and ONNX
# count them.
def torch_max_pool2d(x, shape, k, s, pad):
    n_, c_, h_, w_ = shape
    ho = (h_ + 2 * pad - k) // s + 1
    wo = (w_ + 2 * pad - k) // s + 1
    vals, idx = [], []
    for plane in range(n_ * c_):
        for oh in range(ho):
            for ow in range(wo):
                best, arg = None, None
                for ih in range(oh * s - pad, oh * s - pad + k):
                    for iw in range(ow * s - pad, ow * s - pad + k):
                        if 0 <= ih < h_ and 0 <= iw < w_:
                            v = x[plane * h_ * w_ + ih * w_ + iw]
                            if best is None or v > best:
                                best, arg = v, ih * w_ + iw
                vals.append(best)
                idx.append(arg)
    return vals, idx, (n_, c_, ho, wo)


def unpool_per_plane(vals, idx, pooled, out_hw):
    plane_in = pooled[2] * pooled[3]
    out = [0.0] * (pooled[0] * pooled[1] * out_hw)
    for k, (v, i) in enumerate(zip(vals, idx)):
        out[(k // plane_in) * out_hw + i] = v  # in input order: the last one wins
    return out


PT_SHAPE = (2, 3, 7, 6)
_seed = [12345]


def _next():
    _seed[0] = (_seed[0] * 1103515245 + 12345) % (1 << 31)
    return _seed[0] >> 16


PT_X = [float(_next() % 7) - 2.0 for _ in range(2 * 3 * 7 * 6)]
PT_V, PT_I, PT_POOLED = torch_max_pool2d(PT_X, PT_SHAPE, 3, 2, 1)
PT_PLANE = PT_POOLED[2] * PT_POOLED[3]
PT_FLAT = [i + (k // PT_PLANE) * 7 * 6 for k, i in enumerate(PT_I)]
PT_Y = unpool_per_plane(PT_V, PT_I, PT_POOLED, 7 * 6)
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    tx = torch.tensor(PT_X, dtype=torch.float32).reshape(PT_SHAPE)
    tv, ti = torch.nn.functional.max_pool2d(tx, 3, stride=2, padding=1, return_indices=True)
    ty = torch.nn.functional.max_unpool2d(tv, ti, 3, stride=2, padding=1, output_size=PT_SHAPE[2:])
    assert tuple(ti.shape) == PT_POOLED, ti.shape
    assert ti.flatten().tolist() == PT_I, 'torch max_pool2d indices differ'
    assert tv.flatten().tolist() == PT_V, 'torch max_pool2d values differ'
    assert ty.flatten().tolist() == PT_Y, 'torch max_unpool2d differs'
    PT_V, PT_I, PT_Y = tv.flatten().tolist(), ti.flatten().tolist(), ty.flatten().tolist()
    print('checked against torch', torch.__version__)
save('torch_pool_values_f32.npy', '<f4', 'f', PT_POOLED, PT_V)
save('torch_pool_indices_i64.npy', '<i8', 'q', PT_POOLED, PT_I)
save('torch_pool_indices_flat_i64.npy', '<i8', 'q', PT_POOLED, PT_FLAT)
save('torch_unpool_expected_f32.npy', '<f4', 'f', PT_SHAPE, PT_Y)

# ONNX's node test test_maxunpool_export_with_output_shape (issue 33, item 7): X (1,1,2,2) = [[5,6],[7,8]],
# I = [[5,7],[13,15]], kernel 2x2, strides 2, output_shape (1,1,5,5). Two readings of the same indices:
# - ONNX Runtime's, and clops's: I is flat over the given (1,1,5,5) output, so 5, 7, 13 and 15 are
#   (h, w) = (1,0), (1,2), (2,3), (3,0) of the 5x5 plane;
# - ONNX's reference data: I is flat over the (1,1,4,4) output that kernel and strides give without
#   output_shape ((2-1)*2+2 = 4), so (1,1), (1,3), (3,1), (3,3), and that 4x4 result sits in the top-left
#   corner of the 5x5 output, its last row and column zero.
ONNX_UNPOOL_X = [5.0, 6.0, 7.0, 8.0]
ONNX_UNPOOL_I = [5, 7, 13, 15]
ONNX_UNPOOL_ORT = [0.0] * 25
ONNX_UNPOOL_REF = [0.0] * 25
for v, i in zip(ONNX_UNPOOL_X, ONNX_UNPOOL_I):
    ONNX_UNPOOL_ORT[i] = v                      # flat into 5x5
    ONNX_UNPOOL_REF[(i // 4) * 5 + i % 4] = v   # flat into 4x4, placed at the same (h, w) of 5x5
assert ONNX_UNPOOL_REF == flat([[0, 0, 0, 0, 0], [0, 5, 0, 6, 0], [0, 0, 0, 0, 0], [0, 7, 0, 8, 0],
                                [0, 0, 0, 0, 0]])  # as onnx/backend/test/case/node/maxunpool.py types it
save('onnx_unpool_input_f32.npy', '<f4', 'f', (1, 1, 2, 2), ONNX_UNPOOL_X)
save('onnx_unpool_indices_i64.npy', '<i8', 'q', (1, 1, 2, 2), ONNX_UNPOOL_I)
save('onnx_unpool_ort_f32.npy', '<f4', 'f', (1, 1, 5, 5), ONNX_UNPOOL_ORT)
save('onnx_unpool_onnx_reference_f32.npy', '<f4', 'f', (1, 1, 5, 5), ONNX_UNPOOL_REF)
