/*
** translate_partition.h — PARTITIONED BY of a filesystem sink on Spark, for
** the streaming file sink (translate_stream.c) and the batch write
** (translate.c): the partition columns (Spark's partitionBy), their values
** as the embedded sink names its folders, and the partition options Spark
** cannot carry out, refused with the reason.
*/
#ifndef DP_SPARK_TRANSLATE_PARTITION_H
#define DP_SPARK_TRANSLATE_PARTITION_H

#include "spark/translate_int.h"

/* DIPPER_OK, or a refusal (dp_sx_refuse) of an option of t's partitions that
** Spark's file sink does not carry out. */
int dp_sx_partition_check(dp_sx *x, const dp_table_def *t);

/* rows (the sink's n columns, named `names`) with each partition column's
** value replaced by the text the embedded sink gives its folder: the value
** as a STRING, and 'partition.default-name' (default __DEFAULT_PARTITION__)
** for NULL and '' (Spark would write __HIVE_DEFAULT_PARTITION__).  Spark
** escapes the folder names as Flink and the embedded sink do.  NULL with
** x->rc set on failure. */
Spark__Connect__Relation *dp_sx_partition_values(dp_sx *x, const dp_table_def *t,
                                                 Spark__Connect__Relation *rows, int n,
                                                 const char *const *names);

/* The partition columns' names (t->npartition of them) in x's arena. */
char **dp_sx_partition_names(dp_sx *x, const dp_table_def *t);

#endif /* DP_SPARK_TRANSLATE_PARTITION_H */
