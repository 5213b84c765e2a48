-- The seed pipeline's input for bench/peers: ${LAST}+1 payments as JSON lines
-- in the folder ${PATH}, one every 5 ms of event time (as
-- examples/payments_local.sql makes them), amounts 1-1000, six provinces.
CREATE TABLE gen (
  eventSeq    BIGINT,
  orderId     BIGINT,
  payAmount   DOUBLE,
  payPlatform INT,
  provinceId  INT,
  createTime AS TIMESTAMPADD(MILLISECOND, eventSeq * 5, TIMESTAMP '2024-01-01 00:00:00')
) WITH (
  'connector' = 'datagen',
  'fields.eventSeq.kind' = 'sequence',
  'fields.eventSeq.start' = '0',
  'fields.eventSeq.end' = '${LAST}',
  'fields.payAmount.min' = '1',
  'fields.payAmount.max' = '1000',
  'fields.payPlatform.min' = '0',
  'fields.payPlatform.max' = '1',
  'fields.provinceId.min' = '0',
  'fields.provinceId.max' = '5'
);

CREATE TABLE payments (
  createTime  TIMESTAMP(3),
  orderId     BIGINT,
  payAmount   DOUBLE,
  payPlatform INT,
  provinceId  INT
) WITH ('connector' = 'filesystem', 'path' = '${PATH}', 'format' = 'json');

INSERT INTO payments SELECT createTime, orderId, payAmount, payPlatform, provinceId FROM gen;
