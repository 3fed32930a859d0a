#!/bin/sh
# demo.sh - runs the specification's examples through the clops CLI where `clops run`
# runs by default (CLOPS_DEVICE if set: "host" or an index from `clops devices`; else
# the default OpenCL device, or the host backend when that device is a CPU), says
# which, prints every tensor, and checks each output byte for byte (cmp) against the
# expected .npy in test/data/. Exits 0 when all match, 1 on any mismatch or
# failure, 2 when the CLI has not been built (`cmake --build build --target clops_cli`
# builds the CLI alone, as tools/run.sh demo does).
#
#   tools/scripts/demo.sh [BUILD_DIR]        (default: build, next to tools/)
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-"$ROOT/build"}
CLOPS="$BUILD/bin/clops"
DATA="$ROOT/test/data"

if [ ! -x "$CLOPS" ]; then
    echo "demo.sh: $CLOPS not found; build it first:" >&2
    echo "  cmake -S \"$ROOT\" -B \"$BUILD\" && cmake --build \"$BUILD\"" >&2
    exit 2
fi

OUT=$(mktemp -d "${TMPDIR:-/tmp}/clops-demo.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
trap 'exit 130' INT TERM

total=0
failed=0

# show TITLE FILE: prints a tensor.
show() {
    echo "-- $1"
    "$CLOPS" print "$2"
    echo
}

# example TITLE EXPECTED OUTPUT CLOPS-ARGS...: runs clops, prints OUTPUT and
# compares it with test/data/EXPECTED.
example() {
    title=$1
    expected=$2
    output=$3
    shift 3
    total=$((total + 1))
    echo "== $title"
    echo "\$ clops $*" | sed -e "s|$DATA/|test/data/|g" -e "s|$OUT/||g"
    status=0
    "$CLOPS" "$@" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "FAILED: clops exited with status $status"
        failed=$((failed + 1))
        echo
        return 0
    fi
    "$CLOPS" print "$output"
    if cmp -s "$output" "$DATA/$expected"; then
        echo "ok: identical to test/data/$expected"
    else
        echo "MISMATCH: differs from test/data/$expected"
        failed=$((failed + 1))
    fi
    echo
}

# Where the runs go: the device and backend lines of --verbose, from a first run of the first example.
verbose=$("$CLOPS" run depth-to-space "$DATA/dml_input_u32.npy" "$OUT/where.npy" --block-size 2 --verbose 2>&1 >/dev/null) ||
    true
device=$(printf '%s\n' "$verbose" | sed -n 's/^clops: device: //p')
backend=$(printf '%s\n' "$verbose" | sed -n 's/^clops: backend: //p')
case "$backend" in
    host) where="the host backend (its C kernels)" ;;
    opencl) where="OpenCL device '$device'" ;;
    *) where="no device: the first run failed ($verbose)" ;;
esac
echo "clops demo: the DirectML and ONNX examples on $where"
echo "(\`clops run\`'s default: CLOPS_DEVICE if set, else the default OpenCL device, or the host backend"
echo "when that device is a CPU; set CLOPS_DEVICE=host or CLOPS_DEVICE=N to choose; see '$CLOPS devices')"
echo

show "DirectML input: UINT32, sizes {1, 8, 2, 3}" "$DATA/dml_input_u32.npy"

example "DepthToSpace, block 2, DCR (DirectML example 1)" dml_d2s_dcr_u32.npy "$OUT/d2s_dcr.npy" \
    run depth-to-space "$DATA/dml_input_u32.npy" "$OUT/d2s_dcr.npy" --block-size 2 --order dcr --verbose
example "DepthToSpace, block 2, CRD (DirectML example 2)" dml_d2s_crd_u32.npy "$OUT/d2s_crd.npy" \
    run depth-to-space "$DATA/dml_input_u32.npy" "$OUT/d2s_crd.npy" --block-size 2 --order crd
example "SpaceToDepth DCR of the DCR result gives the input back" dml_input_u32.npy "$OUT/s2d_dcr.npy" \
    run space-to-depth "$OUT/d2s_dcr.npy" "$OUT/s2d_dcr.npy" --block-size 2
example "SpaceToDepth CRD of the CRD result gives the input back" dml_input_u32.npy "$OUT/s2d_crd.npy" \
    run space-to-depth "$OUT/d2s_crd.npy" "$OUT/s2d_crd.npy" --block-size 2 --order crd
example "DepthToSpace of a Fortran-order copy of the input (read through strides)" dml_d2s_dcr_u32.npy \
    "$OUT/d2s_fortran.npy" \
    run depth-to-space "$DATA/dml_input_u32_fortran.npy" "$OUT/d2s_fortran.npy" --block-size 2

example "ONNX DepthToSpace, mode DCR (float32)" onnx_d2s_dcr_f32.npy "$OUT/onnx_dcr.npy" \
    run depth-to-space "$DATA/onnx_input_f32.npy" "$OUT/onnx_dcr.npy" --block-size 2
example "ONNX DepthToSpace, mode CRD (float32)" onnx_d2s_crd_f32.npy "$OUT/onnx_crd.npy" \
    run depth-to-space "$DATA/onnx_input_f32.npy" "$OUT/onnx_crd.npy" --block-size 2 --order crd

show "MaxUnpooling input X: FLOAT32, sizes {1, 2, 2, 2}" "$DATA/unpool_input_f32.npy"
show "MaxUnpooling indices I: INT64, flat over the whole {1, 2, 4, 4} output" "$DATA/unpool_indices_i64.npy"
example "MaxUnpooling into {1, 2, 4, 4}: Y.flat[I.flat[k]] = X.flat[k], zeros elsewhere" \
    unpool_expected_f32.npy "$OUT/unpool.npy" \
    run max-unpooling "$DATA/unpool_input_f32.npy" "$DATA/unpool_indices_i64.npy" "$OUT/unpool.npy" \
    --output-shape 1,2,4,4

# ONNX's test_maxunpool_export_with_output_shape (docs/semantics.md): clops gives ONNX Runtime's
# answer, I flat over the given 5x5 plane; ONNX's reference data reads I over the 4x4 plane that
# kernel 2x2 and strides 2 give, in the 5x5 output's top-left corner.
show "ONNX MaxUnpool test with output_shape: X (1,1,2,2)" "$DATA/onnx_unpool_input_f32.npy"
show "ONNX MaxUnpool test with output_shape: I (kernel 2x2, strides 2)" "$DATA/onnx_unpool_indices_i64.npy"
example "ONNX MaxUnpool into output_shape (1,1,5,5): ONNX Runtime's answer (I flat over the 5x5 output)" \
    onnx_unpool_ort_f32.npy "$OUT/onnx_unpool.npy" \
    run max-unpooling "$DATA/onnx_unpool_input_f32.npy" "$DATA/onnx_unpool_indices_i64.npy" \
    "$OUT/onnx_unpool.npy" --output-shape 1,1,5,5
show "ONNX's reference data for that test, which clops does not give (I read over a 4x4 output)" \
    "$DATA/onnx_unpool_onnx_reference_f32.npy"

if [ "$failed" -ne 0 ]; then
    echo "demo: $failed of $total examples FAILED"
    exit 1
fi
echo "demo: all $total examples match the expected outputs"
