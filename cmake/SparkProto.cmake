# cmake/SparkProto.cmake — the `spark_proto` object library: protobuf-c code
# for Spark Connect's protocol, generated into the build folder at configure
# time by scripts/spark-proto from the .proto files of the Spark version that
# scripts/spark-local pins (nothing of Spark is in the repository).
#
# Include it after project(); it defines
#   DIPPER_SPARK_PROTO_DIR  the generated tree (spark/connect/*.pb-c.h, ...)
#   spark_proto             OBJECT library; linking it gives its users the
#                           include dir (as a system dir: the generated
#                           headers are not held to dipper's warnings) and
#                           libprotobuf-c.
# Code includes the headers as "spark/connect/base.pb-c.h".  Under clang the
# generated `..._INIT` macros trip -Wcast-qual in the including file (they
# cast protobuf_c_empty_string's const away), system dir or not: initialise
# messages with the generated `spark__connect__<message>__init(&msg)` instead.
# A proto3 `optional` field is a one-field oneof here: set `_<field>_case` to
# mark it present (scripts/spark-proto says why).
#
# Configure-time, not build-time: the set of generated .c files must be known
# to define the library.  The script skips the work when its stamp matches
# (same Spark version, protoc-c and script), so re-configuring is cheap; a
# change to either script re-runs configure.

include_guard(GLOBAL)

find_package(PkgConfig REQUIRED)
pkg_check_modules(PROTOBUF_C libprotobuf-c)
if(NOT PROTOBUF_C_FOUND)
  message(FATAL_ERROR "libprotobuf-c not found (pkg-config libprotobuf-c): Spark Connect's "
    "generated code needs it; install the Debian/Ubuntu packages protobuf-c-compiler, "
    "libprotobuf-c-dev and libprotobuf-dev")
endif()

set(DIPPER_SPARK_PROTO_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/../scripts/spark-proto)
set(DIPPER_SPARK_PROTO_DIR ${CMAKE_BINARY_DIR}/spark-proto)

execute_process(
  COMMAND ${DIPPER_SPARK_PROTO_SCRIPT} ${DIPPER_SPARK_PROTO_DIR}
  RESULT_VARIABLE spark_proto_status
  OUTPUT_VARIABLE spark_proto_output
  ERROR_VARIABLE spark_proto_output)
if(NOT spark_proto_status EQUAL 0)
  message(FATAL_ERROR "scripts/spark-proto failed (exit ${spark_proto_status}):\n"
    "${spark_proto_output}\n"
    "It needs protoc-c and libprotobuf-dev (scripts/setup) and fetches Spark through "
    "scripts/spark-local fetch (python3-venv, mvn).")
endif()
if(spark_proto_output)
  message(STATUS "${spark_proto_output}")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${DIPPER_SPARK_PROTO_SCRIPT}
  ${CMAKE_CURRENT_LIST_DIR}/../scripts/spark-local
  ${DIPPER_SPARK_PROTO_DIR}/spark-proto.stamp)

file(STRINGS ${DIPPER_SPARK_PROTO_DIR}/sources.txt spark_proto_relative)
set(spark_proto_sources)
foreach(source IN LISTS spark_proto_relative)
  list(APPEND spark_proto_sources ${DIPPER_SPARK_PROTO_DIR}/${source})
endforeach()
if(NOT spark_proto_sources)
  message(FATAL_ERROR "scripts/spark-proto listed no generated sources in "
    "${DIPPER_SPARK_PROTO_DIR}/sources.txt")
endif()

add_library(spark_proto OBJECT ${spark_proto_sources})
target_include_directories(spark_proto SYSTEM PUBLIC
  ${DIPPER_SPARK_PROTO_DIR} ${PROTOBUF_C_INCLUDE_DIRS})
target_link_libraries(spark_proto PUBLIC ${PROTOBUF_C_LINK_LIBRARIES})
# Generated code: compiled without dipper's warning set (protoc-c's output
# trips -Wconversion and -Wcast-qual by design).
target_compile_options(spark_proto PRIVATE -w)
set_target_properties(spark_proto PROPERTIES POSITION_INDEPENDENT_CODE ON)
