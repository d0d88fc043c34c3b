// rezolus_malloc: glibc malloc tuning, loaded by the CLI's entry for `rezolus
// agent` before the rest of the CLI (src/agent/malloc-arenas.ts), and one
// call into V8 (heap.cc). Node-API with no library of its own, so that
// loading it maps ~nothing; the libbpf addon (rezolus_native) costs ~1.5 MiB
// of RSS to load.
#include <node_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

// reexec(argv) -> only on failure, the reason: replaces this process's image
// with argv[0] run with argv (execv: same pid, same environment, open file
// descriptors without close-on-exec stay open). Node marks its stdin, stdout
// and stderr close-on-exec: the mark is taken off them first, else the new
// image starts on /dev/null. The agent restarts node with
// flags that only node's command line takes (src/agent/node-flags.ts).
static napi_value Reexec(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  const char* failure = "reexec takes an array of strings";
  uint32_t n = 0;
  bool is_array = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 1 &&
      napi_is_array(env, argv[0], &is_array) == napi_ok && is_array &&
      napi_get_array_length(env, argv[0], &n) == napi_ok && n > 0 && n < 4096) {
    char** args = calloc((size_t)n + 1, sizeof(char*));
    bool ok = args != NULL;
    for (uint32_t i = 0; ok && i < n; i++) {
      napi_value item;
      size_t len = 0;
      ok = napi_get_element(env, argv[0], i, &item) == napi_ok &&
           napi_get_value_string_utf8(env, item, NULL, 0, &len) == napi_ok;
      if (ok) args[i] = malloc(len + 1);
      ok = ok && args[i] != NULL && napi_get_value_string_utf8(env, item, args[i], len + 1, &len) == napi_ok &&
           strlen(args[i]) == len;
    }
    if (ok) {
      for (int fd = 0; fd <= 2; fd++) {
        int fl = fcntl(fd, F_GETFD);
        if (fl >= 0 && (fl & FD_CLOEXEC) != 0) fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
      }
      execv(args[0], args);
      failure = strerror(errno);
    }
    for (uint32_t i = 0; args != NULL && i < n; i++) free(args[i]);
    free(args);
  }
  napi_value out;
  napi_create_string_utf8(env, failure, NAPI_AUTO_LENGTH, &out);
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
  return exports;
}
