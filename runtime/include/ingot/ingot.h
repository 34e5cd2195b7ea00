/*===- ingot.h - The stable C API of the ingot runtime -------------*- C -*-===
 *
 * Plain C, opaque handles, no C++ types: load a compiled LLM artifact,
 * create a continuous-batching engine over it, submit requests (text or
 * token ids) from any thread, receive tokens through a callback, cancel,
 * read statistics, destroy.
 *
 * Conventions:
 *  - Functions returning int return INGOT_OK (0) or a negative INGOT_ERR_*
 *    code; ingot_last_error() then gives a message (per thread).
 *  - Initialise option/request structs with their *_init function, then
 *    set fields: new fields get defaults there, so old code keeps working.
 *  - Callbacks run on the engine's step thread; they must return quickly and
 *    must not call ingot_wait_idle or ingot_engine_destroy. Pointers in an
 *    event are valid only during the callback.
 *  - The artifact must outlive every engine created from it.
 *
 * Example:
 *
 *   static void on_token(const ingot_token_event *e, void *user) {
 *     fwrite(e->text, 1, e->text_len, stdout);
 *     if (e->finished) printf("\n[%s]\n", e->finish_reason);
 *   }
 *   ingot_artifact *a; ingot_engine *eng; uint64_t id;
 *   if (ingot_artifact_open("m.ingot", &a) != INGOT_OK)
 *     fprintf(stderr, "%s\n", ingot_last_error());
 *   ingot_engine_options o; ingot_engine_options_init(&o);
 *   ingot_engine_create(a, &o, &eng);
 *   ingot_request r; ingot_request_init(&r);
 *   r.prompt = "Hello"; r.max_new_tokens = 32;
 *   ingot_submit(eng, &r, on_token, NULL, &id);
 *   ingot_wait_idle(eng);
 *   ingot_engine_destroy(eng);
 *   ingot_artifact_close(a);
 *
 *===----------------------------------------------------------------------===*/
#ifndef INGOT_INGOT_H
#define INGOT_INGOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define INGOT_API_VERSION 1

enum {
  INGOT_OK = 0,
  INGOT_ERR_INVALID_ARGUMENT = -1, /* null handle/pointer, bad option */
  INGOT_ERR_IO = -2,               /* the artifact cannot be opened/read */
  INGOT_ERR_BAD_REQUEST = -3,      /* the request was rejected */
  INGOT_ERR_INTERNAL = -4
};

typedef struct ingot_artifact ingot_artifact;
typedef struct ingot_engine ingot_engine;

typedef struct {
  unsigned threads;            /* 0 = all cores */
  int64_t kv_blocks;           /* 0 = use kv_cache_mb */
  int64_t kv_cache_mb;         /* 0 = a fraction of free memory */
  int64_t max_tokens_per_step; /* 0 = the compiled bound */
  int64_t max_seqs;            /* 0 = the compiled bound */
  int prefix_caching;          /* default 1 */
  const char *kv_cache_dtype;  /* NULL or "auto" (the artifact's), "float32",
                                  "bfloat16", "int8", "fp8": see
                                  ingot/KvCache.h */
  int kv_prefault;             /* 1 = commit the KV budget now; default 0 */
} ingot_engine_options;

typedef struct {
  const char *prompt;           /* used when prompt_tokens is NULL */
  const int32_t *prompt_tokens; /* used verbatim when non-NULL */
  size_t num_prompt_tokens;
  double temperature;        /* 0 = greedy (default) */
  int64_t top_k;             /* 0 = off */
  double top_p;              /* 1 = off */
  double min_p;              /* 0 = off */
  double repetition_penalty; /* 1 = off */
  double presence_penalty;   /* 0 = off */
  double frequency_penalty;  /* 0 = off */
  uint64_t seed;
  int64_t max_new_tokens;        /* default 256 */
  const int32_t *stop_token_ids; /* besides the model's EOS ids */
  size_t num_stop_token_ids;
  const char *const *stop_strings;
  size_t num_stop_strings;
  int ignore_eos;
} ingot_request;

typedef struct {
  uint64_t request_id;
  int32_t token;             /* -1 when the event carries no token */
  const char *text;          /* newly completed UTF-8 text, NUL-terminated */
  size_t text_len;           /* its length in bytes */
  int finished;              /* 1 on the request's last event */
  const char *finish_reason; /* "stop", "length", "cancelled", "error" or "" */
  const char *error;         /* "" unless finish_reason is "error" */
  double time_ms;            /* since submission */
} ingot_token_event;

typedef void (*ingot_token_callback)(const ingot_token_event *event,
                                     void *user_data);

typedef struct {
  int64_t steps;
  int64_t prompt_tokens;
  int64_t generated_tokens;
  int64_t preemptions;
  int64_t prefix_cache_queries;
  int64_t prefix_cache_hits;
  double prefix_cache_hit_rate;
  int64_t kv_blocks_total;
  int64_t peak_kv_blocks_used;
  int64_t block_size;
  int64_t finished_requests;
  int64_t failed_requests;
} ingot_stats;

/* The message of this thread's last failed call ("" if none). */
const char *ingot_last_error(void);

int ingot_artifact_open(const char *path, ingot_artifact **out);
/* An artifact compiled with --weights=external, its weights made at load
   from the safetensors files in weights_dir (NULL: as ingot_artifact_open). */
int ingot_artifact_open_with_weights(const char *path, const char *weights_dir,
                                     ingot_artifact **out);
void ingot_artifact_close(ingot_artifact *artifact);

void ingot_engine_options_init(ingot_engine_options *options);
/* options may be NULL (all defaults). */
int ingot_engine_create(const ingot_artifact *artifact,
                        const ingot_engine_options *options,
                        ingot_engine **out);
/* Unfinished requests end with finish_reason "cancelled". */
void ingot_engine_destroy(ingot_engine *engine);
/* "N blocks x B tokens = T tokens, M MiB"; valid while the engine lives. */
const char *ingot_engine_describe_budget(const ingot_engine *engine);

void ingot_request_init(ingot_request *request);
/* Thread-safe. callback may be NULL; id may be NULL. */
int ingot_submit(ingot_engine *engine, const ingot_request *request,
                 ingot_token_callback callback, void *user_data, uint64_t *id);
/* Thread-safe; the request ends with "cancelled" at the next step. */
int ingot_cancel(ingot_engine *engine, uint64_t id);
/* Blocks until every submitted request has delivered its last event. */
int ingot_wait_idle(ingot_engine *engine);
int ingot_get_stats(const ingot_engine *engine, ingot_stats *stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* INGOT_INGOT_H */
