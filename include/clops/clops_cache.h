/** @file
 * clops_cache.h - the on-disk program cache and its pack files, ahead-of-time
 * kernels, and tuning.
 *
 * Part of the API of clops.h, which includes this header; it includes clops.h
 * in turn (for ::clops_context_options, the descriptors and the contexts), so
 * either may be included first.
 */
#ifndef CLOPS_PUBLIC_CACHE_H
#define CLOPS_PUBLIC_CACHE_H

#include "clops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- on-disk program cache ---------------------------------------------------------- */
/** @defgroup cache On-disk program cache
 * Built programs are kept per device in $CLOPS_CACHE_DIR, else $XDG_CACHE_HOME/clops,
 * else ~/.cache/clops. CLOPS_CACHE=off disables it, CLOPS_CACHE=ro only reads it,
 * CLOPS_CACHE_MAX_SIZE (bytes, or with K, M or G) bounds it (default 256M; least
 * recently used entries are evicted). These calls read the same variables; each has
 * a `_with_options` form that takes the settings of a clops_context_options instead
 * (cache_dir, cache, cache_max_bytes; NULL: the defaults and the environment, as the
 * plain call), so a library can maintain the cache of the contexts it made. A bad
 * options value is CLOPS_ERROR_INVALID_SETTING, as for a context; a bad CLOPS_*
 * variable read by a plain call is CLOPS_ERROR_INVALID_SETTING too (a bad
 * CLOPS_DEVICE: CLOPS_ERROR_INVALID_DEVICE_SELECTION).
 *
 * All of them may be called from any thread and by several processes at once:
 * entries are written atomically (a temporary file renamed into place). They
 * block on the file system.
 * @{ */

/** The cache's one-line status, as clops_context_cache_status(), from the
 *  environment. Like a context, it creates the cache directory when the policy
 *  is read-write.
 *  @param[out] buf room for `size` bytes, NUL-terminated (cut to fit); may be NULL.
 *  @param size bytes at `buf`.
 *  @return `buf`. A bad setting gives "off (why)".
 *  @threadsafety Any thread; reads the environment. @blocking The file system. */
CLOPS_API const char *clops_cache_status(char *buf, size_t size);
/** clops_cache_status() with the cache settings of `opts`.
 *  @param opts the settings, or NULL (the defaults and the environment).
 *  @param[out] buf room for `size` bytes; may be NULL.
 *  @param size bytes at `buf`.
 *  @return `buf`.
 *  @threadsafety Any thread; reads the environment when `opts` is NULL.
 *  @blocking The file system. */
CLOPS_API const char *clops_cache_status_with_options(const clops_context_options *opts, char *buf, size_t size);

/** One entry for clops_cache_list_entries(): its file, size, last use (seconds
 *  since the epoch), and the first lines of its key (device and build options),
 *  or NULL for an unreadable entry.
 *  @param user the caller's pointer, as given.
 *  @param file the entry's file name within the cache directory.
 *  @param bytes the file's size.
 *  @param last_used its last use, in seconds since the epoch.
 *  @param key its key, key_len bytes, not NUL-terminated (its first lines name
 *         the device and build options), or NULL for an unreadable entry;
 *         valid during the call only.
 *  @param key_len bytes at `key`. */
typedef void (*clops_cache_entry_fn)(void *user, const char *file, uint64_t bytes, long long last_used,
                                     const char *key, size_t key_len);
/** Visits every entry, least recently used first, calling `fn` on the calling
 *  thread.
 *  @param fn called once per entry.
 *  @param user passed to `fn`.
 *  @param[out] count how many were visited; may be NULL.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `fn` is NULL.
 *  @retval CLOPS_ERROR_CACHE_UNAVAILABLE the cache is off or its directory unusable.
 *  @retval CLOPS_ERROR_CACHE_IO the directory cannot be read.
 *  @retval CLOPS_ERROR_INVALID_SETTING a bad setting.
 *  @threadsafety Any thread; reads the environment. @blocking The file system. */
CLOPS_API clops_status clops_cache_list_entries(clops_cache_entry_fn fn, void *user, size_t *count);
/** clops_cache_list_entries() with the cache settings of `opts`.
 *  @param opts the settings, or NULL.
 *  @param fn called once per entry.
 *  @param user passed to `fn`.
 *  @param[out] count how many were visited; may be NULL.
 *  @return as clops_cache_list_entries().
 *  @threadsafety Any thread; reads the environment when `opts` is NULL.
 *  @blocking The file system. */
