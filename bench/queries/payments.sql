-- payments.sql — the seed pipeline (examples/payments_local.sql) as a
-- benchmark: the same datagen source and sliding-window sums, bounded by
-- 'number-of-rows' (rewritten to --events) with no 'rows-per-second', so it
-- runs as fast as it can, into a sink that drops the rows.
--   dipper run bench/queries/payments.sql
CREATE TABLE payment_msg (
  createTime  TIMESTAMP(3),
  orderId     BIGINT,
  payAmount   DOUBLE,
  payPlatform INT,
  provinceId  INT,
  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '10000000',
  'seed' = '42',
  'fields.payAmount.min' = '1',
  'fields.payAmount.max' = '1000',
  'fields.payPlatform.min' = '0',
  'fields.payPlatform.max' = '1',
  'fields.provinceId.min' = '0',
  'fields.provinceId.max' = '5'
);

CREATE TABLE sink (
  province_id  INT,
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  pay_amount   DOUBLE
) WITH ('connector' = 'blackhole');

INSERT INTO sink
SELECT provinceId, window_start, window_end, SUM(payAmount)
FROM TABLE(
  HOP(TABLE payment_msg, DESCRIPTOR(createTime), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
GROUP BY provinceId, window_start, window_end;
