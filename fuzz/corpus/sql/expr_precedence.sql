SELECT 1 + 2 * 3 - -4 / 5 % 6 || 'x', NOT a = b OR c AND d, a | b & c ^ ~d, a <=> b, a != b, a <> b FROM t;
