/*
** handoff.h — foreachBatch from C on Spark: the client side of dipper's own
** streaming sink (src/spark/java/dipper/spark/Handoff.java, the jar that
** scripts/spark-handoff-jar builds).
**
** Spark Connect takes foreachBatch functions only as pickled Python or
** serialized Scala.  A streaming INSERT into a 'callback' table therefore
** writes to dipper's sink (format DP_HANDOFF_CLASS, translate_stream.c), whose
** addBatch(N, df) holds micro-batch N until the client took it:
**
**   poll  Command.execute_external_command (runner DP_HANDOFF_CLASS, command
**         "poll"): the id of the batch waiting, after at most wait_ms on the
**         server; none: -1;
**   read  a Read.DataSource of DP_HANDOFF_CLASS with the key, the batch id and
**         a nonce (Spark Connect caches plans by their proto: a read of
**         another batch must not look like an earlier one), run as any
**         relation: the batch's rows as Arrow, computed by this read (the
**         sink hands out the micro-batch's RDD, as Spark's ForeachBatchSink);
**   ack   "ack" of that id: addBatch returns, and Spark writes the batch's
**         commit.  Until then the batch is not committed: a client that dies
**         before its ack sees the batch again, with the same id, after a
**         restart from the checkpoint (at least once, as foreachBatch).
**
** The sink waits at most the table's 'dipper.spark.handoff-timeout' (default
** DP_HANDOFF_TIMEOUT_MS) for the ack, then fails the query with an error
** naming that option: a client that went away never leaves a query hanging.
** One batch is in flight at a time: the callback's pace is the query's.
**
** Owns: the key of a run (a UUID, made per start), the three calls, "close"
** (the sink's slot forgotten once the query ended), and where the jar is.
** Does not own: the start command (translate_stream.c), running the callback
** (api/spark_run.c through connectors/callback.c), the transport (client.c).
*/
#ifndef DP_SPARK_HANDOFF_H
#define DP_SPARK_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "spark/arrow_ipc.h"
#include "spark/client.h"

/* The sink's class: a StreamSinkProvider, RelationProvider and
** ExternalCommandRunner (its short name, for Spark users: dipper_handoff). */
#define DP_HANDOFF_CLASS "dipper.spark.Handoff"
/* The jar's file name, as built, installed and uploaded ("jars/<name>"). */
#define DP_HANDOFF_JAR_NAME "dipper-spark-handoff.jar"
#define DP_HANDOFF_TIMEOUT_MS 60000

/* The jar to upload, into path[0..cap): $DIPPER_SPARK_HANDOFF_JAR when set,
** else this build's jar, else the installed one (share/dipper/).  The value
** "server" of the variable means that the server loads the class itself
** (--jars, or spark.jars): path is then "" (upload nothing).  DIPPER_IO with
** `why` saying where it looked and how to build or name the jar. */
int dp_handoff_jar(char *path, size_t cap, dp_buf *why);

/* The id of the batch the sink under key holds, waiting up to wait_ms (the
** server caps it at 30 s) for one: *batch -1 when none came. */
int dp_handoff_poll(dp_sc *s, const char *key, int64_t wait_ms, int64_t *batch,
                    dp_sc_error *err);
/* The rows of batch `batch` (as polled); *out owns them.  nonce: a number
** never used before with this key. */
int dp_handoff_read(dp_sc *s, const char *key, int64_t batch, uint64_t nonce,
                    dp_arrow_batches *out, dp_sc_error *err);
/* Acknowledge batch `batch`: the sink returns from addBatch. */
int dp_handoff_ack(dp_sc *s, const char *key, int64_t batch, dp_sc_error *err);
/* Forget the sink under key (its query has ended). */
int dp_handoff_close(dp_sc *s, const char *key, dp_sc_error *err);

#endif /* DP_SPARK_HANDOFF_H */
