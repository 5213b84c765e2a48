-- join_interval — a stream-stream interval join: each bid with the auction it
-- bids on, when the bid comes within 10 s of the auction's creation (both
-- sides' state cleaned by the watermark).  Exercises the join's build side,
-- its probe and the gather of matched pairs.
CREATE TABLE discard_sink (auction BIGINT, price BIGINT, seller BIGINT, item STRING)
WITH ('connector' = 'blackhole');

INSERT INTO discard_sink
SELECT B.auction, B.price, A.seller, A.itemName
FROM bid B JOIN auction A ON B.auction = A.id
 AND B.dateTime BETWEEN A.dateTime AND A.dateTime + INTERVAL '10' SECOND;
