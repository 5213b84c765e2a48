-- payments_local.sql — payments.sql with nothing to install: a bounded
-- datagen source of 100,000 random payments instead of Kafka, and the
-- console instead of the sink topic.  The same window aggregation.
--
-- Event time advances with the row count: payment n happens 5 ms after
-- payment n-1 (eventSeq counts 0, 1, 2, ...), so the 100,000 payments span
-- 8 min 20 s of event time and the 1-minute windows sliding every 30 s close
-- — and print — one after another as the run goes (after the watermark,
-- 10 s behind the latest payment, passes their end), while the run itself,
-- at 50,000 payments a second, lasts about two seconds.  The first window,
-- [23:59:30, 00:00:30), holds only its last 30 s of payments.

CREATE TABLE payment_msg (
  eventSeq    BIGINT,
  orderId     BIGINT,
  payAmount   DOUBLE,
  payPlatform INT,
  provinceId  INT,
  createTime AS TIMESTAMPADD(MILLISECOND, eventSeq * 5, TIMESTAMP '2024-01-01 00:00:00'),
  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '50000',
  'fields.eventSeq.kind' = 'sequence',
  'fields.eventSeq.start' = '0',
  'fields.eventSeq.end' = '99999',
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
