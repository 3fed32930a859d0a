/*
 * bench_report.c - `clops bench`'s output: the table rows and latency table on
 * stdout, or one JSON document (bench_internal.h).
 */
#include "bench_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double gbps(uint64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0;
}

static double best_copy_gbps(const bench_result *r)
{
    const double k = gbps(2 * r->cfg.copy_bytes, r->ck_s), b = gbps(2 * r->cfg.copy_bytes, r->cb_s);
    return k > b ? k : b;
}

static void shape_str(char *buf, size_t n, const uint32_t s[4])
{
    snprintf(buf, n, "%ux%ux%ux%u", s[0], s[1], s[2], s[3]);
}

/* "96 B", "64.0 KiB", "16.0 MiB". */
static void human_bytes(char *buf, size_t n, uint64_t bytes)
{
    if (bytes < 1024) snprintf(buf, n, "%llu B", (unsigned long long)bytes);
    else if (bytes < (1u << 20)) snprintf(buf, n, "%.1f KiB", (double)bytes / 1024.0);
    else snprintf(buf, n, "%.1f MiB", (double)bytes / MIB);
}

void print_table_header(bool host)
{
    printf("%-12s %-12s %5s %5s %-16s %10s %10s %9s %9s %9s %6s\n", "op", "order", "width", "block", "input shape",
           "size", "moved", "op GB/s", host ? "memcpy" : "copy-kern", host ? "-" : "copyBuf", "ratio");
}

void print_row(const bench_result *r, bool host)
{
    const bench_config *c = &r->cfg;
    char shape[48], block[8], ck[16], cb[16];
    shape_str(shape, sizeof shape, c->in);
    snprintf(block, sizeof block, c->block ? "%u" : "-", c->block);
    const uint64_t copy_moved = 2 * c->copy_bytes;
    snprintf(ck, sizeof ck, "%.3f", gbps(copy_moved, r->ck_s));
    snprintf(cb, sizeof cb, host ? "-" : "%.3f", gbps(copy_moved, r->cb_s));
    char size[24], moved[24];
    human_bytes(size, sizeof size, c->in_bytes > c->out_bytes ? c->in_bytes : c->out_bytes);
    human_bytes(moved, sizeof moved, c->moved);
    const double best = best_copy_gbps(r), opg = gbps(c->moved, r->op_s);
    printf("%-12s %-12s %5u %5s %-16s %10s %10s %9.3f %9s %9s %6.2f%s\n", op_names[c->op], variant_name(c),
           c->width, block, shape, size, moved, opg, ck, cb,
           best > 0 ? opg / best : 0.0, r->verified < 0 ? "  WRONG RESULT" : r->op_wall && !host ? " *" : "");
    fflush(stdout);
}

void print_latency_table(const latency_result *l, size_t n, bool host)
{
    printf("\n# latency, specification-sized tensors (FLOAT32, b=2; MaxUnpooling INT64 indices), medians of %u\n",
           n ? l[0].reps : 0);
    if (host) {
        printf("%-12s %-18s %12s %14s\n", "op", "what", "op wall us", "memcpy wall us");
        for (size_t i = 0; i < n; i++)
            printf("%-12s %-18s %12.2f %14.2f\n", op_names[l[i].op], l[i].what, 1e6 * l[i].op_wall_s,
                   1e6 * l[i].empty_wall_s);
        return;
    }
    printf("%-12s %-18s %14s %14s %12s %14s %10s\n", "op", "what", "op profiled us", "empty prof. us", "op wall us",
           "empty wall us", "wall ratio");
    for (size_t i = 0; i < n; i++) {
        char prof[32];
        snprintf(prof, sizeof prof, l[i].op_profiled_s > 0 ? "%.2f" : "-", 1e6 * l[i].op_profiled_s);
        printf("%-12s %-18s %14s %14.2f %12.2f %14.2f %10.2f\n", op_names[l[i].op], l[i].what, prof,
               1e6 * l[i].empty_profiled_s, 1e6 * l[i].op_wall_s, 1e6 * l[i].empty_wall_s,
               l[i].empty_wall_s > 0 ? l[i].op_wall_s / l[i].empty_wall_s : 0.0);
    }
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') printf("\\%c", ch);
        else if (ch < 0x20) printf("\\u%04x", ch);
        else putchar(ch);
    }
    putchar('"');
}

static void json_shape(const char *key, const uint32_t s[4])
{
    printf("\"%s\": [%u, %u, %u, %u]", key, s[0], s[1], s[2], s[3]);
}

/* A number, or null for "not measured". */
static void json_num(const char *key, double v, bool present)
{
    if (present) printf("\"%s\": %.9g", key, v);
    else printf("\"%s\": null", key);
}

