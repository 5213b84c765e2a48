-- q1 currency conversion: each bid's price in euro.
SELECT auction, bidder, 0.908 * price AS price, `dateTime`, extra FROM bid;
