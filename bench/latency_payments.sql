-- bench/latency_payments.sql — the seed pipeline (examples/payments.sql) for
-- bench/latency.sh: JSON payments from topic ${IN} to the HOP 1 min / 30 s
-- sums per province on topic ${OUT}, with no trigger (as fast as possible).
-- The line below is replaced by the run's SET lines (a checkpoint folder, on Spark).
${SETS}
CREATE TABLE payment_msg (
  createTime  TIMESTAMP(3),
  orderId     BIGINT,
  payAmount   DOUBLE,
  payPlatform INT,
  provinceId  INT,
  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '${IN}',
  'properties.bootstrap.servers' = '${BROKERS}',
  'properties.group.id' = 'dipper-latency',
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
  'topic' = '${OUT}',
  'properties.bootstrap.servers' = '${BROKERS}',
  'format' = 'json'
);

INSERT INTO sink
SELECT provinceId, window_start, window_end, SUM(payAmount)
FROM TABLE(
  HOP(TABLE payment_msg, DESCRIPTOR(createTime), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
GROUP BY provinceId, window_start, window_end;