void print_json(const bench_args *a, bool host, const cl_env *e, const bench_result *res, size_t nres,
                       const latency_result *lat, size_t nlat, double elapsed)
{
    printf("{\n  \"tool\": \"clops bench\",\n  \"clops_version\": ");
    json_string(clops_version_string());
    printf(",\n  \"device\": {\"backend\": \"%s\", \"name\": ", host ? "host" : "opencl");
    json_string(host ? "host" : e->info.device_name);
    printf(", \"platform\": ");
    json_string(host ? "" : e->info.platform_name);
    printf(", \"version\": ");
    json_string(host ? "" : e->info.device_version);
    printf(", \"index\": ");
    if (host) printf("null");
    else printf("%u", e->info.index);
    printf("},\n  \"reps\": %u,\n  \"reps_below_1MiB_moved\": %u,\n  \"elapsed_seconds\": %.3f,\n", a->reps,
           3 * a->reps, elapsed);
    printf("  \"method\": {\"bytes\": \"read + written: input + output; MaxUnpooling input + indices + output; "
           "copies 2 x copy_bytes\", \"timing\": \"%s\", \"baselines\": \"%s\", \"statistic\": \"median of "
           "interleaved repetitions after one warm-up of each\", \"ratio\": \"op GB/s / best baseline GB/s\", "
           "\"op_wall_seconds\": \"wall clock of execute + clFinish in the same runs\", \"execution\": \"repeated: one "
           "operator run again and again; first: a fresh operator per repetition, its first execution timed "
           "(creation untimed)\"},\n",
           host ? "wall clock around clops_operator_execute_host and memcpy"
                : "profiled: OpenCL profiling (START..END) of the event from clops_operator_execute and of each "
                  "baseline's command; wall (MaxUnpooling: several commands): wall clock of "
                  "execute + clFinish, and of each baseline's enqueue + clFinish",
           host ? "memcpy"
                : "bench_copy kernel (uint4, " STR(COPY_PER_ITEM) " per work-item: consecutive on CPU devices, "
                  "neighbouring work-items adjacent elsewhere) and clEnqueueCopyBuffer");
    printf("  \"results\": [");
    for (size_t i = 0; i < nres; i++) {
        const bench_result *r = &res[i];
        const bench_config *c = &r->cfg;
        const double opg = gbps(c->moved, r->op_s), best = best_copy_gbps(r);
        printf("%s\n    {\"op\": \"%s\", \"op_short\": \"%s\", ", i ? "," : "", op_names[c->op], op_short[c->op]);
        if (c->op == BENCH_UNPOOL)
            printf("\"order\": null, \"index_type\": \"%s\", \"indices\": \"%s\", \"block\": null, ",
                   clops_data_type_name(c->index_type), c->variant & UNPOOL_SCATTERED ? "scattered" : c->variant & UNPOOL_OVERLAP ? "overlapping" : "pooling");
        else
            printf("\"order\": \"%s\", \"index_type\": null, \"block\": %u, ", variant_name(c), c->block);
        printf("\"width\": %u, \"data_type\": \"%s\", \"size_requested\": ", c->width, clops_data_type_name(c->type));
        if (c->fixed) printf("null, ");
        else if (c->target) printf("%llu, ", (unsigned long long)c->target);
        else printf("\"spec\", ");
        printf("\"execution\": \"%s\", ", c->first ? "first" : "repeated");
        json_shape("input_shape", c->in);
        printf(", ");
        if (c->op == BENCH_UNPOOL) json_shape("indices_shape", c->in);
        else printf("\"indices_shape\": null");
        printf(", ");
        json_shape("output_shape", c->out);
        printf(",\n     \"input_bytes\": %llu, \"indices_bytes\": %llu, \"output_bytes\": %llu, \"bytes_moved\": %llu, "
               "\"copy_bytes\": %llu, \"reps\": %u, \"timing\": \"%s\",\n     ",
               (unsigned long long)c->in_bytes, (unsigned long long)c->idx_bytes, (unsigned long long)c->out_bytes,
               (unsigned long long)c->moved, (unsigned long long)c->copy_bytes, r->reps,
               r->op_wall ? "wall" : "profiled");
        json_num("op_seconds", r->op_s, true);
        printf(", ");
        json_num("op_seconds_min", r->op_min_s, true);
        printf(", ");
        json_num("op_seconds_max", r->op_max_s, true);
        printf(", ");
        json_num("op_gbps", opg, true);
        printf(", ");
        json_num("op_wall_seconds", r->op_wall_s, true);
        printf(", ");
        json_num("op_wall_gbps", gbps(c->moved, r->op_wall_s), true);
        printf(",\n     ");
        json_num("copy_kernel_gbps", gbps(2 * c->copy_bytes, r->ck_s), !host);
        printf(", ");
        json_num("copy_buffer_gbps", gbps(2 * c->copy_bytes, r->cb_s), !host);
        printf(", ");
        json_num("memcpy_gbps", gbps(2 * c->copy_bytes, r->ck_s), host);
        printf(", ");
        json_num("best_copy_gbps", best, true);
        printf(", ");
        json_num("ratio", best > 0 ? opg / best : 0, best > 0);
        printf(", \"verified\": %s}", r->verified > 0 ? "true" : r->verified < 0 ? "false" : "null");
    }
    printf("\n  ],\n  \"latency\": [");
    for (size_t i = 0; i < nlat; i++) {
        const latency_result *l = &lat[i];
        printf("%s\n    {\"op\": \"%s\", \"what\": ", i ? "," : "", op_names[l->op]);
        json_string(l->what);
        printf(", \"reps\": %u, ", l->reps);
        json_num("op_profiled_seconds", l->op_profiled_s, l->op_profiled_s > 0);
        printf(", ");
        json_num("op_wall_seconds", l->op_wall_s, true);
        printf(", ");
        json_num("empty_kernel_profiled_seconds", l->empty_profiled_s, !host);
        printf(", ");
        json_num(host ? "memcpy_wall_seconds" : "empty_kernel_wall_seconds", l->empty_wall_s, true);
        printf("}");
    }
    printf("\n  ]\n}\n");
}

