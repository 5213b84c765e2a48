/*
 * Handoff.java — dipper's streaming sink inside Spark: foreachBatch for a
 * client that is neither Python nor Scala (dipper's C library, over Spark
 * Connect).  The one piece of dipper that runs in the JVM; compiled by
 * scripts/spark-handoff-jar against the pinned Spark's jars, uploaded into
 * the session with AddArtifacts by the client (src/spark/handoff.c).
 *
 * One class, four roles, all found by its name (or the short name
 * "dipper_handoff"):
 *   - StreamSinkProvider: the sink of a streaming query (writeStream
 *     .format(...) with the option `key`, a UUID the client made for this run,
 *     and `timeout_ms`).  Its addBatch(N, df) takes the micro-batch's RDD, as
 *     Spark's own ForeachBatchSink does (the batch is computed once, when the
 *     client reads it), offers it under the key, and waits until the client
 *     acknowledged N.  Spark writes batch N's commit only after addBatch
 *     returns: a batch the client did not acknowledge runs again after a
 *     restart, with the same id.  No acknowledgement within `timeout_ms` fails
 *     the query with an error that says so; a stop (an interrupt) ends the
 *     wait as Spark expects.
 *   - ExternalCommandRunner (Command.execute_external_command): "poll" waits
 *     up to `wait_ms` for a batch to be offered and answers its id (no row:
 *     none); "ack" acknowledges batch `batch`; "close" forgets the key.
 *   - RelationProvider (a Read.DataSource of this class with `key` and
 *     `batch`): the rows of the offered batch, straight from its RDD
 *     (needConversion false: Spark's internal rows, no conversion).  The
 *     client adds a `nonce` option so that Spark Connect's plan cache never
 *     answers a read with an older batch's plan.
 * The offered batches live in a static map keyed by the client's key: every
 * instance Spark makes (one per lookup) in the same class loader sees them.
 */
package dipper.spark;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.ExternalCommandRunner;
import org.apache.spark.sql.execution.streaming.Sink;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.RelationProvider;
import org.apache.spark.sql.sources.StreamSinkProvider;
import org.apache.spark.sql.sources.TableScan;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

