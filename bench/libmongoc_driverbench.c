/* libmongoc_driverbench: DriverBench's single- and multi-document tasks with libmongoc 1.23, the C
 * peer of bench/client_driverbench.cpp. Same tasks, options and output as that program (see its
 * top comment); scripts/bench-client.sh runs it.
 *
 * A mongoc_client_t is not thread-safe, so the program works as libmongoc asks threaded programs
 * to: one mongoc_client_pool_t, and each thread pops a client of its own (with --threads 1, the
 * one thread pops one). The documents are read with bson_new_from_json. Allocations per operation
 * count libbson's and libmongoc's allocations (bson_mem_set_vtable), not those of libc or OpenSSL.
 *
 *   libmongoc_driverbench --uri URI [--task NAME[,NAME...]|all] [--count N] [--large-count L]
 *                         [--iterations K] [--warmup W] [--threads T] [--data DIR] [--json]
 *                         [--server-pid P]
 */
#include <mongoc/mongoc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#ifndef OID_SPEC_DATA_DIR /* where scripts/spec-data.sh unpacks the DriverBench data */
#define OID_SPEC_DATA_DIR "build/spec-data"
#endif

/* The specification's sizes, in bytes, of one operation's document. */
#define HELLO_BYTES 13.0
#define TWEET_BYTES 1622.0
#define SMALL_BYTES 275.0
#define LARGE_BYTES 2731089.0

/* Allocations through bson_malloc and friends (libbson's and libmongoc's own), counted. Each
 * thread counts in a slot of its own, a cache line apart (as bench/client_driverbench.cpp does):
 * one shared counter would pass its line between the cores of two threads that allocate. */
#define ALLOCATION_SLOTS 64 /* slots are shared (atomically) past 64 threads */
static struct { _Alignas(64) int64_t n; } slots[ALLOCATION_SLOTS];
static int next_slot;
static __thread int this_thread_slot = -1;
static void count_one(void) {
  if (this_thread_slot < 0)
    this_thread_slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED) % ALLOCATION_SLOTS;
  __atomic_add_fetch(&slots[this_thread_slot].n, 1, __ATOMIC_RELAXED);
}
/* The allocations so far (read after the threads that made them have been joined). */
static int64_t allocations(void) {
  int64_t sum = 0;
  for (int i = 0; i < ALLOCATION_SLOTS; ++i) sum += __atomic_load_n(&slots[i].n, __ATOMIC_RELAXED);
  return sum;
}
static void *count_malloc(size_t n) { count_one(); return malloc(n); }
static void *count_calloc(size_t n, size_t size) { count_one(); return calloc(n, size); }
static void *count_realloc(void *p, size_t n) { count_one(); return realloc(p, n); }
static void *count_aligned_alloc(size_t a, size_t n) { count_one(); return aligned_alloc(a, n); }

static mongoc_client_pool_t *pool;
static bson_t *tweet, *small_doc, *large_doc;
static int count = 10000, large_count = 10;

static void fail(const char *what, const bson_error_t *error) {
  fprintf(stderr, "libmongoc_driverbench: %s: %s\n", what, error ? error->message : "failed");
  exit(1);
}

static bson_t *read_doc(const char *dir, const char *name) {
  char path[4096];
  bson_error_t error;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) fail(path, NULL);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size);
  if (fread(text, 1, (size_t)size, f) != (size_t)size) fail(path, NULL);
  fclose(f);
  bson_t *doc = bson_new_from_json((const uint8_t *)text, size, &error);
  if (!doc) fail(path, &error);
  free(text);
  return doc;
}