CLOPS_API clops_status clops_cache_list_entries_with_options(const clops_context_options *opts,
                                                             clops_cache_entry_fn fn, void *user, size_t *count);
/** Evicts least recently used entries past the size bound.
 *  @param[out] removed how many files were removed; may be NULL.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_CACHE_UNAVAILABLE the cache is off, read-only or its directory unusable.
 *  @retval CLOPS_ERROR_CACHE_IO the directory cannot be read.
 *  @retval CLOPS_ERROR_INVALID_SETTING a bad setting.
 *  @threadsafety Any thread; reads the environment. @blocking The file system. */
CLOPS_API clops_status clops_cache_prune(size_t *removed);
/** clops_cache_prune() with the cache settings (and size bound) of `opts`.
 *  @param opts the settings, or NULL.
 *  @param[out] removed how many files were removed; may be NULL.
 *  @return as clops_cache_prune().
 *  @threadsafety Any thread; reads the environment when `opts` is NULL.
 *  @blocking The file system. */
CLOPS_API clops_status clops_cache_prune_with_options(const clops_context_options *opts, size_t *removed);
/** Removes every entry, and the tuner's lock files that no running tuner holds
 *  (the tuning databases stay).
 *  @param[out] removed how many files were removed; may be NULL.
 *  @return as clops_cache_prune().
 *  @threadsafety Any thread; reads the environment. @blocking The file system. */
CLOPS_API clops_status clops_cache_clear_all(size_t *removed);
/** clops_cache_clear_all() with the cache settings of `opts`.
 *  @param opts the settings, or NULL.
 *  @param[out] removed how many files were removed; may be NULL.
 *  @return as clops_cache_prune().
 *  @threadsafety Any thread; reads the environment when `opts` is NULL.
 *  @blocking The file system. */
CLOPS_API clops_status clops_cache_clear_all_with_options(const clops_context_options *opts, size_t *removed);
/** Writes the cache's valid entries to one pack file, for a device that cannot
 *  compile at run time (an FPGA whose toolchain builds offline): every entry
 *  valid when the export counts them, but one another process removes while
 *  the export runs (a prune), which is left out (and counted, see
 *  clops_cache_export_pack_report_with_options()). A pack holds at most 65,536
 *  entries: a cache of more is refused and nothing is written. A regular file
 *  is written atomically; a pipe or device is written in place.
 *  @param path the pack file to write.
 *  @param[out] count how many entries the pack holds; may be NULL.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `path` is NULL.
 *  @retval CLOPS_ERROR_CACHE_UNAVAILABLE the cache is off or its directory unusable.
 *  @retval CLOPS_ERROR_BAD_PACK the cache holds more than 65,536 valid entries,
 *          more than a pack may hold (trying again does not help; nothing is written).
 *  @retval CLOPS_ERROR_CACHE_IO reading the cache or writing `path` failed
 *          (an entry removed during an export to a pipe or device included), with the reason.
 *  @retval CLOPS_ERROR_INVALID_SETTING a bad setting.
 *  @threadsafety Any thread; reads the environment. @blocking The file system. */
CLOPS_API clops_status clops_cache_export_pack(const char *path, size_t *count);
/** clops_cache_export_pack() with the cache settings of `opts`.
 *  @param opts the settings, or NULL.
 *  @param path the pack file to write.
 *  @param[out] count how many entries the pack holds; may be NULL.
 *  @return as clops_cache_export_pack().
 *  @threadsafety Any thread; reads the environment when `opts` is NULL.
 *  @blocking The file system. */
CLOPS_API clops_status clops_cache_export_pack_with_options(const clops_context_options *opts, const char *path,
                                                            size_t *count);
