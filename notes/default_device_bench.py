# notes/default_device_bench.py - device=None against device="host" and device 0 on NumPy arrays (issue 33, item 1):
# 128 MiB float32, medians of 7 after one warm-up. Run with the package installed (build/venv/bin/python).
import time, numpy as np, clops, os
def med(f, n=7):
    f(); ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return sorted(ts)[n//2]*1e3
x = np.random.default_rng(0).integers(0, 1<<30, 32*1024*1024, dtype=np.int64).view(np.float32)[:32*1024*1024].reshape(1, 64, 512, 1024).copy()  # 128 MiB float32
print("shape", x.shape, x.nbytes>>20, "MiB, load", os.getloadavg()[0])
for name, dev in (("default (device=None)", None), ("host", "host"), ("device 0 (PoCL)", 0)):
    print(f"DepthToSpace b2 DCR, {name}: {med(lambda: clops.depth_to_space(x, 2, device=dev)):.1f} ms")
# MaxUnpooling of a 2x2/2 pool: argmax positions in each window
p = x[:, :, ::2, ::2].copy()
H, W = x.shape[2], x.shape[3]
hh, ww = np.meshgrid(np.arange(0, H, 2), np.arange(0, W, 2), indexing="ij")
idx = np.broadcast_to((hh * W + ww + 1)[None, None], p.shape).astype(np.int64).copy()
for name, dev in (("default (device=None)", None), ("host", "host"), ("device 0 (PoCL)", 0)):
    print(f"MaxUnpooling 2x2 per-plane, {name}: {med(lambda: clops.max_unpooling(p, idx, x.shape, 'per-plane', device=dev)):.1f} ms")
