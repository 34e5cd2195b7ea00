/* c_api_example.c - Streams three prompts through the ingot C API.
 *
 * Usage: ingot-c-api-example MODEL.ingot [MAX_NEW_TOKENS]
 * Two threads submit (one prompt, then two), every token is printed as it
 * arrives, and the engine's statistics are printed at the end. Exits 0 only
 * when all three requests finished without error. */
#include "ingot/ingot.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static int failures = 0;
static int finished = 0;

static void on_token(const ingot_token_event *e, void *user_data) {
  const char *name = (const char *)user_data;
  pthread_mutex_lock(&print_lock);
  printf("[%s #%llu] token %d \"%.*s\"\n", name,
         (unsigned long long)e->request_id, e->token, (int)e->text_len,
         e->text);
  if (e->finished) {
    printf("[%s #%llu] finished: %s%s%s (%.1f ms)\n", name,
           (unsigned long long)e->request_id, e->finish_reason,
           e->error[0] ? ": " : "", e->error, e->time_ms);
    ++finished;
    if (strcmp(e->finish_reason, "error") == 0)
      ++failures;
  }
  pthread_mutex_unlock(&print_lock);
}

struct job {
  ingot_engine *engine;
  const char *const *prompts;
  int count;
  int64_t max_new_tokens;
  int rc;
};

static void *submit_all(void *arg) {
  struct job *j = (struct job *)arg;
  for (int i = 0; i < j->count; ++i) {
    ingot_request r;
    ingot_request_init(&r);
    r.prompt = j->prompts[i];
    r.max_new_tokens = j->max_new_tokens;
    r.ignore_eos = 1; /* a fixed amount of output whatever the model says */
    uint64_t id = 0;
    if (ingot_submit(j->engine, &r, on_token, (void *)j->prompts[i], &id) !=
        INGOT_OK) {
      fprintf(stderr, "submit failed: %s\n", ingot_last_error());
      j->rc = 1;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: %s MODEL.ingot [MAX_NEW_TOKENS [KV_DTYPE [WEIGHTS_DIR]]]\n",
            argv[0]);
    return 2;
  }
  int64_t max_new = argc > 2 ? atoll(argv[2]) : 8;
  ingot_artifact *artifact = NULL;
  /* WEIGHTS_DIR: the model directory of an artifact compiled with
     --weights=external. */
  const char *weights = argc > 4 ? argv[4] : NULL;
  if (ingot_artifact_open_with_weights(argv[1], weights, &artifact) !=
      INGOT_OK) {
    fprintf(stderr, "error: %s\n", ingot_last_error());
    return 1;
  }
  ingot_engine_options options;
  ingot_engine_options_init(&options);
  if (argc > 3 && argv[3][0])
    options.kv_cache_dtype = argv[3]; /* e.g. "int8" */
  ingot_engine *engine = NULL;
  if (ingot_engine_create(artifact, &options, &engine) != INGOT_OK) {
    fprintf(stderr, "error: %s\n", ingot_last_error());
    ingot_artifact_close(artifact);
    return 1;
  }
  printf("KV budget: %s\n", ingot_engine_describe_budget(engine));

  static const char *const first[] = {"The capital of France is"};
  static const char *const second[] = {"Once upon a time", "1, 2, 3, 4,"};
  struct job a = {engine, first, 1, max_new, 0};
  struct job b = {engine, second, 2, max_new, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, submit_all, &a);
  pthread_create(&tb, NULL, submit_all, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  ingot_wait_idle(engine);

  ingot_stats s;
  ingot_get_stats(engine, &s);
  printf("stats: steps %lld, prompt tokens %lld, generated tokens %lld, "
         "preemptions %lld, prefix hit rate %.2f, peak blocks %lld of %lld\n",
         (long long)s.steps, (long long)s.prompt_tokens,
         (long long)s.generated_tokens, (long long)s.preemptions,
         s.prefix_cache_hit_rate, (long long)s.peak_kv_blocks_used,
         (long long)s.kv_blocks_total);
  ingot_engine_destroy(engine);
  ingot_artifact_close(artifact);
  int ok = a.rc == 0 && b.rc == 0 && failures == 0 && finished == 3;
  return ok ? 0 : 1;
}