/** clops_cache_export_pack_with_options(), and also how many entries were left
 *  out: an entry another process removes while the export runs (a prune) is
 *  left out, the pack's count says what it holds, and `*removed` (may be NULL)
 *  counts those left out. A pack written in place (a pipe, a device) has sent
 *  its count first: there such an entry fails the export (CLOPS_ERROR_CACHE_IO,
 *  "try again").
 *  @param opts the settings, or NULL (the defaults and the environment).
 *  @param path the pack file to write.
 *  @param[out] count how many entries the pack holds; may be NULL.
 *  @param[out] removed how many entries were left out; may be NULL.
 *  @return as clops_cache_export_pack() (CLOPS_ERROR_BAD_PACK for a cache of
 *          more entries than a pack may hold, 65,536; nothing is written).
 *  @threadsafety Any thread; reads the environment when `opts` is NULL.
 *  @blocking The file system. */
CLOPS_API clops_status clops_cache_export_pack_report_with_options(const clops_context_options *opts,
                                                                   const char *path, size_t *count,
                                                                   size_t *removed);
/** Checks and installs every entry of a pack file; `*count` (may be NULL) is
 *  how many were installed. As clops_cache_import_pack_report().
 *  @param path the pack file.
 *  @param[out] count how many entries were installed; may be NULL.
 *  @return as clops_cache_import_pack_report().
 *  @threadsafety As clops_cache_import_pack_report(); reads the environment.
 *  @blocking As clops_cache_import_pack_report(). */
CLOPS_API clops_status clops_cache_import_pack(const char *path, size_t *count);

/** What an import did with each entry of a pack. */
typedef struct clops_pack_report {
    size_t entries;      /**< in the pack */
    size_t imported;     /**< installed */
    size_t duplicates;   /**< skipped as duplicates of both kinds: already in the cache, or earlier in
                              the pack (`duplicates - within_pack` were already in the cache) */
    size_t other_device; /**< for a device (or clops version) this machine does not have */
    size_t rejected;     /**< the device refused the binary, or its driver crashed or hung loading it */
    size_t over_limit;   /**< skipped: the cache would exceed CLOPS_CACHE_MAX_SIZE */
    char reason[256 - sizeof(size_t)]; /**< why the first rejected entry was rejected ("" if none
                              was); 256 bytes before `within_pack`, which took its last ones: the struct's
                              size and every other field's offset are unchanged (ABI), and the text is
                              NUL-terminated within it as before */
    size_t within_pack;  /**< of `duplicates`, those whose key an earlier entry of the same pack has
                              (added after 0.1.0; a caller built before it sees the same `duplicates` as ever) */
} clops_pack_report;
/** A transaction. The pack is read entry by entry (never whole) and every
 *  entry's framing and checksum are checked before anything is installed or
 *  copied: a malformed pack installs nothing (CLOPS_ERROR_BAD_PACK); a missing
 *  or unreadable file is CLOPS_ERROR_CACHE_IO with the system's reason.
 *  Entries already in the cache (or earlier in the pack), for a device this
 *  machine does not have (sorted by their keys in a child process) or too
 *  large for the room under CLOPS_CACHE_MAX_SIZE are skipped without being
 *  copied. Each remaining entry is read again, verified unchanged, copied to a
 *  private file in the cache directory, and loaded from that copy on its
 *  device in a child process (a binary that crashes or hangs the driver harms
 *  only the child and is rejected; after 4 such entries the rest are rejected
 *  without being tried). The entries that loaded are installed from the same
 *  copy, atomically, within CLOPS_CACHE_MAX_SIZE: what is installed is exactly
 *  what was checked. If installing fails (a full disk), the entries this
 *  import installed are removed again and CLOPS_ERROR_CACHE_IO says why.
 *  `report` may be NULL. A pack of more than 65,536 entries is
 *  CLOPS_ERROR_BAD_PACK. The _with_options form reads no environment (its
 *  children neither).
 *  @param path the pack file.
 *  @param[out] report what happened to each entry; may be NULL.
 *  @return ::CLOPS_SUCCESS (rejected entries included: see `report`), or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `path` is NULL.
 *  @retval CLOPS_ERROR_CACHE_UNAVAILABLE the cache is off, read-only or its directory unusable.
 *  @retval CLOPS_ERROR_BAD_PACK the pack is malformed, too large, of more than
 *          65,536 entries, not a regular file, or changed between its check and its copy.
 *  @retval CLOPS_ERROR_CACHE_IO the pack cannot be read, no child process can
 *          be started, or installing failed (nothing stays installed).
 *  @retval CLOPS_ERROR_INVALID_SETTING a bad setting (CLOPS_IMPORT_LOAD_TIMEOUT:
 *          whole seconds from 1 to 3600).
 *  @threadsafety Any thread; reads the environment (CLOPS_IMPORT_LOAD_TIMEOUT
 *  too). It forks: the caller's stdio buffers are flushed first (fflush(NULL)),
 *  and the child only loads binaries, then _exits.
 *  @blocking Child processes creating a context on every device, sorting the
 *  entries by device and loading each new one; one that hangs is killed after
 *  CLOPS_IMPORT_LOAD_TIMEOUT seconds (default 120) per entry, and after 4
 *  entries that crashed or hung no more are tried (at most 4 such limits per
 *  import). The file system. */
