/*
 * nodetrace USDT addon: the only native code of the Linux USDT provider.
 *
 * It does two things and nothing else:
 *   open(path, count, stride) -> { base, semaphores }
 *       dlopen()s a probe library that lib/usdt generated and verified, and
 *       returns the index of its first probe site in this thread's site table
 *       plus an external ArrayBuffer over its semaphores (so JavaScript checks
 *       "is a tracer attached?" with a plain typed-array load, no native call).
 *   fire(site, ...args)
 *       calls probe site `site` as a C function with up to 12 integer/pointer
 *       arguments (numbers and bigints as int64, strings as NUL-terminated
 *       UTF-8 copies), which is exactly what the stapsdt notes describe.
 *
 * Libraries are never dlclose()d (RTLD_NODELETE): a probe site or semaphore
 * must stay mapped as long as any thread could still fire it, and a provider
 * object being garbage collected says nothing about other threads.
 *
 * N-API only (ABI-stable across Node versions); per-thread state lives in the
 * instance data, so it works in worker threads (NAPI_MODULE_INIT).
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#define MAX_ARGS 12
#define SITES_SYMBOL "nodetrace_probe_sites"
#define SEMAPHORES_SYMBOL "nodetrace_semaphores"
#define STRBUF 256

typedef void (*site_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                        uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

/* Per-env (main thread or worker) table of probe sites, append-only. */
typedef struct {
  site_fn *sites;
  uint32_t count;
  uint32_t cap;
} state_t;

#define CHECK(call)                                   \
  do {                                                \
    if ((call) != napi_ok) return NULL;               \
  } while (0)

static napi_value throw_error(napi_env env, const char *code, const char *msg) {
  napi_throw_error(env, code, msg);
  return NULL;
}

static void free_state(napi_env env, void *data, void *hint) {
  state_t *st = data;
  (void)env; (void)hint;
  /* The sites themselves stay mapped (RTLD_NODELETE); only the table goes. */
  free(st->sites);
  free(st);
}

/* Size of the dynamic symbol `addr` belongs to, or 0 if unknown. */
static size_t symbol_size(void *addr) {
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  if (dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) == 0 || sym == NULL) return 0;
  return (size_t)sym->st_size;
}

static napi_value Open(napi_env env, napi_callback_info cbinfo) {
  size_t argc = 3;
  napi_value argv[3];
  char path[4096];
  size_t len;
  uint32_t count, stride;
  state_t *st;

  CHECK(napi_get_cb_info(env, cbinfo, &argc, argv, NULL, NULL));
  if (argc < 3) return throw_error(env, "ERR_INVALID_ARG", "open(path, count, stride)");
  if (napi_get_value_string_utf8(env, argv[0], path, sizeof(path), &len) != napi_ok ||
      len >= sizeof(path) - 1)
    return throw_error(env, "ERR_INVALID_ARG", "path must be a string shorter than 4095 bytes");
  if (napi_get_value_uint32(env, argv[1], &count) != napi_ok || count == 0 || count > 1000000 ||
      napi_get_value_uint32(env, argv[2], &stride) != napi_ok || stride == 0 || stride > 64)
    return throw_error(env, "ERR_INVALID_ARG", "bad count or stride");
  CHECK(napi_get_instance_data(env, (void **)&st));

  dlerror();
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == NULL) {
    const char *e = dlerror();
    return throw_error(env, "ERR_DLOPEN", e ? e : "dlopen failed");
  }
  unsigned char *sites = dlsym(handle, SITES_SYMBOL);
  unsigned char *sems = dlsym(handle, SEMAPHORES_SYMBOL);
  /* The file was checked byte for byte before; this guards the contract
   * between lib/usdt/elf.js and this file. */
  if (sites == NULL || sems == NULL ||
      symbol_size(sites) != (size_t)count * stride || symbol_size(sems) != (size_t)count * 2) {
    /* RTLD_NODELETE: dlclose would not unmap anyway; keep the refcount. */
    return throw_error(env, "ERR_BAD_LIBRARY", "probe library symbols do not match its definition");
  }

  if (st->count + count > st->cap) {
    uint32_t cap = st->cap ? st->cap : 64;
    while (cap < st->count + count) cap *= 2;
    site_fn *grown = realloc(st->sites, (size_t)cap * sizeof(*grown));
    if (grown == NULL) return throw_error(env, "ERR_NO_MEMORY", "out of memory");
    st->sites = grown;
    st->cap = cap;
  }
  uint32_t base = st->count;
  for (uint32_t i = 0; i < count; i++) st->sites[base + i] = (site_fn)(void *)(sites + (size_t)i * stride);
  st->count += count;

  /* No finalizer: the semaphores live as long as the process (RTLD_NODELETE). */
  napi_value ab, result, base_v;
  napi_status s = napi_create_external_arraybuffer(env, sems, (size_t)count * 2, NULL, NULL, &ab);
  if (s != napi_ok) {
    st->count = base;   /* nobody got these indexes */
    return throw_error(env, "ERR_NO_EXTERNAL_BUFFERS",
                       "this runtime does not allow external ArrayBuffers (V8 sandbox)");
  }
  CHECK(napi_create_object(env, &result));
  CHECK(napi_create_uint32(env, base, &base_v));
  CHECK(napi_set_named_property(env, result, "base", base_v));
  CHECK(napi_set_named_property(env, result, "semaphores", ab));
  return result;
}

