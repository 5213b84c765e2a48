// SumLen — a Java aggregate for Spark: the total length of the strings of a
// group, NULLs skipped, NULL when the group has no string (as SUM).  It
// extends Spark's UserDefinedAggregateFunction, the one kind of class that
// Spark Connect registers as an aggregate from a class name (JavaUDF with
// aggregate = true: registerJavaUDAF); dipper reads that from the class file
// in the jar (src/spark/jar.h).  tests/spark/udf_test.c compiles it against
// the pinned Spark's jars and runs it in a GROUP BY, in batch and streaming.
package dipper.test;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.expressions.MutableAggregationBuffer;
import org.apache.spark.sql.expressions.UserDefinedAggregateFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

@SuppressWarnings("deprecation")
public class SumLen extends UserDefinedAggregateFunction {
  private static final long serialVersionUID = 1L;

  @Override
  public StructType inputSchema() {
    return new StructType().add("s", DataTypes.StringType);
  }

  @Override
  public StructType bufferSchema() {
    return new StructType().add("total", DataTypes.LongType).add("seen", DataTypes.BooleanType);
  }

  @Override
  public DataType dataType() {
    return DataTypes.LongType;
  }

  @Override
  public boolean deterministic() {
    return true;
  }

  @Override
  public void initialize(MutableAggregationBuffer b) {
    b.update(0, 0L);
    b.update(1, false);
  }

  @Override
  public void update(MutableAggregationBuffer b, Row in) {
    if (in.isNullAt(0)) return;
    b.update(0, b.getLong(0) + in.getString(0).length());
    b.update(1, true);
  }

  @Override
  public void merge(MutableAggregationBuffer b, Row other) {
    b.update(0, b.getLong(0) + other.getLong(0));
    b.update(1, b.getBoolean(1) || other.getBoolean(1));
  }

  @Override
  public Object evaluate(Row b) {
    return b.getBoolean(1) ? b.getLong(0) : null;
  }
}