CLOPS_API clops_status clops_cache_import_pack_report(const char *path, clops_pack_report *report);
/** clops_cache_import_pack_report() with the cache settings of `opts` (the
 *  child's contexts take its disabled capabilities).
 *  @param opts the settings, or NULL (the defaults and the environment).
 *  @param path the pack file.
 *  @param[out] report what happened to each entry; may be NULL.
 *  @return as clops_cache_import_pack_report().
 *  @threadsafety As clops_cache_import_pack_report(), but with `opts` nothing
 *  is read from the environment: an entry's load time limit is then the
 *  default, 120 s.
 *  @blocking As clops_cache_import_pack_report(). */
CLOPS_API clops_status clops_cache_import_pack_report_with_options(const clops_context_options *opts,
                                                                   const char *path, clops_pack_report *report);
/** @} */

/* ---- ahead-of-time kernels ------------------------------------------------------------------ */
/** @defgroup aot Ahead-of-time kernels
 * For devices that load only binaries compiled offline (FPGA flows): list the
 * programs an operator needs on a device, write out their sources, compile them
 * with the vendor's tools, and add the binaries to a pack (docs/cache-and-tuning.md, "Ahead-of-time
 * kernels"). A program is a kernel source file (clops_program_source_text) built with
 * build options.
 * @{ */

/** The portable program's kernel source file, for clops_program_source_text(),
 *  clops_pack_add_binary() and `clops kernels list --portable`: one program whose
 *  kernels run every operator, shape and type (docs/cache-and-tuning.md, "The
 *  portable program"). Its kernels' names all start with "clops_". */
#define CLOPS_PORTABLE_SOURCE "portable.cl"
/** The portable program's build options, the same for every operator: OpenCL C 1.2. */
#define CLOPS_PORTABLE_OPTIONS "-cl-std=CL1.2"

/** Hands clops the application's own build of the portable program: a
 *  cl_program built for the context's device from clops_program_source_text(
 *  CLOPS_PORTABLE_SOURCE) (with CLOPS_PORTABLE_OPTIONS or equivalent), alone or
 *  with the application's own kernels in the same program - an FPGA board's one
 *  image, say. Operators created on `ctx` afterwards take their kernels from it
 *  and build or load no other program (clops_operator_get_info() names the
 *  kernel; the program origin is "in-process"); operators created before keep
 *  their plans. Tensors whose offsets do not fit 32 bits run on the host (under
 *  the fallback policy). The program is retained until the context is freed.
 *  @param ctx an OpenCL context (not the host backend).
 *  @param program built for ctx's device, in ctx's cl_context.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `ctx` or `program` is NULL.
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION `ctx` is the host backend.
 *  @retval CLOPS_ERROR_BUILD_FAILED the program is of another cl_context, is not
 *          built for the device, or lacks one of the portable program's kernels
 *          (the message names it).
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @threadsafety Not while another thread creates operators on `ctx`.
 *  @blocking The driver's answers to program queries. */
CLOPS_API clops_status clops_context_use_program(clops_context *ctx, cl_program program);

/** One program, for clops_operator_programs(): its kernel source file
 *  ("depth_space.cl") and build options.
 *  @param user the caller's pointer, as given.
 *  @param source_name the kernel source file, for clops_program_source_text().
 *  @param build_options the build options; valid during the call only. */
