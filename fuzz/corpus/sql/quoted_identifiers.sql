SELECT `my col`, "Other Col", `a``b` FROM `my table`;
