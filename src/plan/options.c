/*
** options.c — session options: SET / RESET and the values they may take.
**
** Owns: the list of known keys with their value rules, the option store of a
** catalog, and the duration parser that SET values and connector options
** share.  A known key is checked when it is SET, so that a typo in
** 'execution.runtime-mode' fails at that line, not when a query runs.  Keys in
** the namespaces other tools own (table.*, sql-client.*, spark.*) are kept as
** written: Flink scripts set them, and spark.* ones are handed to Spark.
**
** Does not own: the meaning of the options (the binder reads the runtime mode
** and output mode, the engines read the trigger and checkpoint directory).
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/sc_uri.h"
#include "plan/catalog.h"
#include "plan/catalog_int.h"

/* ---- durations ---- */

static int lower(int ch) { return (ch >= 'A' && ch <= 'Z') ? ch + ('a' - 'A') : ch; }
static bool is_space(int ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }
static bool is_digit(int ch) { return ch >= '0' && ch <= '9'; }
static bool is_alpha(int ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }

static bool eq_ci_n(const char *a, size_t n, const char *b) {
  size_t i = 0;
  for (; i < n; i++)
    if (!b[i] || lower((unsigned char)a[i]) != lower((unsigned char)b[i])) return false;
  return b[i] == '\0';
}

static bool eq_ci(const char *a, const char *b) { return eq_ci_n(a, strlen(a), b); }

/* Nanoseconds per unit, or 0 for an unknown unit. */
static int64_t unit_nanos(const char *u, size_t n) {
  static const struct { const char *names; int64_t nanos; } units[] = {
      {"d day days", 86400 * INT64_C(1000000000)},
      {"h hr hrs hour hours", 3600 * INT64_C(1000000000)},
      {"m min mins minute minutes", 60 * INT64_C(1000000000)},
      {"s sec secs second seconds", INT64_C(1000000000)},
      {"ms milli millis millisecond milliseconds", INT64_C(1000000)},
      {"us micro micros microsecond microseconds", INT64_C(1000)},
      {"ns nano nanos nanosecond nanoseconds", 1},
  };
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    const char *p = units[i].names;
    while (*p) {
      size_t len = strcspn(p, " ");
      if (len == n) {
        bool same = true;
        for (size_t k = 0; k < n; k++) same &= lower((unsigned char)u[k]) == p[k];
        if (same) return units[i].nanos;
      }
      p += len;
      while (*p == ' ') p++;
    }
  }
  return 0;
}

int dp_parse_duration(const char *s, int64_t *micros) {
  if (!s || !micros) return DIPPER_OPTION;
  const char *p = s;
  dp_i128 total_ns = 0;
  int parts = 0;
  while (is_space((unsigned char)*p)) p++;
  if (!*p) return DIPPER_OPTION;
  while (*p) {
    if (!is_digit((unsigned char)*p)) return DIPPER_OPTION;
    dp_i128 whole = 0, frac = 0, frac_scale = 1;
    while (is_digit((unsigned char)*p)) {
      whole = whole * 10 + (*p++ - '0');
      if (whole > INT64_MAX) return DIPPER_OPTION;
    }
    if (*p == '.') {
      p++;
      if (!is_digit((unsigned char)*p)) return DIPPER_OPTION;
      while (is_digit((unsigned char)*p)) {
        /* Digits beyond nanoseconds of a day cannot change the µs result. */
        if (frac_scale < INT64_C(1000000000000000)) {
          frac = frac * 10 + (*p - '0');
          frac_scale *= 10;
        }
        p++;
      }
    }
    while (is_space((unsigned char)*p)) p++;
    const char *unit = p;
    while (is_alpha((unsigned char)*p)) p++;
    size_t ulen = (size_t)(p - unit);
    int64_t nanos;
    if (ulen == 0) {
      /* A bare number means milliseconds, but only standing alone: "1 min 30"
         is more likely a slip than 1 min and 30 ms. */
      if (parts > 0 || *p) return DIPPER_OPTION;
      nanos = INT64_C(1000000);
    } else {
      nanos = unit_nanos(unit, ulen);
      if (nanos == 0) return DIPPER_OPTION;
    }
    total_ns += whole * nanos + frac * nanos / frac_scale;
    if (total_ns / 1000 > INT64_MAX) return DIPPER_OPTION;
    parts++;
    while (is_space((unsigned char)*p)) p++;
  }
  *micros = (int64_t)(total_ns / 1000);
  return DIPPER_OK;
}

/* ---- known keys ---- */