typedef void (*clops_program_fn)(void *user, const char *source_name, const char *build_options);
/** Calls `fn` for each program an operator of `desc` would load (from the disk
 *  cache) or compile on ctx's OpenCL device, in the order it tries them,
 *  building nothing: the specialised programs; past block 16 DepthToSpace and
 *  SpaceToDepth name the portable program (CLOPS_PORTABLE_SOURCE), which such
 *  blocks run (a specialised program's build grows with the block). The portable
 *  program, which runs where a specialised one can be neither loaded nor built,
 *  is otherwise not named: list it alone (`clops kernels list --portable`). Choices that depend on the sizes alone (the chunk
 *  of long rows, 64-bit offsets where the device can hold such a tensor) are
 *  named for every case, so the programs of every size with desc's types, block
 *  size and layout are named, each once. An operator that would run on the host whatever
 *  the binaries (see clops_operator_info) names none.
 *  @param ctx an OpenCL context.
 *  @param desc the operator's descriptor.
 *  @param fn called once per program, on the calling thread.
 *  @param user passed to `fn`.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `ctx`, `desc` or `fn` is NULL.
 *  @retval CLOPS_ERROR_WRONG_BACKEND `ctx` is the host backend.
 *  @retval CLOPS_ERROR_FALLBACK_REFUSED the context's fallback policy is never
 *          (the programs are named first: none counts as available).
 *  @retval other as clops_operator_create() (validation, device limits, ...).
 *  @threadsafety Any thread; other threads' operator creation on `ctx` is unaffected.
 *  @blocking Nothing is compiled or loaded; the driver's queries, and for
 *  MaxUnpooling the creation (and release) of its device buffers. */
CLOPS_API clops_status clops_operator_programs(clops_context *ctx, const clops_operator_desc *desc,
                                               clops_program_fn fn, void *user);
/** The whole source of programs built from `source_name` (the exact text clops
 *  passes to clCreateProgramWithSource), into `buf` as clops_device_string()
 *  does (NUL-terminated, cut to fit; whole length in `*length`). An unknown
 *  name gives CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE.
 *  @param source_name an operator's kernel file, as clops_program_fn names it.
 *  @param[out] buf room for `size` bytes; may be NULL when size is 0.
 *  @param size bytes at `buf`.
 *  @param[out] length the source's whole length; may be NULL.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `source_name` is NULL, or `buf` is NULL with size > 0.
 *  @retval CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE not an operator's kernel file.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @threadsafety Any thread. @blocking Nothing. */
CLOPS_API clops_status clops_program_source_text(const char *source_name, char *buf, size_t size, size_t *length);
/** Adds a device binary of the program (`source_name`, `build_options`) for
 *  device `device_index` of clops_device_list() to the pack file `pack_path`
 *  (created if missing; an entry for the same program and device is replaced;
 *  written atomically). The binary is what clGetProgramInfo
 *  (CL_PROGRAM_BINARIES) gives, or a vendor's offline compiler writes for the
 *  same source and options; it is checked when loaded, not here. `*count` (may
 *  be NULL): the pack's entries afterwards. Adding many binaries: clops_pack_add_binaries(),
 *  of which this is the case of one.
 *  @param pack_path the pack file.
 *  @param device_index the device the binary is for.
 *  @param source_name the program's kernel source file.
 *  @param build_options the program's build options, exactly as clops_program_fn named them.
 *  @param binary the device binary.
 *  @param binary_size bytes at `binary`.
 *  @param[out] count the pack's entries afterwards; may be NULL.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT a pointer argument other than `count` is NULL.
 *  @retval CLOPS_ERROR_BAD_PACK `binary_size` is 0 or too large, the existing
 *          pack is malformed (the message says where), or it holds 65,536 other
 *          entries already, as many as a pack may (nothing is written).
 *  @retval CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE unknown `source_name`.
 *  @retval CLOPS_ERROR_CACHE_IO the pack cannot be read, locked or written (the message says why).
 *  @retval other as clops_context_create_device() (the device's identity is part of the entry).
 *  @threadsafety Any thread; reads the environment. Writers of one pack at
 *  once (threads or processes) wait for each other: each reads, merges and
 *  replaces the pack under a lock ("<pack_path>.lock", removed afterwards), so
 *  every writer's entries stay.
 *  @blocking Creating a context on the device (the driver); the file system. */
CLOPS_API clops_status clops_pack_add_binary(const char *pack_path, unsigned device_index, const char *source_name,
                                             const char *build_options, const void *binary, size_t binary_size,
                                             size_t *count);