static napi_value Fire(napi_env env, napi_callback_info cbinfo) {
  size_t argc = MAX_ARGS + 1;
  napi_value argv[MAX_ARGS + 1];
  uint64_t a[MAX_ARGS] = { 0 };
  char bufs[MAX_ARGS][STRBUF];
  char *heap[MAX_ARGS] = { NULL };
  uint32_t site;
  state_t *st;
  napi_value ret = NULL;

  CHECK(napi_get_cb_info(env, cbinfo, &argc, argv, NULL, NULL));
  CHECK(napi_get_instance_data(env, (void **)&st));
  if (argc < 1 || napi_get_value_uint32(env, argv[0], &site) != napi_ok || site >= st->count)
    return throw_error(env, "ERR_OUT_OF_RANGE", "no such probe site");
  if (argc > MAX_ARGS + 1) argc = MAX_ARGS + 1;

  for (size_t i = 1; i < argc; i++) {
    napi_valuetype t;
    if (napi_typeof(env, argv[i], &t) != napi_ok) goto out;
    if (t == napi_number) {
      int64_t v;
      napi_get_value_int64(env, argv[i], &v);   /* NaN -> 0, saturates */
      a[i - 1] = (uint64_t)v;
    } else if (t == napi_bigint) {
      int64_t v;
      bool lossless;
      napi_get_value_bigint_int64(env, argv[i], &v, &lossless);  /* wraps */
      a[i - 1] = (uint64_t)v;
    } else if (t == napi_string) {
      size_t n;
      char *p = bufs[i - 1];
      if (napi_get_value_string_utf8(env, argv[i], p, STRBUF, &n) != napi_ok) goto out;
      if (n >= STRBUF - 4) {   /* may have been cut: measure and copy again */
        if (napi_get_value_string_utf8(env, argv[i], NULL, 0, &n) != napi_ok) goto out;
        if ((p = heap[i - 1] = malloc(n + 1)) == NULL) goto out;
        if (napi_get_value_string_utf8(env, argv[i], p, n + 1, &n) != napi_ok) goto out;
      }
      a[i - 1] = (uint64_t)(uintptr_t)p;
    }
    /* anything else: 0 / NULL (lib/usdt converts before calling) */
  }

  st->sites[site](a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
  napi_get_boolean(env, true, &ret);
out:
  for (size_t i = 0; i < MAX_ARGS; i++) free(heap[i]);
  return ret;
}

NAPI_MODULE_INIT() {
  state_t *st = calloc(1, sizeof(*st));
  napi_value fn;
  if (st == NULL || napi_set_instance_data(env, st, free_state, NULL) != napi_ok) {
    free(st);
    return NULL;
  }
  CHECK(napi_create_function(env, "open", NAPI_AUTO_LENGTH, Open, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "open", fn));
  CHECK(napi_create_function(env, "fire", NAPI_AUTO_LENGTH, Fire, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "fire", fn));
  return exports;
}
