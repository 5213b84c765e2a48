-- nexmark_q5.sql — Nexmark query 5, "hot items": the auctions with the most
-- bids in each 10-second window sliding every 2 s, on the built-in Nexmark
-- generator (no other software needed).  As in the benchmark, the bid
-- counts per auction and window are compared with the window's maximum.

CREATE TABLE nexmark (
  event_type INT,
  person  ROW<id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING,
              state STRING, dateTime TIMESTAMP(3), extra STRING>,
  auction ROW<id BIGINT, itemName STRING, description STRING, initialBid BIGINT,
              reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT,
              category BIGINT, extra STRING>,
  bid     ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
              dateTime TIMESTAMP(3), extra STRING>,
  dateTime AS
    CASE
      WHEN event_type = 0 THEN person.dateTime
      WHEN event_type = 1 THEN auction.dateTime
      ELSE bid.dateTime
    END,
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH (
  'connector' = 'nexmark',
  'events.num' = '1000000'
);

CREATE VIEW bid AS
SELECT
  bid.auction  AS auction,
  bid.bidder   AS bidder,
  bid.price    AS price,
  bid.channel  AS channel,
  bid.url      AS url,
  dateTime,
  bid.extra    AS extra
FROM nexmark
WHERE event_type = 2;

CREATE TABLE hot_items (auction BIGINT, num BIGINT) WITH ('connector' = 'blackhole');

INSERT INTO hot_items
SELECT AuctionBids.auction, AuctionBids.num
FROM (
  SELECT auction, COUNT(*) AS num, window_start AS starttime, window_end AS endtime
  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
  SELECT MAX(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
  FROM (
    SELECT COUNT(*) AS num, window_start AS starttime, window_end AS endtime
    FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY auction, window_start, window_end
  ) AS CountBids
  GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime
  AND AuctionBids.endtime = MaxBids.endtime
  AND AuctionBids.num >= MaxBids.maxn;
