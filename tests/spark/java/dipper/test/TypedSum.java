// TypedSum — a sum written as Spark's typed Aggregator.  Spark Connect cannot
// register an Aggregator from its class name (JavaUDF with aggregate = true
// takes a UserDefinedAggregateFunction only), so dipper refuses
// CREATE FUNCTION of it with that reason (tests/spark/udf_test.c).
package dipper.test;

import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.expressions.Aggregator;

public class TypedSum extends Aggregator<Long, Long, Long> {
  private static final long serialVersionUID = 1L;

  @Override
  public Long zero() {
    return 0L;
  }

  @Override
  public Long reduce(Long b, Long a) {
    return a == null ? b : b + a;
  }

  @Override
  public Long merge(Long a, Long b) {
    return a + b;
  }

  @Override
  public Long finish(Long r) {
    return r;
  }

  @Override
  public Encoder<Long> bufferEncoder() {
    return Encoders.LONG();
  }

  @Override
  public Encoder<Long> outputEncoder() {
    return Encoders.LONG();
  }
}
