/*
** checkpoint.h — the checkpoint folder of one running query on the embedded
** engine, and the records the driver keeps there.
**
** A query run with 'execution.checkpointing.dir' = D keeps D/<query name>/:
**
**   LOCK         held (flock) while the query runs: a second process on the
**                same folder is refused, never interleaved
**   fingerprint  what the state was written by: the plan line and schema of
**                every source and every operator that keeps state, one per
**                line; a restart with other lines is refused, naming the first
**   offsets/N    written before micro-batch N runs: its watermark, its late
**                watermark, whether it is the final batch, per input the
**                bytes of the source's save_plan (the batch's bounds), and
**                'T' with its processing time (svar µs; absent in records
**                written before it was kept), so that a batch run again
**                expires by state TTL, and reads PROCTIME(), as it did
**   commits/N    written after batch N's sink and sources committed: the
**                watermark computed at its end, the max event time per
**                watermark, progress totals, per input the source's
**                save_position, and the batch whose state file is the newest
**   state/N      every stateful operator's save_state after batch N, written
**                before commits/N when a state checkpoint is due (every batch,
**                or once per 'execution.checkpointing.interval')
**
** Recovery (Spark's protocol, with Flink's interval for the state): the
** newest commit that reads back whole names the newest state S; the sources
** resume at commits/S's positions, the operators get state/S, and every
** batch logged after S (committed or not) runs again from its offsets
** record with the same bounds and watermarks, so under its old id it
** produces the same rows.  Sinks that claim exactly-once make a batch id
** written twice count once (connector.h).
**
** Every file is written whole under a temporary name, fsync'd, renamed into
** place and the folder fsync'd, so a crash leaves the old file or the new
** one, never part of one.  A file is "DPCK", a kind byte, a format version
** byte, two zero bytes, the batch id (u64), the payload's length (u32), the
** payload and a CRC-32C of everything before it.  A file that does not read
** back whole is refused with its path (DIPPER_CORRUPT); a commit record that
** does not is passed over for the one before it.  Old records are removed
** once two newer state files exist.
*/
#ifndef DP_CHECKPOINT_H
#define DP_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/diag.h"

typedef struct dp_ckpt dp_ckpt;

typedef enum dp_ckpt_kind {
  DP_CKPT_OFFSETS = 'O',
  DP_CKPT_COMMIT = 'C',
  DP_CKPT_STATE = 'S',
  DP_CKPT_FINGERPRINT = 'F',
} dp_ckpt_kind;

/* The folder `root`/`name` (made when missing), locked for this process.
** Errors (cannot make or lock it: another run holds it) go to `d`. */
int dp_ckpt_open(const char *root, const char *name, dp_diags *d, dp_ckpt **out);
void dp_ckpt_close(dp_ckpt *c); /* releases the lock; NULL is fine */
const char *dp_ckpt_dir(const dp_ckpt *c);

/* Write a record atomically (see above).  DIPPER_IO with the path and the
** system's reason (a full disk among them) when it could not be; no
** temporary file is left behind either way. */
int dp_ckpt_write(dp_ckpt *c, dp_ckpt_kind kind, int64_t batch, const void *payload, size_t n);
/* Bytes written by dp_ckpt_write since the folder was opened. */
int64_t dp_ckpt_bytes_written(const dp_ckpt *c);
/* Read record `batch` of `kind`: *payload malloc'd (the caller frees).
** DIPPER_OK; DIPPER_NAME when there is none; DIPPER_CORRUPT when it does not
** read back whole (a diagnostic names the path only if `report`). */
int dp_ckpt_read(dp_ckpt *c, dp_ckpt_kind kind, int64_t batch, bool report, uint8_t **payload,
                 size_t *n);
/* dp_ckpt_read without the copy: the file mapped read-only, checked the
** same way, m->payload its m->n bytes until dp_ckpt_unmap(m) (the state
** files of a restore, which are large).  Same codes as dp_ckpt_read. */
typedef struct dp_ckpt_mapping {
  const uint8_t *payload;
  size_t n;
  void *base; /* the mapping, for dp_ckpt_unmap */
  size_t size;
} dp_ckpt_mapping;
int dp_ckpt_map(dp_ckpt *c, dp_ckpt_kind kind, int64_t batch, bool report, dp_ckpt_mapping *m);
void dp_ckpt_unmap(dp_ckpt_mapping *m); /* a zeroed or unmapped one is fine */
/* The batch ids with a record of `kind`, ascending (malloc'd, caller frees). */
int dp_ckpt_list(dp_ckpt *c, dp_ckpt_kind kind, int64_t **ids, int *n);
/* Remove the records of `kind` with ids below `below`. */
void dp_ckpt_purge(dp_ckpt *c, dp_ckpt_kind kind, int64_t below);
/* Remove the folders D/<sub>/<any>/<N> with N (a batch id) below `below`:
** the checkpoints operators keep in folders of their own beside the records
** (state_rocks.h: <sub> is "rocksdb", <any> the operator's), purged with the
** state files that name them. */
void dp_ckpt_purge_folders(dp_ckpt *c, const char *sub, int64_t below);
/* The path of a record (valid until the next call); NULL when out of memory. */
const char *dp_ckpt_path(dp_ckpt *c, dp_ckpt_kind kind, int64_t batch);

#endif /* DP_CHECKPOINT_H */
