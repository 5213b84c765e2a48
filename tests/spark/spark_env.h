/*
** spark_env.h — what every test against a Spark Connect server needs: the
** server's address, a monotonic clock and the handle's diagnostics printed.
** Static inline, so that a test that uses one of them does not warn about
** the others.
*/
#ifndef DP_TEST_SPARK_ENV_H
#define DP_TEST_SPARK_ENV_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dipper.h"

/* The server: $DIPPER_SPARK_REMOTE ("sc://host:port") if set, else
** sc://127.0.0.1:$DIPPER_SPARK_PORT, else sc://127.0.0.1:15002
** (scripts/spark-local's default): a second server on another port serves a
** developer without disturbing the shared one. */
static inline const char *spark_remote(void) {
  static char uri[256];
  const char *r = getenv("DIPPER_SPARK_REMOTE"), *port = getenv("DIPPER_SPARK_PORT");
  if (r && *r)
    snprintf(uri, sizeof uri, "%s", r);
  else
    snprintf(uri, sizeof uri, "sc://127.0.0.1:%s", port && *port ? port : "15002");
  return uri;
}

static inline int64_t spark_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Every diagnostic the handle holds, rendered, on stderr. */
static inline void spark_print_diags(dipper *db) {
  for (int i = 0; i < dipper_diag_count(db); i++) {
    char *r = dipper_diag_render(db, i);
    fprintf(stderr, "  (diagnostic) %s", r ? r : "(no render)\n");
    dipper_free(r);
  }
}

#endif
