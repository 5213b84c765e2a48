/*
** upsert_kafka.c — the `upsert-kafka` sink (Flink's upsert-kafka connector):
** a Kafka topic as the changelog of a table keyed by its PRIMARY KEY.
**
** Each row is one message keyed by the primary key columns in 'key.format';
** an insertion or an update writes the row in 'value.format' (all columns,
** or 'value.fields-include' = 'EXCEPT_KEY' without the key's), and a
** deletion writes a tombstone: the key with a NULL value, which Kafka's log
** compaction and every upsert-kafka reader take as "the key is gone".  The
** rows come from the sink operator (exec/op_sink.c) as upserts: the -U rows
** of an updating query are left out there, the -D rows kept with their
** change kind, which the kafka sink writes as tombstones.
**
** The producer, the formats, the delivery guarantees ('at-least-once',
** 'exactly-once' with 'sink.transactional-id-prefix', 'none') and the
** partitioning by key are the kafka sink's own (kafka_sink.c): this file
** checks what upsert-kafka needs on top and hands every call on.  The
** options are checked at CREATE TABLE (plan/connectors.c): 'topic',
** 'properties.bootstrap.servers', 'key.format' and 'value.format' required,
** a PRIMARY KEY required.  Reading an upsert-kafka table is refused there:
** the embedded engine has no upsert source yet.
*/
#include "connectors/connector.h"
#include "plan/catalog.h"

extern const dp_sink_class dp_sink_kafka;

static const dp_span nowhere = {0, 0, 0, 0};

static int uk_open(dp_sink *k) {
  if (!k->table || k->table->npk == 0)
    return dp_error(k->diags, DIPPER_OPTION, nowhere,
                    "an upsert-kafka table needs a PRIMARY KEY (...) NOT ENFORCED: its columns "
                    "are each message's key");
  return dp_sink_kafka.open(k);
}

static int uk_write(dp_sink *k, int64_t batch_id, const dp_batch *b) {
  return dp_sink_kafka.write(k, batch_id, b);
}

static int uk_commit(dp_sink *k, int64_t batch_id) { return dp_sink_kafka.commit(k, batch_id); }

static void uk_close(dp_sink *k) { dp_sink_kafka.close(k); }

const dp_sink_class dp_sink_upsert_kafka = {
    .name = "upsert-kafka",
    .open = uk_open,
    .write = uk_write,
    .commit = uk_commit,
    .close = uk_close,
};
