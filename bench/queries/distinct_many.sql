-- distinct_many — COUNT(DISTINCT v) per group of ten kept groups (no window):
-- every row brings a value new to its group, so a group's distinct values
-- grow to N/10.  Over RocksDB ('state.backend' = 'rocksdb') it measures what
-- a row costs when its group holds many values (docs/benchmarks.md, "DISTINCT
-- aggregates of many values over RocksDB").  Micro-batches of 8192 rows, so
-- that a group is touched again and again as its values grow (update mode:
-- the ten groups out after every batch).
SET 'dipper.max-batch-rows' = '8192';
SET 'dipper.output-mode' = 'update';
CREATE TABLE keys_src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '1000000', 'seed' = '7',
  'fields.k.min' = '0', 'fields.k.max' = '9',
  'fields.v.kind' = 'sequence', 'fields.v.start' = '1', 'fields.v.end' = '100000000000');
CREATE TABLE discard_sink (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink SELECT k, COUNT(DISTINCT v) FROM keys_src GROUP BY k;