/** One device binary for clops_pack_add_binaries(): as the arguments of
 *  clops_pack_add_binary() of the same names. */
typedef struct clops_pack_binary {
    const char *source_name;   /**< the program's kernel source file */
    const char *build_options; /**< its build options, exactly as clops_program_fn named them */
    const void *binary;        /**< the device binary */
    size_t binary_size;        /**< bytes at `binary`: 1 to 1 GiB */
} clops_pack_binary;
/** Adds `n` device binaries for device `device_index` to the pack file
 *  `pack_path` at once, as `n` calls of clops_pack_add_binary() would but with
 *  one context on the device, one read of the old pack and one atomic write
 *  (adding one binary per call rewrites the whole pack each time). An entry
 *  for the same program and device is replaced; of binaries in `binaries` for
 *  one program, the last wins. Every item is checked before the device is
 *  opened; on any failure the pack is left as it was and the message names the
 *  item (`binaries[i]`).
 *  @param pack_path the pack file (created if missing).
 *  @param device_index the device of clops_device_list() the binaries are for.
 *  @param binaries `n` binaries.
 *  @param n how many: 1 to 65,536.
 *  @param[out] count the pack's entries afterwards; may be NULL.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `pack_path` or `binaries` is NULL, or an
 *          item's `source_name`, `build_options` or `binary`.
 *  @retval CLOPS_ERROR_BAD_PACK `n` is 0 or more than 65,536, an item's
 *          `binary_size` is 0 or more than 1 GiB, the existing pack is malformed
 *          (the message says where), or the pack would hold more than 65,536
 *          entries (nothing is written).
 *  @retval CLOPS_ERROR_KERNEL_SOURCE_UNAVAILABLE an item's unknown `source_name`.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @retval CLOPS_ERROR_CACHE_IO the pack cannot be read, locked or written (the message says why).
 *  @retval other as clops_context_create_device() (the device's identity is part of each entry).
 *  @threadsafety Any thread; reads the environment. Writers of one pack at
 *  once (threads or processes) wait for each other: each reads, merges and
 *  replaces the pack under a lock ("<pack_path>.lock", removed afterwards), so
 *  every writer's entries stay.
 *  @blocking Creating a context on the device (the driver); the file system. */
CLOPS_API clops_status clops_pack_add_binaries(const char *pack_path, unsigned device_index,
                                               const clops_pack_binary *binaries, size_t n, size_t *count);

/** Operators of a clops_program_selection (bits of its `ops`). */
enum {
    CLOPS_SELECT_DEPTH_TO_SPACE = 1u, /**< DepthToSpace */
    CLOPS_SELECT_SPACE_TO_DEPTH = 2u, /**< SpaceToDepth */
    CLOPS_SELECT_MAX_UNPOOLING = 4u   /**< MaxUnpooling */
};
/** Tensor layouts of a clops_program_selection (bits of its `layouts`). */
enum {
    CLOPS_SELECT_PACKED = 1u,  /**< packed NCHW (no strides) */
    CLOPS_SELECT_NHWC = 2u,    /**< NHWC: channels innermost */
    CLOPS_SELECT_STRIDED = 4u  /**< strided: gaps between elements */
};

/** A set of operator variants, as `clops kernels list` and `clops kernels build`
 *  take them: operators x data types x block sizes x layouts; MaxUnpooling with
 *  every index type and indices layout. Zero-initialised: everything (every
 *  operator, data type and layout, block sizes 1 to 8, no extra windows). */
typedef struct clops_program_selection {
    unsigned ops;                 /**< CLOPS_SELECT_* operator bits; 0: all three */
    const clops_data_type *types; /**< data types; NULL with type_count 0: all */
    size_t type_count;            /**< entries at `types` */
    const uint32_t *blocks;       /**< DepthToSpace/SpaceToDepth block sizes (each >= 1); NULL with 0: 1..8 */
    size_t block_count;           /**< entries at `blocks` */
    unsigned layouts;             /**< CLOPS_SELECT_* layout bits; 0: all three */
    const uint32_t *windows;      /**< MaxUnpooling windows past the pool's cells: window_count (KH, KW)
                                       pairs, each side 1 to 64; NULL with 0: none */
    size_t window_count;          /**< pairs at `windows` */
} clops_program_selection;

