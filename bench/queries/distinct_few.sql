-- distinct_few — COUNT(DISTINCT v) per group of 200,000 kept groups (no
-- window), a value among eight: N/200,000 rows per group, at most eight
-- distinct values each (about seven at 2 M rows).  The small sets' case of a
-- window's COUNT(DISTINCT user) over RocksDB ('state.backend' = 'rocksdb'):
-- what a row costs when its group holds a few values (docs/benchmarks.md,
-- "DISTINCT aggregates: few values inline, many as entries").  Micro-batches
-- of 8192 rows, update mode.
SET 'dipper.max-batch-rows' = '8192';
SET 'dipper.output-mode' = 'update';
CREATE TABLE keys_src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '1000000', 'seed' = '7',
  'fields.k.min' = '0', 'fields.k.max' = '199999',
  'fields.v.min' = '0', 'fields.v.max' = '7');
CREATE TABLE discard_sink (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink SELECT k, COUNT(DISTINCT v) FROM keys_src GROUP BY k;