typedef enum value_rule {
  V_ENUM,       /* one of `values` ('|'-separated), any case; stored lower-case */
  V_PATH,       /* a non-empty path */
  V_DURATION,   /* a duration (dp_parse_duration) */
  V_DURATION_POS, /* a duration > 0 */
  V_ENGINE,     /* embedded | sc://host[:port][/;k=v;...] */
  V_TRIGGER,    /* processing-time <d> | available-now | once | real-time <d> */
  V_POSINT,     /* an integer from 1 to the key's `max` (1,000,000 when 0) */
  V_TEXT,       /* any text */
} value_rule;

typedef struct known_key {
  const char *key;
  value_rule rule;
  const char *values; /* V_ENUM: the allowed values; otherwise how to write one */
  long long max;      /* V_POSINT: the largest value, 0 for POSINT_MAX */
} known_key;

#define POSINT_MAX 1000000

/* The documented session options; docs/sql.md "Session options" lists them. */
static const known_key known_keys[] = {
    {"execution.runtime-mode", V_ENUM, "streaming|batch"},
    {"execution.checkpointing.dir", V_PATH, "a directory path, e.g. '/var/lib/dipper/ckpt'"},
    {"execution.checkpointing.interval", V_DURATION_POS, "a duration, e.g. '10 s' or '1 min'"},
    {"dipper.engine", V_ENGINE, "'embedded' or 'sc://host:port[/;token=..;use_ssl=true]'"},
    {"dipper.trigger", V_TRIGGER,
     "'processing-time 10 s', 'available-now', 'once' or 'real-time 5 s'"},
    {"dipper.output-mode", V_ENUM, "append|update|complete"},
    /* Where operator state lives (Flink's key and names): in memory, or in
       RocksDB for state larger than memory (exec/state_rocks.h). */
    {"state.backend", V_ENUM, "hashmap|rocksdb"},
    /* Rows per source per micro-batch (Spark's maxOffsetsPerTrigger). */
    {"dipper.max-batch-rows", V_POSINT, "a whole number >= 1"},
    /* With 'state.backend' = 'rocksdb': the bytes of an aggregation's groups
       kept in memory between batches (exec/agg_rocks.c's write-back cache). */
    {"dipper.rocksdb.aggregate-cache-bytes", V_POSINT, "a whole number of bytes >= 1",
     INT64_C(1) << 40},
    /* With 'state.backend' = 'rocksdb': a group's DISTINCT values stay in its
       record up to these bytes, past them entries of their own (agg_rocks.c). */
    {"dipper.rocksdb.distinct-inline-bytes", V_POSINT, "a whole number of bytes >= 1"},
    /* Spark's global watermark over several inputs: their minimum (Spark's
       and the embedded engine's rule) or maximum (Spark's
       spark.sql.streaming.multipleWatermarkPolicy = max: faster results, the
       slower input's late rows dropped).  Read by the Spark backend only. */
    {"dipper.spark.multiple-watermark-policy", V_ENUM, "min|max"},
    {"table.exec.source.idle-timeout", V_DURATION, "a duration, e.g. '30 s' ('0' disables)"},
    /* Flink's idle state retention: a key of a GROUP BY (exec/state_ttl.h)
       not written for this long, in processing time, is dropped. */
    {"table.exec.state.ttl", V_DURATION, "a duration, e.g. '1 h', '1 d' or '3600000' (ms); '0' keeps state forever"},
    {"pipeline.name", V_TEXT, "any name"},
    {"parallelism.default", V_POSINT, "a whole number >= 1"},
    {"table.local-time-zone", V_TEXT, "a time zone, e.g. 'UTC' or 'Europe/Berlin'"},
};

/* Namespaces whose keys are kept as written. */
static const char *const open_namespaces[] = {"table.", "sql-client.", "spark."};

static const known_key *find_known(const char *key) {
  for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++)
    if (strcmp(known_keys[i].key, key) == 0) return &known_keys[i];
  return NULL;
}

static bool in_open_namespace(const char *key) {
  for (size_t i = 0; i < sizeof open_namespaces / sizeof open_namespaces[0]; i++) {
    size_t n = strlen(open_namespaces[i]);
    if (strncmp(key, open_namespaces[i], n) == 0 && key[n]) return true;
  }
  return false;
}

/* "a, b or c" from "a|b|c", into buf. */
static const char *list_values(char *buf, size_t cap, const char *values) {
  size_t len = 0;
  buf[0] = '\0';
  const char *p = values;
  while (*p && len + 4 < cap) {
    size_t n = strcspn(p, "|");
    const char *next = p + n + (p[n] ? 1 : 0);
    const char *sep = len == 0 ? "" : (*next ? ", " : " or ");
    int w = snprintf(buf + len, cap - len, "%s'%.*s'", sep, (int)n, p);
    if (w < 0) break;
    len += (size_t)w;
    if (len >= cap) {
      len = cap - 1;
      break;
    }
    p = next;
  }
  return buf;
}

