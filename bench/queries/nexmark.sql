-- nexmark.sql — the source every Nexmark query of the benchmark reads: the
-- built-in Nexmark generator (persons, auctions and bids in the 1:3:46 mix),
-- declared as the Nexmark Flink queries declare it, and the view of bids.
-- bench_nexmark_bench rewrites 'events.num' to its --events; run by hand:
--   dipper run bench/queries/nexmark.sql bench/queries/q0.sql
CREATE TABLE datagen (
  event_type INT,
  person ROW<id BIGINT, name STRING, emailAddress STRING, creditCard STRING,
             city STRING, state STRING, dateTime TIMESTAMP(3), extra STRING>,
  auction ROW<id BIGINT, itemName STRING, description STRING, initialBid BIGINT,
              reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3),
              seller BIGINT, category BIGINT, extra STRING>,
  bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
          dateTime TIMESTAMP(3), extra STRING>,
  dateTime AS CASE WHEN event_type = 0 THEN person.dateTime
                   WHEN event_type = 1 THEN auction.dateTime
                   ELSE bid.dateTime END,
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH (
  'connector' = 'nexmark',
  'events.num' = '10000000'
);

CREATE VIEW bid AS
SELECT bid.auction AS auction, bid.bidder AS bidder, bid.price AS price,
       bid.channel AS channel, bid.url AS url, dateTime, bid.extra AS extra
FROM datagen WHERE event_type = 2;

CREATE VIEW auction AS
SELECT auction.id AS id, auction.itemName AS itemName, auction.seller AS seller,
       auction.category AS category, auction.reserve AS reserve, dateTime
FROM datagen WHERE event_type = 1;
