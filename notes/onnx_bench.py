"""Time per run of clops.onnx.InferenceSession against plain onnxruntime.InferenceSession on the models of
test/python/test_onnx_models.py (ESPCN-like, SegNet-like), same feed, same process, interleaved: each
round runs every session once, in turn, and the medians over the rounds are printed (docs/onnx.md).

    PYTHONPATH=python CLOPS_LIBRARY=build/libclops.so python notes/onnx_bench.py [--rounds 15] [--device host]

(or with the package installed: python notes/onnx_bench.py). Also checks that the outputs are bit-exact.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python"))
from test_onnx_models import espcn, inputs, segnet  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--device", default="host", help='clops device: "host", an index, or "default"')
    ap.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0: its default)")
    args = ap.parse_args()
    import onnxruntime as ort
    import clops.onnx
    device = None if args.device == "default" else int(args.device) if args.device.isdigit() else args.device
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    kw = dict(sess_options=opts, providers=["CPUExecutionProvider"])
    print(f"onnxruntime {ort.__version__}, clops {clops.__version__} (device {args.device}), "
          f"{os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.1f}")
    print(f"{'model':<44} {'ORT ms':>9} {'clops.onnx ms':>14} {'ratio':>6}")
    for name, model in (("ESPCN x3, (1,3,180,320) -> (1,3,540,960)", espcn()),
                        ("SegNet 2 levels, (2,3,181,241), 64 channels", segnet())):
        feed = inputs(model)
        plain = ort.InferenceSession(model.SerializeToString(), **kw)
        mine = clops.onnx.InferenceSession(model, device=device, **kw)
        for a, b in zip(plain.run(None, feed), mine.run(None, feed)):  # and a warm-up of each
            assert a.shape == b.shape and a.tobytes() == b.tobytes(), f"{name}: outputs differ"
        times = {"ort": [], "clops": []}
        for _ in range(args.rounds):
            for key, sess in (("ort", plain), ("clops", mine)):
                t = time.perf_counter()
                sess.run(None, feed)
                times[key].append(time.perf_counter() - t)
        o, c = (np.median(times[k]) * 1e3 for k in ("ort", "clops"))
        print(f"{name:<44} {o:9.1f} {c:14.1f} {c / o:6.2f}")
    print(f"load average after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
