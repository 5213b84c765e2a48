-- q9 winning bids: the highest bid of each auction while it is open.
-- @flink-upsert-key 1: Flink sends this Top-1 as an upsert stream (+U without -U), keyed by A.id
SELECT id, itemName, description, initialBid, reserve, `dateTime`, expires, seller, category, extra,
       auction, bidder, price, bid_dateTime, bid_extra
FROM (
  SELECT A.*, B.auction, B.bidder, B.price, B.`dateTime` AS bid_dateTime, B.extra AS bid_extra,
    ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.`dateTime` ASC) AS rownum
  FROM auction A, bid B
  WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires
)
WHERE rownum <= 1;
