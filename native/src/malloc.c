// rezolus_malloc: glibc malloc tuning, loaded by the CLI's entry for `rezolus
// agent` before the rest of the CLI (src/agent/malloc-arenas.ts), and one
// call into V8 (heap.cc). Node-API with no library of its own, so that
// loading it maps ~nothing; the libbpf addon (rezolus_native) costs ~1.5 MiB
// of RSS to load.
#include <node_api.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

// mallocArenaMax(n) -> whether glibc took it (mallopt M_ARENA_MAX): once n
// malloc arenas exist, a thread that has none shares one of them instead of
// making its own. false for n < 1, and where the C library is not glibc.
static napi_value MallocArenaMax(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t n = 0;
  bool ok = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 1 &&
      napi_get_value_int32(env, argv[0], &n) == napi_ok && n > 0) {
#if defined(__GLIBC__)
    ok = mallopt(M_ARENA_MAX, n) == 1;
#endif
  }
  napi_value out;
  napi_get_boolean(env, ok, &out);
  return out;
}

// mallocTrim() -> whether glibc gave memory back (malloc_trim(0)): the free
// pages of every arena, inside the heap as well as at its top, are returned
// to the kernel (madvise MADV_DONTNEED), so they leave RSS until reused.
// false where nothing was given back, and where the C library is not glibc.
static napi_value MallocTrim(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
#if defined(__GLIBC__)
  released = malloc_trim(0) == 1;
#endif
  napi_value out;
  napi_get_boolean(env, released, &out);
  return out;
}

int rezolus_reduce_heap(void);

// reduceHeap() -> whether V8 was asked: a full GC that leaves V8's young
// generation at its least size and returns the old space's free pages
// (heap.cc). It starts now and ends over the next few ms of JS.
static napi_value ReduceHeap(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_get_boolean(env, rezolus_reduce_heap() == 1, &out);
  return out;
}

// Copies the JS string `value` (malloc'd, freed with free); NULL when it is
// not a string or holds a NUL.
static char* CopyString(napi_env env, napi_value value) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok) return NULL;
  char* out = malloc(len + 1);
  if (out != NULL && (napi_get_value_string_utf8(env, value, out, len + 1, &len) != napi_ok || strlen(out) != len)) {
    free(out);
    out = NULL;
  }
  return out;
}

// Copies the strings of the JS array `array` into a NULL-terminated array
// of at most `max` strings (freed with FreeStrings); NULL when it is not
// such an array or a string holds a NUL.
static char** CopyStrings(napi_env env, napi_value array, uint32_t max) {
  uint32_t n = 0;
  bool is_array = false;
  if (napi_is_array(env, array, &is_array) != napi_ok || !is_array || napi_get_array_length(env, array, &n) != napi_ok ||
      n == 0 || n > max) {
    return NULL;
  }
  char** out = calloc((size_t)n + 1, sizeof(char*));
  bool ok = out != NULL;
  for (uint32_t i = 0; ok && i < n; i++) {
    napi_value item;
    ok = napi_get_element(env, array, i, &item) == napi_ok && (out[i] = CopyString(env, item)) != NULL;
  }
  if (ok) return out;
  for (uint32_t i = 0; out != NULL && out[i] != NULL; i++) free(out[i]);
  free(out);
  return NULL;
}

static void FreeStrings(char** strings) {
  for (size_t i = 0; strings != NULL && strings[i] != NULL; i++) free(strings[i]);
  free(strings);
}

// reexec(path, argv) -> only on failure, the reason: replaces this process's
// image with the program at `path` run with `argv` (execv: same pid, same
// environment; argv[0] is what the process is called). Node marks its
// stdin, stdout and stderr close-on-exec: the mark is taken off them for
// the exec (else the new image starts on /dev/null) and put back when it
// fails. Every other descriptor closes. The agent restarts node with flags
// that only node's command line takes (src/agent/node-flags.ts).
static napi_value Reexec(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  const char* failure = "reexec takes a path and an array of 1 to 4095 strings";
  char* path = NULL;
  char** args = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 2) {
    path = CopyString(env, argv[0]);
    args = CopyStrings(env, argv[1], 4095);
  }
  if (path != NULL && args != NULL) {
    int marked[3] = {-1, -1, -1};
    for (int fd = 0; fd <= 2; fd++) {
      int fl = fcntl(fd, F_GETFD);
      if (fl >= 0 && (fl & FD_CLOEXEC) != 0 && fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC) == 0) marked[fd] = fl;
    }
    execv(path, args);
    failure = strerror(errno);
    for (int fd = 0; fd <= 2; fd++) {
      if (marked[fd] >= 0) fcntl(fd, F_SETFD, marked[fd]);
    }
  }
  free(path);
  FreeStrings(args);
  napi_value out;
  napi_create_string_utf8(env, failure, NAPI_AUTO_LENGTH, &out);
  return out;
}