/** Calls `fn` for every program that operators of the selection `sel` (NULL:
 *  everything) would load or compile on ctx's device, for any sizes: each
 *  descriptor's programs as clops_operator_programs() names them (so a program
 *  may be named more than once; a data type the device cannot run names
 *  nothing). What `clops kernels list` prints.
 *  @param ctx an OpenCL context.
 *  @param sel the selection; NULL: everything.
 *  @param fn called per program, on the calling thread.
 *  @param user passed to `fn`.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_NULL_ARGUMENT `ctx` or `fn` is NULL.
 *  @retval CLOPS_ERROR_WRONG_BACKEND `ctx` is the host backend.
 *  @retval CLOPS_ERROR_INVALID_SETTING an unknown bit or data type, a block size
 *          of 0, a window side outside 1 to 64, or a NULL array with a count.
 *  @threadsafety As clops_operator_programs(). @blocking As clops_operator_programs(). */
CLOPS_API clops_status clops_programs_list(clops_context *ctx, const clops_program_selection *sel,
                                           clops_program_fn fn, void *user);

/** One program that clops_programs_prepare() finished, for its callback. */
typedef struct clops_prepared_program {
    const char *source_name;   /**< its kernel source file */
    const char *build_options; /**< its build options */
    const char *origin;        /**< "compiled" (built now and stored) or "disk cache" (there already); "" if it failed */
    clops_status status;       /**< ::CLOPS_SUCCESS, or why it failed */
    const char *message;       /**< the failure's detailed message; "" on success */
    size_t done;               /**< programs finished so far, this one included */
    size_t total;              /**< programs to prepare */
} clops_prepared_program;
/** clops_programs_prepare()'s progress callback; `p` and its strings are valid
 *  during the call only. */
typedef void (*clops_prepare_fn)(void *user, const clops_prepared_program *p);

/** What clops_programs_prepare() did. */
typedef struct clops_prepare_report {
    size_t total;  /**< distinct programs of the selection */
    size_t built;  /**< compiled now and stored in the cache */
    size_t cached; /**< in the cache already (loaded, so the binary is known good) */
    size_t failed; /**< neither */
} clops_prepare_report;

/** Builds every program of the selection `sel` (NULL: everything) for OpenCL
 *  device `device_index` of clops_device_list() into the program cache, so that
 *  later operators of those variants, in any process using the same cache,
 *  load them from disk instead of compiling ("warming up a service",
 *  docs/cache-and-tuning.md). The programs are those of clops_programs_list(). `jobs` threads (0:
 *  one per online core, at most one per program) each build on a context of
 *  their own on that device; the cache's writes are atomic (a temporary file
 *  renamed), so other processes may use or fill the cache meanwhile. A program
 *  compiled but absent from the cache afterwards (a full disk, a size bound that
 *  evicted it) counts as failed.
 *  @param device_index an OpenCL device of clops_device_list().
 *  @param sel the selection; NULL: everything (several hundred programs).
 *  @param jobs threads; 0: one per online core.
 *  @param fn called once per finished program, from the building threads, never
 *         two calls at once; may be NULL.
 *  @param user passed to `fn`.
 *  @param[out] report the counts; may be NULL. Filled on every return.
 *  @return ::CLOPS_SUCCESS when every program is in the cache, or:
 *  @retval CLOPS_ERROR_BUILD_FAILED some programs failed (report->failed; each
 *          one's status and message went to `fn`); the others are in the cache.
 *  @retval CLOPS_ERROR_CACHE_UNAVAILABLE the cache is off or read-only.
 *  @retval CLOPS_ERROR_INVALID_SETTING as clops_programs_list().
 *  @retval other as clops_context_create_device().
 *  @threadsafety Any thread; reads the environment (CLOPS_CACHE_DIR, ...) as
 *  clops_context_create_device() does.
 *  @blocking Compiles: seconds per program on CPU devices. */
CLOPS_API clops_status clops_programs_prepare(unsigned device_index, const clops_program_selection *sel,
                                              unsigned jobs, clops_prepare_fn fn, void *user,
                                              clops_prepare_report *report);
/** @} */

