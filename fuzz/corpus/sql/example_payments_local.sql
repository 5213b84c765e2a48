-- payments_local.sql — payments.sql with nothing to install: a bounded
-- datagen source of 100,000 random payments instead of Kafka, and the
-- console instead of the sink topic.  The same window aggregation.

CREATE TABLE payment_msg (
  createTime  TIMESTAMP(3),
  orderId     BIGINT,
  payAmount   DOUBLE,
  payPlatform INT,
  provinceId  INT,
  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '100000',
  'rows-per-second' = '10000',
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
) WITH (
  'connector' = 'console'
);

INSERT INTO sink
SELECT provinceId, window_start, window_end, SUM(payAmount)
FROM TABLE(
  HOP(TABLE payment_msg, DESCRIPTOR(createTime), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
GROUP BY provinceId, window_start, window_end;