/* The canonical spelling of `v` among `values` into out; false if absent. */
static bool enum_match(const char *values, const char *v, char *out, size_t cap) {
  const char *p = values;
  while (*p) {
    size_t n = strcspn(p, "|");
    if (eq_ci_n(p, n, v) && n < cap) {
      memcpy(out, p, n);
      out[n] = '\0';
      return true;
    }
    p += n + (p[n] ? 1 : 0);
  }
  return false;
}

/* ---- triggers ---- */

/* Canonical trigger text into out, or NULL with *why set. */
static const char *trigger_canonical(char *out, size_t cap, const char *v, const char **why) {
  while (is_space((unsigned char)*v)) v++;
  size_t n = strlen(v);
  while (n > 0 && is_space((unsigned char)v[n - 1])) n--;
  if (eq_ci_n(v, n, "once")) return "once";
  if (eq_ci_n(v, n, "available-now")) return "available-now";
  static const char *const timed[] = {"processing-time", "real-time"};
  for (size_t i = 0; i < 2; i++) {
    size_t kw = strlen(timed[i]);
    if (n > kw && eq_ci_n(v, kw, timed[i]) && is_space((unsigned char)v[kw])) {
      char dur[64];
      size_t dn = n - kw;
      if (dn >= sizeof dur) break;
      memcpy(dur, v + kw, dn);
      dur[dn] = '\0';
      int64_t us = 0;
      if (dp_parse_duration(dur, &us) != DIPPER_OK) {
        *why = "the interval after the trigger kind is not a duration";
        return NULL;
      }
      if (i == 1 && us <= 0) {
        *why = "a real-time batch duration must be greater than zero";
        return NULL;
      }
      char fmt[48];
      dp_format_duration(fmt, sizeof fmt, us);
      snprintf(out, cap, "%s %s", timed[i], fmt);
      return out;
    }
    if (eq_ci_n(v, n, timed[i])) {
      *why = "the trigger kind needs an interval";
      return NULL;
    }
  }
  *why = "unknown trigger";
  return NULL;
}

/* ---- the store ---- */

static int store(dp_catalog *c, const char *key, const char *value) {
  const char *v = dp_arena_strdup(c->arena, value);
  if (!v) return DIPPER_NOMEM;
  for (int i = 0; i < c->noptions; i++)
    if (strcmp(c->options[i].key, key) == 0) {
      c->options[i].value = v;
      return DIPPER_OK;
    }
  if (dp_arena_grow_i(c->arena, &c->options, &c->options_cap, c->noptions + 1,
                      sizeof *c->options, 16))
    return DIPPER_NOMEM;
  const char *k = dp_arena_strdup(c->arena, key);
  if (!k) return DIPPER_NOMEM;
  c->options[c->noptions].key = k;
  c->options[c->noptions].value = v;
  c->noptions++;
  return DIPPER_OK;
}

