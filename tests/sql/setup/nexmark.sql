-- The Nexmark benchmark's source: one generated stream of three event kinds
-- (0 person, 1 auction, 2 bid) and one view per kind, as the benchmark
-- declares them; the watermark is 4 seconds behind the event time.
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
  'connector' = 'nexmark'
);

CREATE VIEW person AS
SELECT person.id, person.name, person.emailAddress, person.creditCard,
       person.city, person.state, dateTime, person.extra
FROM datagen WHERE event_type = 0;

CREATE VIEW auction AS
SELECT auction.id, auction.itemName, auction.description, auction.initialBid,
       auction.reserve, dateTime, auction.expires, auction.seller,
       auction.category, auction.extra
FROM datagen WHERE event_type = 1;

CREATE VIEW bid AS
SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, dateTime, bid.extra
FROM datagen WHERE event_type = 2;

CREATE TABLE nexmark_sink (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  dateTime TIMESTAMP(3)
) WITH (
  'connector' = 'blackhole'
);
