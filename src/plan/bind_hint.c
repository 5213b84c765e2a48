/*
** bind_hint.c — the STATE_TTL hint, STATE_TTL('orders' = '1 d') in a hint
** comment after SELECT, Flink's per-operator idle state retention.
**
** As in Flink, each key names an input of the query block — a table, its
** alias or a view, as written in FROM — and the value is a duration in
** 'table.exec.state.ttl''s grammar ('1 d', '12 h', '3600000' ms; '0' keeps
** the state forever).  The block's regular joins take the hint of each of
** their two inputs, its aggregation (and SELECT DISTINCT) the hint of its one
** input; a hint does not reach into views or subqueries, which carry their
** own.  A key that names no input of the block is an error, as in Flink.
** The analysis (analyze.c) turns the hint into the node's state_ttl.
**
** Owns: matching hint keys with FROM items.  Does not own: the hint's
** grammar (sql/parse_hint.c), what the TTL does (exec/state_ttl.h).
*/
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "plan/binder_int.h"

bool dp_bind_ttl_begin(dp_binder *b, const dp_ast_select *s, dp_bttl_saved *saved) {
  saved->block = b->ttl_block;
  saved->value = b->ttl_value;
  saved->used = b->ttl_used;
  b->ttl_block = NULL;
  b->ttl_value = NULL;
  b->ttl_used = NULL;
  if (!s || s->nttl == 0) return true;
  int64_t *v = dp_arena_calloc(b->a, (size_t)s->nttl, sizeof *v);
  bool *used = dp_arena_calloc(b->a, (size_t)s->nttl, sizeof *used);
  if (!v || !used) return false;
  for (int i = 0; i < s->nttl; i++) {
    const dp_ast_hint_kv *kv = &s->ttl[i];
    for (int j = 0; j < i; j++)
      if (strcasecmp(s->ttl[j].key, kv->key) == 0) {
        dp_error(b->d, DIPPER_SYNTAX, kv->span,
                 "the STATE_TTL hint names `%s` twice: give each input one duration", kv->key);
        return false;
      }
    int64_t us = 0;
    if (dp_parse_duration(kv->value, &us) != DIPPER_OK || us < 0) {
      dp_error(b->d, DIPPER_OPTION, kv->span,
               "STATE_TTL('%s' = '%s'): '%s' is not a duration; write e.g. '1 d', '12 h', "
               "'30 min' or '3600000' (milliseconds)",
               kv->key, kv->value, kv->value);
      return false;
    }
    v[i] = us == 0 ? DP_TTL_FOREVER : us;
  }
  b->ttl_block = s;
  b->ttl_value = v;
  b->ttl_used = used;
  return true;
}

/* The name a FROM item is known by in its block. */
static const char *from_name(const dp_ast_from *f) {
  if (!f) return NULL;
  if (f->alias.name.name) return f->alias.name.name;
  if (f->kind == DP_AF_TABLE && f->u.table.name.n > 0)
    return f->u.table.name.parts[f->u.table.name.n - 1].name;
  return NULL;
}

int64_t dp_bind_ttl_for(dp_binder *b, const dp_ast_from *f) {
  const dp_ast_select *s = b->ttl_block;
  const char *name = from_name(f);
  if (!s || !name) return 0;
  for (int i = 0; i < s->nttl; i++)
    if (strcasecmp(s->ttl[i].key, name) == 0) {
      b->ttl_used[i] = true;
      return b->ttl_value[i];
    }
  return 0;
}

/* "a, b and c": the names of the block's inputs, for the message. */
static void input_names(const dp_ast_from *f, char *buf, size_t cap, size_t *len) {
  if (!f) return;
  if (f->kind == DP_AF_JOIN) {
    input_names(f->u.join.left, buf, cap, len);
    input_names(f->u.join.right, buf, cap, len);
    return;
  }
  const char *n = from_name(f);
  if (!n || *len + 4 >= cap) return;
  int w = snprintf(buf + *len, cap - *len, "%s`%s`", *len ? ", " : "", n);
  if (w > 0) *len += (size_t)w < cap - *len ? (size_t)w : cap - *len - 1;
}

bool dp_bind_ttl_end(dp_binder *b, dp_bttl_saved *saved, bool ok) {
  const dp_ast_select *s = b->ttl_block;
  for (int i = 0; ok && s && i < s->nttl; i++) {
    if (b->ttl_used[i]) continue;
    char names[256] = "";
    size_t len = 0;
    input_names(s->from, names, sizeof names, &len);
    dp_error(b->d, DIPPER_NAME, s->ttl[i].span,
             "the STATE_TTL hint names `%s`, which is not an input of this query block's join "
             "or aggregation; %s%s",
             s->ttl[i].key, len ? "its inputs are " : "it has no named input",
             len ? names : "");
    ok = false;
  }
  b->ttl_block = saved->block;
  b->ttl_value = saved->value;
  b->ttl_used = saved->used;
  return ok;
}