static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* The CPU time (user + system, all threads) of another process, from its CPU-time clock. */
static double clock_seconds(clockid_t clock) {
  struct timespec t;
  if (clock_gettime(clock, &t) != 0) fail("cannot read the server's CPU clock", NULL);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The system part of cpu_seconds(): the kernel's work for the process. */
static double sys_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

static double wall_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- The timed parts: each pops a client, does the task and returns what it read or wrote. */

static int64_t run_command(mongoc_client_t *c) {
  bson_t *hello = BCON_NEW("hello", BCON_BOOL(true));
  bson_error_t error;
  for (int i = 0; i < count; ++i) {
    bson_t reply;
    if (!mongoc_client_command_simple(c, "admin", hello, NULL, &reply, &error)) fail("hello", &error);
    bson_destroy(&reply);
  }
  bson_destroy(hello);
  return count;
}

static int64_t find_one(mongoc_client_t *c) {
  mongoc_collection_t *coll = mongoc_client_get_collection(c, "perftest", "corpus");
  bson_t *opts = BCON_NEW("limit", BCON_INT64(1));
  int64_t found = 0;
  for (int i = 1; i <= count; ++i) {
    bson_t *filter = BCON_NEW("_id", BCON_INT32(i));
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts(coll, filter, opts, NULL);
    const bson_t *doc;
    bson_error_t error;
    while (mongoc_cursor_next(cur, &doc)) ++found;
    if (mongoc_cursor_error(cur, &error)) fail("find one", &error);
    mongoc_cursor_destroy(cur);
    bson_destroy(filter);
  }
  bson_destroy(opts);
  mongoc_collection_destroy(coll);
  return found;
}

static int64_t insert_one(mongoc_client_t *c, const bson_t *doc, int n) {
  mongoc_collection_t *coll = mongoc_client_get_collection(c, "perftest", "corpus");
  bson_error_t error;
  int64_t acked = 0;
  for (int i = 0; i < n; ++i) {
    bson_t reply;
    if (!mongoc_collection_insert_one(coll, doc, NULL, &reply, &error)) fail("insert one", &error);
    bson_iter_t it;
    if (bson_iter_init_find(&it, &reply, "insertedCount")) acked += bson_iter_as_int64(&it);
    bson_destroy(&reply);
  }
  mongoc_collection_destroy(coll);
  return acked;
}

static int64_t insert_many(mongoc_client_t *c, const bson_t *doc, int n) {
  mongoc_collection_t *coll = mongoc_client_get_collection(c, "perftest", "corpus");
  const bson_t **docs = malloc(sizeof *docs * (size_t)n);
  for (int i = 0; i < n; ++i) docs[i] = doc;
  bson_t reply;
  bson_error_t error;
  if (!mongoc_collection_insert_many(coll, docs, (size_t)n, NULL, &reply, &error))
    fail("insert many", &error);
  int64_t acked = 0;
  bson_iter_t it;
  if (bson_iter_init_find(&it, &reply, "insertedCount")) acked = bson_iter_as_int64(&it);
  bson_destroy(&reply);
  free(docs);
  mongoc_collection_destroy(coll);
  return acked;
}

static int64_t find_many(mongoc_client_t *c) {
  mongoc_collection_t *coll = mongoc_client_get_collection(c, "perftest", "corpus");
  bson_t filter = BSON_INITIALIZER;
  mongoc_cursor_t *cur = mongoc_collection_find_with_opts(coll, &filter, NULL, NULL);
  const bson_t *doc;
  bson_error_t error;
  int64_t read = 0;
  while (mongoc_cursor_next(cur, &doc)) ++read;
  if (mongoc_cursor_error(cur, &error)) fail("find many", &error);
  mongoc_cursor_destroy(cur);
  mongoc_collection_destroy(coll);
  return read;
}

static int64_t insert_one_small(mongoc_client_t *c) { return insert_one(c, small_doc, count); }
static int64_t insert_one_large(mongoc_client_t *c) { return insert_one(c, large_doc, large_count); }
static int64_t insert_many_small(mongoc_client_t *c) { return insert_many(c, small_doc, count); }
static int64_t insert_many_large(mongoc_client_t *c) { return insert_many(c, large_doc, large_count); }

/* ---- Setup and before-task steps (untimed). */

static void drop_database(void) {
  mongoc_client_t *c = mongoc_client_pool_pop(pool);
  mongoc_database_t *db = mongoc_client_get_database(c, "perftest");
  bson_error_t error;
  if (!mongoc_database_drop(db, &error)) fail("dropDatabase", &error);
  mongoc_database_destroy(db);
  mongoc_client_pool_push(pool, c);
}

static void recreate(void) {
  mongoc_client_t *c = mongoc_client_pool_pop(pool);
  mongoc_database_t *db = mongoc_client_get_database(c, "perftest");
  mongoc_collection_t *coll = mongoc_database_get_collection(db, "corpus");
  bson_error_t error;
  if (!mongoc_collection_drop(coll, &error) && error.code != 26 /* NamespaceNotFound */)
    fail("drop", &error);
  mongoc_collection_t *made = mongoc_database_create_collection(db, "corpus", NULL, &error);
  if (!made) fail("create", &error);
  mongoc_collection_destroy(made);
  mongoc_collection_destroy(coll);
  mongoc_database_destroy(db);
  mongoc_client_pool_push(pool, c);
}

static void load_tweets(bool numbered) {
  drop_database();
  mongoc_client_t *c = mongoc_client_pool_pop(pool);
  mongoc_collection_t *coll = mongoc_client_get_collection(c, "perftest", "corpus");
  bson_t **docs = malloc(sizeof *docs * (size_t)count);
  for (int i = 0; i < count; ++i) {
    docs[i] = bson_new();
    if (numbered) BSON_APPEND_INT32(docs[i], "_id", i + 1);
    bson_concat(docs[i], tweet);
  }
  bson_error_t error;
  if (!mongoc_collection_insert_many(coll, (const bson_t **)docs, (size_t)count, NULL, NULL, &error))
    fail("setup: insert tweets", &error);
  for (int i = 0; i < count; ++i) bson_destroy(docs[i]);
  free(docs);
  mongoc_collection_destroy(coll);
  mongoc_client_pool_push(pool, c);
}

static void nothing(void) {}
static void load_numbered(void) { load_tweets(true); }
static void load_plain(void) { load_tweets(false); }

typedef struct {
  const char *name;
  double op_bytes;
  int large;
  void (*setup)(void);
  void (*before)(void);
  int64_t (*run)(mongoc_client_t *);
} task;

static const task tasks[] = {
    {"run_command", HELLO_BYTES, 0, nothing, nothing, run_command},
    {"find_one", TWEET_BYTES, 0, load_numbered, nothing, find_one},
    {"insert_one_small", SMALL_BYTES, 0, drop_database, recreate, insert_one_small},
    {"insert_one_large", LARGE_BYTES, 1, drop_database, recreate, insert_one_large},
    {"find_many", TWEET_BYTES, 0, load_plain, nothing, find_many},
    {"insert_many_small", SMALL_BYTES, 0, drop_database, recreate, insert_many_small},
    {"insert_many_large", LARGE_BYTES, 1, drop_database, recreate, insert_many_large},
};

typedef struct {
  const task *t;
  int64_t docs;
} job;

static void *run_job(void *arg) {
  job *j = arg;
  mongoc_client_t *c = mongoc_client_pool_pop(pool);
  j->docs = j->t->run(c);
  mongoc_client_pool_push(pool, c);
  return NULL;
}

static int number(const char *flag, const char *text, int min) {
  char *end;
  long v = strtol(text, &end, 10);
  if (end == text || *end || v < min || v > 100000000) {
    fprintf(stderr, "libmongoc_driverbench: %s wants a number >= %d, not \"%s\"\n", flag, min, text);
    exit(2);
  }
  return (int)v;
}

int main(int argc, char **argv) {
  const char *uri_text = getenv("MONGODB_URI"), *which = "all";
  const char *data = OID_SPEC_DATA_DIR "/driverbench/single_and_multi_document";
  int iterations = 10, warmup = 1, threads = 1, json = 0, server_pid = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) { json = 1; continue; }
    if (i + 1 >= argc) { fprintf(stderr, "libmongoc_driverbench: bad argument %s\n", a); return 2; }
    const char *v = argv[++i];
    if (!strcmp(a, "--uri")) uri_text = v;
    else if (!strcmp(a, "--task")) which = v;
    else if (!strcmp(a, "--data")) data = v;
    else if (!strcmp(a, "--count")) count = number(a, v, 1);
    else if (!strcmp(a, "--large-count")) large_count = number(a, v, 1);
    else if (!strcmp(a, "--iterations")) iterations = number(a, v, 1);
    else if (!strcmp(a, "--warmup")) warmup = number(a, v, 0);
    else if (!strcmp(a, "--threads")) threads = number(a, v, 1);
    else if (!strcmp(a, "--server-pid")) server_pid = number(a, v, 1);
    else { fprintf(stderr, "libmongoc_driverbench: unknown argument %s\n", a); return 2; }
  }
  if (!uri_text) { fprintf(stderr, "libmongoc_driverbench: --uri (or MONGODB_URI) is needed\n"); return 2; }

  clockid_t server_clock = 0;
  if (server_pid && clock_getcpuclockid((pid_t)server_pid, &server_clock) != 0) {
    fprintf(stderr, "libmongoc_driverbench: --server-pid %d: no CPU clock for that process\n", server_pid);
    return 1;
  }

  bson_mem_vtable_t counting = {count_malloc, count_calloc, count_realloc, free, count_aligned_alloc, {0}};
  bson_mem_set_vtable(&counting);
  mongoc_init();
  bson_error_t error;
  mongoc_uri_t *uri = mongoc_uri_new_with_error(uri_text, &error);
  if (!uri) fail("bad URI", &error);
  pool = mongoc_client_pool_new(uri);
  mongoc_client_pool_set_error_api(pool, MONGOC_ERROR_API_VERSION_2);
  tweet = read_doc(data, "tweet.json");
  small_doc = read_doc(data, "small_doc.json");
  large_doc = read_doc(data, "large_doc.json");

  char wanted[1024];
  snprintf(wanted, sizeof wanted, ",%s,", which);
  int chosen = 0, named = 1;
  for (const char *p = which; *p; ++p) named += *p == ',';
  for (size_t k = 0; k < sizeof tasks / sizeof tasks[0]; ++k) {
    char key[64];
    snprintf(key, sizeof key, ",%s,", tasks[k].name);
    chosen += strcmp(which, "all") == 0 || strstr(wanted, key) != NULL;
  }
  if (chosen == 0 || (strcmp(which, "all") != 0 && chosen != named)) {
    fprintf(stderr, "libmongoc_driverbench: unknown task in \"%s\"\n", which);
    return 2;
  }

  double *walls = malloc(sizeof(double) * (size_t)iterations);
  double *cpus = malloc(sizeof(double) * (size_t)iterations);
  double *server_cpus = malloc(sizeof(double) * (size_t)iterations);
  double *syss = malloc(sizeof(double) * (size_t)iterations);
  job *jobs = malloc(sizeof(job) * (size_t)threads);
  pthread_t *ids = malloc(sizeof(pthread_t) * (size_t)threads);
  for (size_t k = 0; k < sizeof tasks / sizeof tasks[0]; ++k) {
    const task *t = &tasks[k];
    char key[64];
    snprintf(key, sizeof key, ",%s,", t->name);
    if (strcmp(which, "all") != 0 && !strstr(wanted, key)) continue;
    int ops = t->large ? large_count : count;
    int64_t docs = 0, allocs = 0;
    t->setup();
    for (int i = 0; i < warmup + iterations; ++i) {
      t->before();
      int64_t allocs0 = allocations();
      double server0 = server_pid ? clock_seconds(server_clock) : 0;
      double cpu0 = cpu_seconds(), sys0 = sys_seconds(), t0 = wall_seconds();
      for (int j = 0; j < threads; ++j) jobs[j] = (job){t, 0};
      if (threads == 1) {
        run_job(&jobs[0]);
      } else {
        for (int j = 0; j < threads; ++j) pthread_create(&ids[j], NULL, run_job, &jobs[j]);
        for (int j = 0; j < threads; ++j) pthread_join(ids[j], NULL);
      }
      double t1 = wall_seconds(), cpu1 = cpu_seconds(), sys1 = sys_seconds();
      double server1 = server_pid ? clock_seconds(server_clock) : 0;
      docs = 0;
      for (int j = 0; j < threads; ++j) docs += jobs[j].docs;
      if (i >= warmup) {
        allocs += allocations() - allocs0;
        walls[i - warmup] = t1 - t0;
        cpus[i - warmup] = cpu1 - cpu0;
        server_cpus[i - warmup] = server1 - server0;
        syss[i - warmup] = sys1 - sys0;
      }
    }
    double wall = median(walls, iterations);
    double total_ops = (double)ops * threads;
    double mb = t->op_bytes * total_ops / 1e6;
    double cpu_us = median(cpus, iterations) / total_ops * 1e6;
    /* The median iteration's CPU time, split as all the timed iterations' time splits (the kernel
       counts user and system time by its clock's ticks: see client_driverbench.cpp). */
    double cpu_sum = 0, sys_sum = 0;
    for (int k = 0; k < iterations; ++k) {
      cpu_sum += cpus[k];
      sys_sum += syss[k];
    }
    double sys_us = cpu_sum > 0 ? cpu_us * (sys_sum / cpu_sum) : 0;
    double allocs_per_op = (double)allocs / (total_ops * iterations);
    double server_us = median(server_cpus, iterations) / total_ops * 1e6;
    char server[64] = "";
    if (json) {
      if (server_pid) snprintf(server, sizeof server, ", \"server_cpu_us_per_op\": %.3f", server_us);
      printf("{\"client\": \"libmongoc\", \"task\": \"%s\", \"threads\": %d, \"ops\": %d, "
             "\"iterations\": %d, \"mb\": %.6f, \"wall_s\": %.6f, \"mbps\": %.3f, "
             "\"cpu_us_per_op\": %.3f, \"sys_us_per_op\": %.3f, \"allocs_per_op\": %.2f, "
             "\"docs\": %lld%s}\n",
             t->name, threads, ops, iterations, mb, wall, mb / wall, cpu_us, sys_us, allocs_per_op,
             (long long)docs, server);
    } else {
      if (server_pid) snprintf(server, sizeof server, "  server cpu %9.2f us/op", server_us);
      printf("%-18s %8.2f MB/s  wall %9.4f s  cpu %9.2f us/op  %7.2f allocs/op  (%d ops x %d "
             "threads, median of %d, %lld docs)%s\n",
             t->name, mb / wall, wall, cpu_us, allocs_per_op, ops, threads, iterations,
             (long long)docs, server);
    }
    fflush(stdout);
  }
  mongoc_client_pool_destroy(pool);
  mongoc_uri_destroy(uri);
  mongoc_cleanup();
  return 0;
}
