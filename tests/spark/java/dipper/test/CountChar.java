// CountChar — Nexmark q14's count_char as a Java UDF for Spark: how often the
// one character c occurs in s (NULL when either is NULL).  tests/spark/udf_test.c
// compiles it against the pinned Spark's jars, uploads the jar through
// AddArtifacts and calls it; the embedded engine runs the C function of
// tests/api/udf_test.c, and both give the same answers.
package dipper.test;

import org.apache.spark.sql.api.java.UDF2;

public class CountChar implements UDF2<String, String, Integer> {
  @Override
  public Integer call(String s, String c) {
    if (s == null || c == null || c.length() != 1) return null;
    int n = 0;
    for (int i = 0; i < s.length(); i++) if (s.charAt(i) == c.charAt(0)) n++;
    return n;
  }
}