public final class Handoff
    implements StreamSinkProvider, RelationProvider, DataSourceRegister, ExternalCommandRunner {

  static final long DEFAULT_TIMEOUT_MS = 60_000;
  static final long MAX_WAIT_MS = 30_000;

  /** One sink (one run of one query): the batch offered and its acknowledgement. */
  static final class Slot {
    final String name;
    final long timeoutMs;
    long offered = -1;        // the batch id waiting for the client, -1 none
    RDD<InternalRow> rows;    // its rows (dropped once acknowledged)
    StructType schema;
    long acked = -1;          // the last batch id acknowledged

    Slot(String name, long timeoutMs) {
      this.name = name;
      this.timeoutMs = timeoutMs;
    }

    synchronized void offer(long batch, RDD<InternalRow> r, StructType s) {
      offered = batch;
      rows = r;
      schema = s;
      acked = -1;
      notifyAll();
    }

    /** Wait until batch is acknowledged; false when timeoutMs passed first. */
    synchronized boolean awaitAck(long batch) throws InterruptedException {
      long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
      while (acked != batch) {
        long left = deadline - System.nanoTime();
        if (left <= 0) return false;
        long ms = left / 1_000_000L;
        wait(ms > 0 ? ms : 1);
      }
      return true;
    }

    synchronized void withdraw(long batch) {
      if (offered == batch) {
        offered = -1;
        rows = null;
        schema = null;
      }
    }

    /** The batch offered, waiting up to waitMs for one; -1 when none. */
    synchronized long poll(long waitMs) throws InterruptedException {
      long deadline = System.nanoTime() + waitMs * 1_000_000L;
      while (offered < 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) return -1;
        long ms = left / 1_000_000L;
        wait(ms > 0 ? ms : 1);
      }
      return offered;
    }

    synchronized void ack(long batch) {
      if (offered != batch)
        throw new IllegalStateException(
            "dipper handoff: micro-batch " + batch + " of `" + name + "` is not waiting for "
                + "its acknowledgement (" + (offered < 0 ? "no batch is" : "batch " + offered + " is")
                + "); it timed out or the query stopped");
      acked = batch;
      offered = -1;
      rows = null;
      schema = null;
      notifyAll();
    }
  }

  static final Map<String, Slot> SLOTS = new ConcurrentHashMap<>();

  @Override
  public String shortName() {
    return "dipper_handoff";
  }

  private static String need(String v, String what) {
    if (v == null || v.isEmpty())
      throw new IllegalArgumentException(
          "dipper handoff: the option '" + what + "' is missing (the dipper client sets it)");
    return v;
  }

  private static long number(String v, String what) {
    try {
      return Long.parseLong(need(v, what));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "dipper handoff: the option '" + what + "' is not a whole number: " + v);
    }
  }

  private static String opt(scala.collection.immutable.Map<String, String> m, String k) {
    scala.Option<String> v = m.get(k);
    return v.isDefined() ? v.get() : null;
  }

  private static Slot slot(String key) {
    Slot s = SLOTS.get(need(key, "key"));
    if (s == null)
      throw new IllegalStateException(
          "dipper handoff: no sink runs under the key " + key + " in this Spark session "
              + "(its query ended, or it was started in another session)");
    return s;
  }

  /** Rethrow e (an InterruptedException) as it is: Spark reads it as a stop. */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> RuntimeException rethrow(Throwable e) throws E {
    throw (E) e;
  }

  /* ---- the sink ---- */

  static final class HandoffSink implements Sink {
    final Slot slot;

    HandoffSink(Slot slot) {
      this.slot = slot;
    }

    @Override
    public void addBatch(long batchId, Dataset<Row> data) {
      // As ForeachBatchSink: the incremental plan's RDD, computed when read.
      RDD<InternalRow> rdd = data.queryExecution().toRdd();
      slot.offer(batchId, rdd, data.schema());
      boolean acked;
      try {
        acked = slot.awaitAck(batchId);
      } catch (InterruptedException e) {
        slot.withdraw(batchId);
        throw rethrow(e);
      }
      if (!acked) {
        slot.withdraw(batchId);
        throw new IllegalStateException(
            "dipper handoff: the dipper client did not take and acknowledge micro-batch "
                + batchId + " of `" + slot.name + "` within " + slot.timeoutMs + " ms, so the "
                + "query stops (the client went away, or stopped stepping the query, or its "
                + "callback took longer: raise 'dipper.spark.handoff-timeout' on the callback "
                + "table); the batch runs again, with the same id, when the query restarts "
                + "from its checkpoint");
      }
    }

    @Override
    public String toString() {
      return "DipperHandoff[" + slot.name + "]";
    }
  }

  @Override
  public Sink createSink(SQLContext ctx, scala.collection.immutable.Map<String, String> options,
                         scala.collection.immutable.Seq<String> partitionColumns, OutputMode mode) {
    String key = need(opt(options, "key"), "key");
    String t = opt(options, "timeout_ms");
    long timeout = t == null ? DEFAULT_TIMEOUT_MS : number(t, "timeout_ms");
    if (timeout <= 0)
      throw new IllegalArgumentException("dipper handoff: 'timeout_ms' must be above 0");
    String name = opt(options, "name");
    Slot s = new Slot(name != null ? name : key, timeout);
    SLOTS.put(key, s);
    return new HandoffSink(s);
  }

  /* ---- the read of an offered batch ---- */

  static final class Rows extends BaseRelation implements TableScan {
    final SQLContext ctx;
    final StructType schema;
    final RDD<InternalRow> rdd;

    Rows(SQLContext ctx, StructType schema, RDD<InternalRow> rdd) {
      this.ctx = ctx;
      this.schema = schema;
      this.rdd = rdd;
    }

    @Override
    public SQLContext sqlContext() {
      return ctx;
    }

    @Override
    public StructType schema() {
      return schema;
    }

    @Override
    public boolean needConversion() {
      return false; // buildScan hands out Spark's internal rows
    }

    @Override
    @SuppressWarnings("unchecked")
    public RDD<Row> buildScan() {
      return (RDD<Row>) (RDD<?>) rdd;
    }
  }

  @Override
  public BaseRelation createRelation(SQLContext ctx,
                                     scala.collection.immutable.Map<String, String> options) {
    Slot s = slot(opt(options, "key"));
    long batch = number(opt(options, "batch"), "batch");
    synchronized (s) {
      if (s.offered != batch || s.rows == null)
        throw new IllegalStateException(
            "dipper handoff: micro-batch " + batch + " of `" + s.name + "` is not offered ("
                + (s.offered < 0 ? "none is" : "batch " + s.offered + " is") + ")");
      return new Rows(ctx, s.schema, s.rows);
    }
  }

  /* ---- poll, ack, close ---- */

  @Override
  public String[] executeCommand(String command, CaseInsensitiveStringMap options) {
    String key = need(options.get("key"), "key");
    switch (command) {
      case "poll": {
        long wait = number(options.getOrDefault("wait_ms", "0"), "wait_ms");
        long id;
        try {
          id = slot(key).poll(Math.max(0, Math.min(wait, MAX_WAIT_MS)));
        } catch (InterruptedException e) {
          throw rethrow(e);
        }
        return id < 0 ? new String[0] : new String[] {Long.toString(id)};
      }
      case "ack":
        slot(key).ack(number(options.get("batch"), "batch"));
        return new String[] {"ok"};
      case "close":
        SLOTS.remove(key);
        return new String[] {"ok"};
      default:
        throw new IllegalArgumentException(
            "dipper handoff: unknown command '" + command + "' (poll, ack, close)");
    }
  }
}