// The bounds of this process's command line as the kernel reads it for
// /proc/<pid>/cmdline (arg_start and arg_end, fields 48 and 49 of
// /proc/self/stat); false when not known.
static bool ArgArea(unsigned long long* start, unsigned long long* end) {
  char stat[4096];
  FILE* f = fopen("/proc/self/stat", "r");
  if (f == NULL) return false;
  size_t got = fread(stat, 1, sizeof(stat) - 1, f);
  fclose(f);
  stat[got] = '\0';
  // the fields after the command's name (which may hold spaces and parentheses): field 3 on
  char* field = strrchr(stat, ')');
  *start = 0;
  *end = 0;
  for (int i = 3; field != NULL && i <= 49; i++) {
    field = strchr(field, ' ');
    if (field == NULL) break;
    field++;
    if (i == 48) *start = strtoull(field, NULL, 10);
    if (i == 49) *end = strtoull(field, NULL, 10);
  }
  return *start != 0 && *end > *start;
}

// hideArgs(prefixes) -> how many of this process's command-line arguments
// were hidden: each that starts with one of `prefixes` ("--hash-seed=") has
// the rest of it overwritten with 'x' where /proc/<pid>/cmdline reads it
// (node works on its own copy of the arguments, and V8 has read its flags).
// Read and written through /proc/self/mem, so that an area that is not
// (or no longer) mapped is an error, not a fault. -1 when the area is not
// known or cannot be read or written.
static napi_value HideArgs(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t hidden = -1;
  char** prefixes = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 1) prefixes = CopyStrings(env, argv[0], 64);
  unsigned long long start = 0;
  unsigned long long end = 0;
  // the kernel bounds a command line by ARG_MAX-like limits; 8 MiB is far past any
  if (prefixes != NULL && ArgArea(&start, &end) && end - start <= (8ULL << 20)) {
    size_t size = (size_t)(end - start);
    char* area = malloc(size + 1);
    int mem = area != NULL ? open("/proc/self/mem", O_RDWR | O_CLOEXEC) : -1;
    if (mem >= 0 && pread(mem, area, size, (off_t)start) == (ssize_t)size) {
      area[size] = '\0';
      hidden = 0;
      size_t at = 0;
      while (at < size && hidden >= 0) {
        size_t len = strnlen(area + at, size - at);
        for (size_t k = 0; prefixes[k] != NULL; k++) {
          size_t plen = strlen(prefixes[k]);
          if (plen > 0 && len > plen && strncmp(area + at, prefixes[k], plen) == 0) {
            memset(area + at + plen, 'x', len - plen);
            if (pwrite(mem, area + at + plen, len - plen, (off_t)(start + at + plen)) != (ssize_t)(len - plen)) hidden = -1;
            else hidden++;
            break;
          }
        }
        at += len + 1;
      }
    }
    if (mem >= 0) close(mem);
    free(area);
  }
  FreeStrings(prefixes);
  napi_value out;
  napi_create_int32(env, hidden, &out);
  return out;
}

static void Export(napi_env env, napi_value exports, const char* name, napi_callback cb) {
  napi_value fn;
  if (napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn) == napi_ok) {
    napi_set_named_property(env, exports, name, fn);
  }
}

NAPI_MODULE_INIT() {
  Export(env, exports, "mallocArenaMax", MallocArenaMax);
  Export(env, exports, "mallocTrim", MallocTrim);
  Export(env, exports, "reduceHeap", ReduceHeap);
  Export(env, exports, "reexec", Reexec);
  Export(env, exports, "hideArgs", HideArgs);
  return exports;
}