int dp_catalog_set(dp_catalog *c, dp_diags *d, const dp_ast_set *s) {
  if (!c || !d || !s) return DIPPER_MISUSE;
  if (!s->key) return DIPPER_OK; /* SET alone lists the options: nothing changes */
  const char *key = s->key;
  if (!s->value)
    return dp_error(d, DIPPER_OPTION, s->key_span, "SET '%s' needs a value: SET '%s' = '...'", key,
                    key);
  const char *value = s->value;
  const known_key *k = find_known(key);
  if (!k) {
    if (in_open_namespace(key)) return store(c, key, value);
    char users[128];
    if (dp_connector_option_users(key, users, sizeof users) > 0)
      return dp_error(d, DIPPER_OPTION, s->key_span,
                      "'%s' is a table option, not a session option: put it in the WITH (...) "
                      "of each table it is for (connectors %s), e.g. WITH (..., '%s' = '%s')",
                      key, users, key, value);
    const char *names[sizeof known_keys / sizeof known_keys[0]];
    for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++) names[i] = known_keys[i].key;
    const char *near = dp_closest_of(key, names, (int)(sizeof names / sizeof names[0]));
    if (near)
      return dp_error(d, DIPPER_OPTION, s->key_span, "unknown option '%s'; did you mean '%s'?", key,
                      near);
    return dp_error(d, DIPPER_OPTION, s->key_span,
                    "unknown option '%s'; dipper knows execution.runtime-mode, "
                    "execution.checkpointing.dir, execution.checkpointing.interval, dipper.engine, "
                    "dipper.trigger, dipper.output-mode, pipeline.name, parallelism.default, and "
                    "keeps table.*, sql-client.* and spark.* keys as written",
                    key);
  }
  char buf[256];
  switch (k->rule) {
  case V_ENUM: {
    char canon[64];
    if (!enum_match(k->values, value, canon, sizeof canon))
      return dp_error(d, DIPPER_OPTION, s->value_span, "'%s' = '%s' is not allowed; write %s", key,
                      value, list_values(buf, sizeof buf, k->values));
    return store(c, key, canon);
  }
  case V_PATH:
  case V_TEXT: {
    const char *p = value;
    while (is_space((unsigned char)*p)) p++;
    if (!*p)
      return dp_error(d, DIPPER_OPTION, s->value_span, "'%s' must not be empty; write %s", key,
                      k->values);
    return store(c, key, value);
  }
  case V_DURATION:
  case V_DURATION_POS: {
    int64_t us = 0;
    if (dp_parse_duration(value, &us) != DIPPER_OK)
      return dp_error(d, DIPPER_OPTION, s->value_span,
                      "'%s' = '%s' is not a duration; write %s (units: ms, s, min, h, d)", key,
                      value, k->values);
    if (k->rule == V_DURATION_POS && us <= 0)
      return dp_error(d, DIPPER_OPTION, s->value_span,
                      "'%s' must be greater than zero; write %s", key, k->values);
    return store(c, key, value);
  }
  case V_ENGINE: {
    if (eq_ci(value, "embedded")) return store(c, key, "embedded");
    /* the parser the Spark client connects with: what passes here connects */
    dp_sc_uri uri;
    dp_buf why = DP_BUF_INIT;
    int rc = dp_sc_uri_parse(value, &uri, &why);
    dp_sc_uri_free(&uri);
    if (rc == DIPPER_OK) {
      dp_buf_free(&why);
      return store(c, key, value);
    }
    /* the parser names the string first: said once here */
    const char *text = why.len ? dp_buf_cstr(&why) : "out of memory";
    size_t vlen = strlen(value);
    if (strncmp(text, "connection string '", 19) == 0 && strncmp(text + 19, value, vlen) == 0 &&
        strncmp(text + 19 + vlen, "', ", 3) == 0)
      text += 19 + vlen + 3;
    rc = dp_error(d, rc == DIPPER_NOMEM ? DIPPER_NOMEM : DIPPER_OPTION, s->value_span,
                  "'%s' = '%s' is not an engine: %s; write 'embedded' or "
                  "'sc://host:port[/;token=..;use_ssl=true]'",
                  key, value, text);
    dp_buf_free(&why);
    return rc;
  }
  case V_TRIGGER: {
    const char *why = NULL;
    const char *canon = trigger_canonical(buf, sizeof buf, value, &why);
    if (!canon)
      return dp_error(d, DIPPER_OPTION, s->value_span, "'%s' = '%s' is not a trigger (%s); write %s",
                      key, value, why, k->values);
    return store(c, key, canon);
  }
  case V_POSINT: {
    char *end = NULL;
    long long max = k->max ? k->max : POSINT_MAX;
    errno = 0;
    long long n = strtoll(value, &end, 10);
    if (end == value || *end || errno || n < 1 || n > max)
      return dp_error(d, DIPPER_OPTION, s->value_span,
                      "'%s' = '%s' is not allowed; write %s, at most %lld", key, value, k->values,
                      max);
    return store(c, key, value);
  }
  }
  return DIPPER_INTERNAL;
}

int dp_catalog_reset(dp_catalog *c, const char *key) {
  if (!c) return DIPPER_MISUSE;
  if (!key) {
    c->noptions = 0;
    return DIPPER_OK;
  }
  for (int i = 0; i < c->noptions; i++)
    if (strcmp(c->options[i].key, key) == 0) {
      memmove(c->options + i, c->options + i + 1,
              (size_t)(c->noptions - i - 1) * sizeof *c->options);
      c->noptions--;
      break;
    }
  return DIPPER_OK;
}

const char *dp_catalog_option(const dp_catalog *c, const char *key) {
  if (!c || !key) return NULL;
  for (int i = 0; i < c->noptions; i++)
    if (strcmp(c->options[i].key, key) == 0) return c->options[i].value;
  return NULL;
}

bool dp_catalog_option_at(const dp_catalog *c, int i, const char **key, const char **value) {
  if (!c || i < 0 || i >= c->noptions) return false;
  *key = c->options[i].key;
  *value = c->options[i].value;
  return true;
}

bool dp_catalog_streaming(const dp_catalog *c) {
  const char *mode = dp_catalog_option(c, "execution.runtime-mode");
  return !mode || strcmp(mode, "batch") != 0;
}
