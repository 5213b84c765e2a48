-- The seed pipeline (examples/payments.sql) over JSON payments in files: for
-- each province, the total paid in 1-minute windows sliding every 30 s.
-- ${PATH} is the folder bench/peers/seed_write.sql wrote.
CREATE TABLE payment_msg (
  createTime  TIMESTAMP(3),
  orderId     BIGINT,
  payAmount   DOUBLE,
  payPlatform INT,
  provinceId  INT,
  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND
) WITH ('connector' = 'filesystem', 'path' = '${PATH}', 'format' = 'json');

SELECT provinceId, window_start, window_end, SUM(payAmount)
FROM TABLE(
  HOP(TABLE payment_msg, DESCRIPTOR(createTime), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
GROUP BY provinceId, window_start, window_end;
