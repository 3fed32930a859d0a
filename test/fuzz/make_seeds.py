#!/usr/bin/env python3
"""make_seeds.py - writes the seed corpora of the fuzz targets (corpus/<target>/).

Pure Python (no NumPy), deterministic; the files it writes are committed, so
this only needs running again when a target's input format changes:

    python3 test/fuzz/make_seeds.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def out(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- fuzz_npy: .npy files ----------------------------------------------------------

def npy(descr, shape, data, fortran=False, version=(1, 0)):
    shape_s = "(" + "".join("%d, " % s for s in shape)[:-2] + ("," if len(shape) == 1 else "") + ")"
    if not shape:
        shape_s = "()"
    head = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False", shape_s)
    len_size = 2 if version[0] == 1 else 4
    pre = 6 + 2 + len_size
    total = pre + len(head) + 1
    pad = (64 - total % 64) % 64
    head = head + " " * pad + "\n"
    length = struct.pack("<H", len(head)) if len_size == 2 else struct.pack("<I", len(head))
    return b"\x93NUMPY" + bytes(version) + length + head.encode("latin1") + data


def npy_seeds():
    for name in ["dml_input_u32.npy", "dml_input_u32_fortran.npy", "unpool_indices_i64.npy", "onnx_input_f32.npy"]:
        with open(os.path.join(DATA, name), "rb") as f:
            out("fuzz_npy", name, f.read())
    out("fuzz_npy", "v2_u8_2x3.npy", npy("|u1", (2, 3), bytes(range(6)), version=(2, 0)))
    out("fuzz_npy", "v3_f2_4.npy", npy("<f2", (4,), struct.pack("<4H", 0x3C00, 0x8000, 0x7E01, 1), version=(3, 0)))
    out("fuzz_npy", "bool_fortran.npy", npy("|b1", (2, 2), bytes([1, 0, 0, 1]), fortran=True))
    out("fuzz_npy", "c16_scalar.npy", npy("<c16", (), struct.pack("<2d", 1.5, -2.0)))
    out("fuzz_npy", "empty_i8.npy", npy("<i8", (0, 3), b""))
    out("fuzz_npy", "u2_bfloat16.npy", npy("<u2", (1, 1, 1, 2), struct.pack("<2H", 0x3F80, 0xC000)))
    out("fuzz_npy", "big_endian.npy", npy(">i4", (1,), b"\0\0\0\1"))
    out("fuzz_npy", "truncated.npy", npy("<f8", (3,), b"\0" * 10))
    out("fuzz_npy", "trailing.npy", npy("<i2", (1,), b"\1\0\2\0"))


# ---- fuzz_validate: descriptors (see the decoder in fuzz_validate.c) ----------------

def validate_seeds():
    F32, U8, F16, C128 = 0, 4, 1, 14  # indices into the target's type table
    I_U32, I_U64, I_I64 = 0, 1, 2

    def sizes_small(s):  # flag byte: bit 4 and bit d make size d a raw u32, else a u8 % 9
        flag = 0x10 | sum(1 << d for d in range(4) if s[d] > 8) if any(v > 8 for v in s) else 0
        body = b"".join(struct.pack("<I", v) if v > 8 else bytes([v]) for v in s)
        return bytes([flag]) + body

    def strides_null():
        return bytes([0])

    def strides_modes(modes, extra=b""):  # mode byte 1, then one byte per dimension (W first)
        return bytes([1] + modes) + extra

    seed = struct.pack("<Q", 0x1234567890ABCDEF)
    # D2S float32 {1,8,2,3} b2 DCR, packed, output by the rule.
    out("fuzz_validate", "d2s_f32_b2_dcr",
        bytes([0, F32]) + sizes_small([1, 8, 2, 3]) + strides_null() + bytes([1 | 2, 1, 0, I_U32])
        + strides_null() + strides_null() + seed)
    # S2D uint8 {1,2,4,6} b2 CRD, output by the rule with padded strides.
    out("fuzz_validate", "s2d_u8_b2_crd_padded",
        bytes([1, U8]) + sizes_small([1, 2, 4, 6]) + strides_null() + bytes([1 | 2, 1, 1, I_U32])
        + strides_null() + strides_modes([1, 2, 1, 1, 1, 1, 1, 1]) + seed)
    # D2S complex128 {2,9,2,2} b3 CRD, broadcast input (zero strides).
    out("fuzz_validate", "d2s_c128_b3_broadcast",
        bytes([0, C128]) + sizes_small([2, 9, 2, 2]) + strides_modes([3, 3, 0, 3]) + bytes([1 | 2, 2, 1, I_U32])
        + strides_null() + strides_null() + seed)
    # MaxUnpooling float16 {1,2,2,2} int64 indices into {1,2,4,4}, some bad indices.
    out("fuzz_validate", "unpool_f16_i64",
        bytes([2, F16]) + sizes_small([1, 2, 2, 2]) + strides_null() + bytes([1 | 2, 1, 0, I_I64])
        + strides_null() + bytes([4, 4]) + strides_null() + seed + bytes([255]))
    # MaxUnpooling uint8 uint64 indices, strided output.
    out("fuzz_validate", "unpool_u8_u64_strided",
        bytes([2, U8]) + sizes_small([1, 1, 3, 3]) + strides_null() + bytes([1 | 2, 1, 0, I_U64])
        + strides_null() + bytes([6, 6]) + strides_modes([1, 1, 1, 2, 1, 1, 1, 1]) + seed + bytes([0]))
    # Sizes near 2^32 (flag byte 0xff: every size raw).
    out("fuzz_validate", "huge_sizes",
        bytes([0, U8, 0xFF]) + struct.pack("<4I", 0xFFFFFFFF, 0xFFFFFFFF, 1, 1) + strides_null()
        + bytes([1 | 2, 1, 0, I_U32]) + strides_null() + strides_null() + seed)
    # Raw strides near 2^64.
    out("fuzz_validate", "raw_strides",
        bytes([0, U8]) + sizes_small([1, 1, 3, 3]) + bytes([1, 4]) + struct.pack("<Q", 1 << 63) + bytes([4])
        + struct.pack("<Q", (1 << 63) + 7) + bytes([0, 0]) + bytes([1 | 2, 1, 0, I_U32]) + strides_null()
        + strides_null() + seed)
    # An unknown operator type and an unknown data type.
    out("fuzz_validate", "bad_types", bytes([3]) + struct.pack("<I", 77) + bytes([250]) + struct.pack("<I", 43))


# ---- fuzz_cache_entry: entries and packs ----------------------------------------------

KEY = (b"clops-cache-format 1\nclops fuzz\ndevice: fuzz\noptions: -DFUZZ\nsource:\n"
       b"kernel void k(void) {}\n")


def fnv1a(h, data):
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def entry(key, payload):
    s = fnv1a(fnv1a(0xCBF29CE484222325, key), payload)
    return b"CLOPSBIN" + struct.pack("<IIQQ", 1, len(key), len(payload), s) + key + payload


def cache_seeds():
    e = entry(KEY, b"\x7fELF binary payload" * 4)
    out("fuzz_cache_entry", "entry_valid", b"\0" + e)
    out("fuzz_cache_entry", "entry_empty_payload", b"\0" + entry(KEY, b""))
    out("fuzz_cache_entry", "entry_truncated", b"\0" + e[:-5])
    out("fuzz_cache_entry", "entry_bad_sum", b"\0" + e[:24] + b"\0" * 8 + e[32:])
    other = entry(b"another key\n", b"payload")
    pack = b"CLOPSPAK" + struct.pack("<Q", 2) + struct.pack("<Q", len(e)) + e + struct.pack("<Q", len(other)) + other
    out("fuzz_cache_entry", "pack_two", b"\1" + pack)
    out("fuzz_cache_entry", "pack_count_too_big", b"\1" + pack[:8] + struct.pack("<Q", 3) + pack[16:])
    out("fuzz_cache_entry", "pack_len_past_end", b"\1" + pack[:16] + struct.pack("<Q", 1 << 62) + e)


# ---- fuzz_cli_args: argument vectors ---------------------------------------------------

def cli_seeds():
    vectors = {
        "d2s": "run\ndepth-to-space\n@0\n@o\n--block-size\n2",
        "d2s_crd_verbose": "run\ndepth-to-space\n@0\n@o\n--block-size=2\n--order\ncrd\n--verbose\n--device\nhost",
        "d2s_fortran": "run\ndepth-to-space\n@1\n@o\n--block-size\n2",
        "s2d": "run\nspace-to-depth\n@7\n@o\n--block-size\n2\n--order=dcr",
        "unpool": "run\nmax-unpooling\n@3\n@4\n@o\n--output-shape\n1,2,4,4",
        "unpool_u32": "run\nmax-unpooling\n@3\n@5\n@o\n--output-shape=1,2,4,4\n--device=host",
        "unpool_bad": "run\nmax-unpooling\n@3\n@6\n@o\n--output-shape\n1,2,4,4",
        "bfloat16": "run\ndepth-to-space\n@2\n@o\n--block-size\n2\n--type\nbfloat16",
        "print": "print\n@2",
        "print_bad": "print\n@8",
        "help": "--help",
        "run_help": "run\n--help",
        "op_help": "run\nmax-unpooling\n-h",
        "cache_path": "cache\npath",
        "cache_list": "cache\nlist",
        "cache_export": "cache\nexport\n@p",
        "cache_import": "cache\nimport\n@4",
        "devices": "devices",
        "version": "--version",
        "double_opt": "run\ndepth-to-space\n@0\n@o\n--block-size\n2\n--block-size\n3",
        "dashdash": "run\ndepth-to-space\n--\n@0\n@o\n--block-size\n2",
    }
    for name, v in vectors.items():
        out("fuzz_cli_args", name, v.encode())


npy_seeds()
validate_seeds()
cache_seeds()
cli_seeds()
