-- q20 expand bid with auction: bids joined with their auction of category 10.  The
-- published query selects B.dateTime and A.dateTime (and B.extra, A.extra) into a sink
-- that names them apart; here the auction's are aliased so that the result has
-- distinct column names.
SELECT auction, bidder, price, channel, url, B.`dateTime`, B.extra,
       itemName, description, initialBid, reserve, A.`dateTime` AS auction_dateTime, expires,
       seller, category, A.extra AS auction_extra
FROM bid AS B INNER JOIN auction AS A ON B.auction = A.id
WHERE A.category = 10;
