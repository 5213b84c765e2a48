-- payments.sql — the seed's pipeline: payments arrive as JSON on Kafka; for
-- each province, the total paid in 1-minute windows that slide every 30 s,
-- written as JSON to the Kafka topic `sink`.  Events up to 10 s late count.
--   dipper explain examples/payments.sql
-- To run it on the embedded engine against the local test broker:
--   scripts/kafka-local start && scripts/kafka-local create-topic payment_msg 2
--   printf '%s\n' '{"createTime":"2024-01-01 00:00:05.000","orderId":1,"payAmount":10.5,"payPlatform":0,"provinceId":1}' \
--     '{"createTime":"2024-01-01 00:01:40.000","orderId":2,"payAmount":1.0,"payPlatform":1,"provinceId":2}' \
--     | scripts/kafka-local produce payment_msg
--   dipper run examples/payments.sql          # Ctrl-C to stop; then
--   scripts/kafka-local consume sink           # the closed windows as JSON
-- The same on Spark (scripts/spark-local start): one Structured Streaming
-- query, `sink`, with a live progress line; Ctrl-C stops it cleanly:
--   dipper run --engine sc://127.0.0.1:15002 examples/payments.sql

-- Where the query keeps its progress (source offsets, window state), as the
-- seed's Spark job does with checkpointLocation: Spark requires one for a
-- Kafka sink, and a run started again resumes where the last one stopped.
SET 'execution.checkpointing.dir' = '/tmp/dipper/payments-checkpoints';

CREATE TABLE payment_msg (
  createTime  TIMESTAMP(3),
  orderId     BIGINT,
  payAmount   DOUBLE,
  payPlatform INT,
  provinceId  INT,
  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'payment_msg',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'properties.group.id' = 'dipper-payments',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE sink (
  province_id  INT,
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  pay_amount   DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'sink',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'format' = 'json'
);

INSERT INTO sink
SELECT provinceId, window_start, window_end, SUM(payAmount)
FROM TABLE(
  HOP(TABLE payment_msg, DESCRIPTOR(createTime), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
GROUP BY provinceId, window_start, window_end;
