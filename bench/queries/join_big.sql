-- join_big — the interval join of join_interval.sql with a 5-minute range
-- on either side: each bid and each auction is kept until the watermark is
-- 300 s past it, so at 10,000 events per second of event time (the
-- generator's default) the join holds 2-3 million rows once the first
-- 300 s have gone by, and every batch after that adds and expires about as
-- many rows as it reads.  `nexmark_bench --per-batch --query join_big`
-- prints the CPU time per batch while the state grows and once it is big:
-- flat when no batch pays for the whole state.
CREATE TABLE discard_sink (auction BIGINT, price BIGINT, seller BIGINT, item STRING)
WITH ('connector' = 'blackhole');

INSERT INTO discard_sink
SELECT B.auction, B.price, A.seller, A.itemName
FROM bid B JOIN auction A ON B.auction = A.id
 AND B.dateTime BETWEEN A.dateTime - INTERVAL '300' SECOND AND A.dateTime + INTERVAL '300' SECOND;