/* ---- tuning ------------------------------------------------------------------------------ */
/** @defgroup tuning Tuning
 * clops_tune() times candidate work-group sizes, per-work-item chunk lengths,
 * loops and the vector-rows kernels' vector widths (GPUs) for DepthToSpace and
 * SpaceToDepth on one device (profiling events, median of 5
 * runs each, every candidate's output checked against the host kernels) and
 * stores the winners in a per-device database beside the program cache. Later
 * operators on that exact device use them (CLOPS_TUNE=off ignores them; the
 * heuristic applies to anything not tuned). MaxUnpooling is not tuned.
 * @{ */
/** One tuned variant, as clops_tune() reports it. */
typedef struct clops_tune_result {
    clops_operator_type operator_type; /**< DepthToSpace or SpaceToDepth */
    clops_depth_space_order order;     /**< DCR or CRD */
    clops_data_type data_type;         /**< the element type */
    uint32_t block_size;               /**< the block size */
    unsigned chunk;               /**< winner: inner-axis positions per work-item */
    size_t local[3];              /**< winner: local work size */
    double gbps;                  /**< winner's throughput (bytes read + written) */
    double default_gbps;          /**< the untuned choice's, measured in the same run */
    int kept;                     /**< 1: stored; 0: the winner did not beat the default when
                                     measured again, so the variant keeps the heuristic */
    unsigned vector_bytes;        /**< winner: bytes per vector of the vector-rows kernels (GPUs'
                                     "vectors" loop), 0 where the winner does not run them */
} clops_tune_result;
/** Progress of clops_tune(), called on the tuning thread after each variant.
 *  @param user the caller's pointer, as given.
 *  @param result the variant just tuned; valid during the call only.
 *  @param done variants tuned so far.
 *  @param total variants in this run. */
typedef void (*clops_tune_progress_fn)(void *user, const clops_tune_result *result, unsigned done, unsigned total);

/** Tunes device `device_index` of clops_device_list(); `quick` tunes a small
 *  subset (uint8 and float32, block 2). Calls `progress` (may be NULL) after
 *  each variant. Needs a writable cache directory. Each result is stored as
 *  soon as it is measured. An existing database file that is not one this
 *  version knows (a user's file, a newer format) or cannot be read is never
 *  replaced: tuning fails before it measures anything; only a missing (or
 *  empty) file is created.
 *  @param device_index the device.
 *  @param quick nonzero: the small subset.
 *  @param progress called after each variant, or NULL.
 *  @param user passed to `progress`.
 *  @return ::CLOPS_SUCCESS, or:
 *  @retval CLOPS_ERROR_INVALID_DEVICE_SELECTION `device_index` is past the list.
 *  @retval CLOPS_ERROR_CACHE_UNAVAILABLE the cache is not read-write.
 *  @retval CLOPS_ERROR_CACHE_IO the tuning database cannot be read, locked or
 *          written, or the file it names is not a tuning database this version
 *          knows (the message names the file, which is left as it was).
 *  @retval CLOPS_ERROR_INVALID_SETTING a bad setting.
 *  @retval CLOPS_ERROR_OUT_OF_HOST_MEMORY an allocation failed.
 *  @retval other as clops_operator_create() and clops_operator_execute(); OpenCL errors.
 *  @threadsafety Any thread; reads the environment. Tuners in several threads
 *  or processes keep each other's results (the database is locked per write).
 *  @blocking The whole run: compiling every candidate program and timing it
 *  on 64 MiB tensors on the device (`quick` tunes fewer variants); another
 *  tuner's lock on the database. */
CLOPS_API clops_status clops_tune(unsigned device_index, int quick, clops_tune_progress_fn progress, void *user);
/** clops_tune on a context made with `opts` (its cache directory, policy and
 *  size bound, tuning_db, disabled capabilities; NULL: as clops_tune). The
 *  results go to opts->tuning_db when it is set.
 *  @param opts the settings, or NULL.
 *  @param device_index the device.
 *  @param quick nonzero: the small subset.
 *  @param progress called after each variant, or NULL.
 *  @param user passed to `progress`.
 *  @return as clops_tune().
 *  @threadsafety As clops_tune(), but with `opts` nothing is read from the
 *  environment. @blocking As clops_tune(). */
CLOPS_API clops_status clops_tune_with_options(const clops_context_options *opts, unsigned device_index, int quick,
                                               clops_tune_progress_fn progress, void *user);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* CLOPS_PUBLIC_CACHE_H */
