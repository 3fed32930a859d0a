/* aot_compile.c - a stand-in for a vendor's offline compiler, for test_aot.sh:
 * builds programs from source files with given options on one OpenCL device and
 * writes each device binary (clGetProgramInfo CL_PROGRAM_BINARIES). It uses
 * OpenCL only, not clops.
 *
 *   aot_compile DEVICE_INDEX LIST
 *
 * DEVICE_INDEX counts every platform's devices in order (as `clops devices`);
 * each line of LIST is "SOURCE_FILE<TAB>BINARY_FILE<TAB>BUILD_OPTIONS". */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1)) &&
        fread(buf, 1, (size_t)size, f) == (size_t)size) {
        buf[size] = '\0';
        *len = (size_t)size;
    } else {
        free(buf);
        buf = NULL;
    }
    if (f) fclose(f);
    return buf;
}

static cl_device_id find_device(unsigned index)
{
    cl_platform_id platforms[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS) return NULL;
    for (cl_uint p = 0; p < np; p++) {
        cl_device_id devices[64];
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 64, devices, &nd) != CL_SUCCESS) continue;
        if (index < nd) return devices[index];
        index -= nd;
    }
    return NULL;
}

/* Builds one program and writes its binary; 0 or 1. */
static int compile(cl_context ctx, cl_device_id dev, const char *src_path, const char *bin_path, const char *options)
{
    size_t len;
    char *src = read_all(src_path, &len);
    if (!src) {
        fprintf(stderr, "aot_compile: cannot read %s\n", src_path);
        return 1;
    }
    cl_int err;
    const char *strings[1] = {src};
    cl_program prog = clCreateProgramWithSource(ctx, 1, strings, &len, &err);
    free(src);
    if (!prog) return fprintf(stderr, "aot_compile: clCreateProgramWithSource: %d\n", err), 1;
    err = clBuildProgram(prog, 1, &dev, options, NULL, NULL);
    size_t size = 0;
    unsigned char *bin = NULL;
    if (err == CL_SUCCESS) err = clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    if (err == CL_SUCCESS && (!size || !(bin = malloc(size)))) err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS) err = clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
    clReleaseProgram(prog);
    FILE *out = err == CL_SUCCESS ? fopen(bin_path, "wb") : NULL;
    const int ok = out && fwrite(bin, 1, size, out) == size;
    if (out && fclose(out) != 0) err = CL_INVALID_VALUE;
    free(bin);
    if (!ok || err != CL_SUCCESS) {
        fprintf(stderr, "aot_compile: %s with \"%s\": error %d\n", src_path, options, err);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: aot_compile DEVICE_INDEX LIST\n", stderr);
        return 2;
    }
    cl_device_id dev = find_device((unsigned)strtoul(argv[1], NULL, 10));
    cl_int err;
    cl_context ctx = dev ? clCreateContext(NULL, 1, &dev, NULL, NULL, &err) : NULL;
    FILE *list = fopen(argv[2], "r");
    if (!ctx || !list) {
        fprintf(stderr, "aot_compile: no device %s or no list %s\n", argv[1], argv[2]);
        return 1;
    }
    char line[4096];
    int failed = 0, built = 0;
    while (fgets(line, sizeof line, list)) {
        line[strcspn(line, "\n")] = '\0';
        char *bin = strchr(line, '\t'), *options = bin ? strchr(bin + 1, '\t') : NULL;
        if (!options) {
            fprintf(stderr, "aot_compile: bad list line: %s\n", line);
            failed++;
            continue;
        }
        *bin++ = '\0', *options++ = '\0';
        failed += compile(ctx, dev, line, bin, options);
        built++;
    }
    fclose(list);
    clReleaseContext(ctx);
    printf("aot_compile: %d programs built, %d failed\n", built - failed, failed);
    return failed ? 1 : 0;
}
