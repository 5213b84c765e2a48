/*
** translate_partition.c — PARTITIONED BY of a filesystem sink on Spark; see
** translate_partition.h.
**
** Spark's file sinks write the partition columns as folders (partitionBy),
** leave them out of the files and escape the folder names with the same
** characters as Flink.  What differs is the name of the NULL partition
** (__HIVE_DEFAULT_PARTITION__ where Flink and the embedded sink write
** __DEFAULT_PARTITION__ or 'partition.default-name'): the value is given
** as that text before the write.  Partition commit has no counterpart:
** Spark's streaming file sink makes its files visible through its
** _spark_metadata log, not a success file per partition, so the commit
** options are refused rather than ignored.
*/
#include <string.h>
#include <strings.h>

#include "spark/translate_partition.h"

static bool is_partition_col(const dp_table_def *t, const char *name) {
  for (int i = 0; i < t->npartition; i++)
    if (!strcasecmp(t->schema.cols[t->partition[i]].name, name)) return true;
  return false;
}

int dp_sx_partition_check(dp_sx *x, const dp_table_def *t) {
  for (int i = 0; i < t->noptions; i++) {
    const dp_option *o = &t->options[i];
    if (strncmp(o->key, "sink.partition-commit.", 22) != 0) continue;
    return dp_sx_refuse(x, o->span,
                        "table `%s`: '%s' cannot be carried out on Spark: Spark's file sink "
                        "commits files through its _spark_metadata log and writes no success "
                        "file per partition; leave the partition-commit options out for Spark, "
                        "or run the query on the embedded engine",
                        t->name, o->key);
  }
  return DIPPER_OK;
}

Spark__Connect__Relation *dp_sx_partition_values(dp_sx *x, const dp_table_def *t,
                                                 Spark__Connect__Relation *rows, int n,
                                                 const char *const *names) {
  if (t->npartition == 0 || !rows) return rows;
  const char *dflt = dp_sx_table_option(t, "partition.default-name");
  if (!dflt) dflt = "__DEFAULT_PARTITION__";
  Spark__Connect__Expression **cols = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *cols);
  if (!cols) return NULL;
  const dp_type *str = dp_type_of(DP_T_STRING);
  dp_span none = {0, 0, 0, 0};
  for (int i = 0; i < n; i++) {
    Spark__Connect__Expression *v = dp_sx_col(x, dp_sx_printf(x, "`%s`", names[i]));
    if (is_partition_col(t, names[i])) {
      /* coalesce(nullif(CAST(v AS STRING), ''), default) */
      v = dp_sx_cast(x, v, str, false, none);
      v = dp_sx_fn2(x, "nullif", v, dp_sx_lit_string(x, ""));
      v = dp_sx_fn2(x, "coalesce", v, dp_sx_lit_string(x, dflt));
    }
    cols[i] = dp_sx_alias(x, v, names[i]);
    if (!cols[i]) return NULL;
  }
  return dp_sx_project(x, rows, n, cols);
}

char **dp_sx_partition_names(dp_sx *x, const dp_table_def *t) {
  char **names = dp_sx_alloc(x, (size_t)(t->npartition ? t->npartition : 1) * sizeof *names);
  if (!names) return NULL;
  for (int i = 0; i < t->npartition; i++) names[i] = dp_sx_mut(t->schema.cols[t->partition[i]].name);
  return names;
}
