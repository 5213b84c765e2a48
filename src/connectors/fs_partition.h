/*
** fs_partition.h — PARTITIONED BY for the embedded filesystem sink
** (filesystem.c hands a partitioned table's rows here).
**
** Owns: the Hive-style folders `col=value/...` under the sink's path (the
** values escaped as Flink's PartitionPathUtils escapes them, NULL and ''
** as 'partition.default-name'), one part file per partition a batch
** touches, named as the unpartitioned sink names its files (so the
** exactly-once rule holds in every folder: a batch run again replaces its
** files), the partition columns left out of the files, and the partition
** commit ('sink.partition-commit.*': trigger process-time, delay, policy
** success-file).  Does not own: the options' checks at CREATE TABLE
** (plan/connectors.c refuses what is not carried out), the unpartitioned
** files, the format's options (the caller reads them).
*/
#ifndef DP_FS_PARTITION_H
#define DP_FS_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#include "connectors/connector.h"
#include "formats/formats.h"

/* How the sink encodes rows; filled by filesystem.c, copied. */
typedef struct dp_fs_format {
  bool csv, header;
  dp_csv_options csv_opts;
  const char *ext; /* "json" or "csv" (static) */
} dp_fs_format;

typedef struct dp_fs_parts dp_fs_parts;

/* Open the partitioned writer of sink k (k->table has PARTITIONED BY) over
** `dir` (exists).  tag: the query's mark with a checkpoint folder (the run
** is the query's only writer: a killed run's temporary files in partition
** folders are removed, and partitions written but not yet committed are
** found again from the files), or "" without one.  *out is freed with
** dp_fs_parts_free.  DIPPER_OK, DIPPER_NOMEM, DIPPER_IO (in k->diags). */
int dp_fs_parts_open(dp_sink *k, const char *dir, const char *tag, const dp_fs_format *fmt,
                     dp_fs_parts **out);
/* Rows of batch `batch_id`, each into its partition's temporary file. */
int dp_fs_parts_write(dp_sink *k, dp_fs_parts *p, int64_t batch_id, const dp_batch *b);
/* The batch is complete: every file it wrote is put in place, then the
** partitions whose commit is due are committed. */
int dp_fs_parts_commit(dp_sink *k, dp_fs_parts *p);
/* Frees p (NULL is fine); a batch not committed leaves nothing behind. */
void dp_fs_parts_free(dp_fs_parts *p);

/* Append the folder name of one partition value to out: `name=` then the
** value with the characters Flink escapes as %XX (upper-case hex: control
** characters, " # % ' * / : = ? \ DEL { [ ] ^), or `dflt` for NULL and ''. */
void dp_fs_partition_name(dp_buf *out, const char *name, const char *value, size_t n, bool null,
                          const char *dflt);

#endif /* DP_FS_PARTITION_H */
