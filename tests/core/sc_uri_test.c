/*
** sc_uri_test.c — the Spark Connect connection string (src/core/sc_uri.c): every
** parameter, the defaults, IPv6 hosts, and the errors with their positions.
** Offline: no server.
*/
#include "core/sc_uri.h"

#include <stdlib.h>

#include "dipper.h"
#include "test.h"

/* Parse a string that must fail; return the message (static storage of the test). */
static char last_err[512];
static int parse_bad(const char *s) {
  dp_sc_uri u;
  dp_buf err = DP_BUF_INIT;
  int rc = dp_sc_uri_parse(s, &u, &err);
  snprintf(last_err, sizeof last_err, "%s", dp_buf_cstr(&err));
  dp_buf_free(&err);
  dp_sc_uri_free(&u);
  return rc;
}

TEST(defaults) {
  dp_sc_uri u;
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(dp_sc_uri_parse("sc://localhost", &u, &err), DIPPER_OK);
  CHECK_STR(u.host, "localhost");
  CHECK_EQ(u.port, 15002);
  CHECK(!u.use_ssl);
  CHECK(u.token == NULL && u.user_id == NULL && u.user_agent == NULL && u.session_id == NULL);
  CHECK_EQ(u.max_message, 0);
  CHECK_EQ(err.len, 0);
  dp_sc_uri_free(&u);
  CHECK(u.host == NULL);
  dp_sc_uri_free(&u); /* twice is fine */
  dp_sc_uri_free(NULL);
  dp_buf_free(&err);
}

TEST(host_port_and_slash) {
  dp_sc_uri u;
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(dp_sc_uri_parse("sc://127.0.0.1:15003", &u, &err), DIPPER_OK);
  CHECK_STR(u.host, "127.0.0.1");
  CHECK_EQ(u.port, 15003);
  dp_sc_uri_free(&u);
  CHECK_EQ(dp_sc_uri_parse("sc://spark-1.example_net:1/", &u, &err), DIPPER_OK);
  CHECK_STR(u.host, "spark-1.example_net");
  CHECK_EQ(u.port, 1);
  dp_sc_uri_free(&u);
  CHECK_EQ(dp_sc_uri_parse("sc://h:65535/;", &u, &err), DIPPER_OK);
  CHECK_EQ(u.port, 65535);
  dp_sc_uri_free(&u);
  dp_buf_free(&err);
}

TEST(ipv6) {
  dp_sc_uri u;
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(dp_sc_uri_parse("sc://[::1]:15010/;use_ssl=true", &u, &err), DIPPER_OK);
  CHECK_STR(u.host, "::1");
  CHECK_EQ(u.port, 15010);
  CHECK(u.use_ssl);
  dp_sc_uri_free(&u);
  CHECK_EQ(dp_sc_uri_parse("sc://[fe80::1:2]", &u, &err), DIPPER_OK);
  CHECK_STR(u.host, "fe80::1:2");
  CHECK_EQ(u.port, 15002);
  dp_sc_uri_free(&u);
  dp_buf_free(&err);
}

TEST(every_parameter) {
  dp_sc_uri u;
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(dp_sc_uri_parse("sc://h:9/;token=abc.DEF-1;use_ssl=false;user_id=alice;"
                           "user_agent=my-app/2;session_id=0123abcd-4567-89ab-cdef-0123456789AB;"
                           "grpc_max_message_size=268435456",
                           &u, &err),
           DIPPER_OK);
  CHECK_STR(u.token, "abc.DEF-1");
  CHECK(!u.use_ssl); /* explicit false wins over the token */
  CHECK_STR(u.user_id, "alice");
  CHECK_STR(u.user_agent, "my-app/2");
  CHECK_STR(u.session_id, "0123abcd-4567-89ab-cdef-0123456789AB");
  CHECK_EQ(u.max_message, 268435456);
  dp_sc_uri_free(&u);
  /* keys are matched without case; empty segments are skipped */
  CHECK_EQ(dp_sc_uri_parse("sc://h/;;USE_SSL=TRUE;;User_Id=bob;", &u, &err), DIPPER_OK);
  CHECK(u.use_ssl);
  CHECK_STR(u.user_id, "bob");
  dp_sc_uri_free(&u);
  CHECK_EQ(err.len, 0);
  dp_buf_free(&err);
}

TEST(token_turns_tls_on) {
  dp_sc_uri u;
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(dp_sc_uri_parse("sc://h/;token=t", &u, &err), DIPPER_OK);
  CHECK(u.use_ssl);
  CHECK_STR(u.token, "t");
  dp_sc_uri_free(&u);
  CHECK_EQ(dp_sc_uri_parse("sc://h/;use_ssl=false;token=t", &u, &err), DIPPER_OK);
  CHECK(!u.use_ssl); /* the order does not matter */
  dp_sc_uri_free(&u);
  dp_buf_free(&err);
}

TEST(scheme_and_host_errors) {
  CHECK_EQ(parse_bad("http://h:15002"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 1: a Spark Connect address starts with sc://");
  CHECK_EQ(parse_bad("sc://"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 6: the host is missing");
  CHECK_EQ(parse_bad("sc://:15002"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "the host is missing");
  CHECK_EQ(parse_bad("sc://ho st"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 8: a host name holds only letters");
  CHECK_EQ(parse_bad("sc://[::1"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 10: an IPv6 address in [...]");
  CHECK_EQ(parse_bad("sc://[]:1"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "the brackets hold no IPv6 address");
  CHECK_EQ(parse_bad("sc://[1.2.3.4]"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "the brackets hold no IPv6 address");
  CHECK_EQ(parse_bad(NULL), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "no connection string");
}

TEST(port_errors) {
  CHECK_EQ(parse_bad("sc://h:"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 8: the port must be a number from 1 to 65535");
  CHECK_EQ(parse_bad("sc://h:0"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "the port must be a number from 1 to 65535");
  CHECK_EQ(parse_bad("sc://h:65536"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "the port must be a number");
  CHECK_EQ(parse_bad("sc://h:99999999999999999999"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "the port must be a number");
  CHECK_EQ(parse_bad("sc://h:12ab"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "the port must be a number");
  CHECK_EQ(parse_bad("sc://h:15002;token=x"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 13: parameters follow a '/'");
  CHECK_EQ(parse_bad("sc://h;token=x"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 7: parameters follow a '/'");
  CHECK_EQ(parse_bad("sc://h:1/token=x"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 10: parameters follow '/;'");
}

TEST(parameter_errors) {
  CHECK_EQ(parse_bad("sc://h/;tokn=x"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 9: unknown parameter 'tokn'");
  CHECK_CONTAINS(last_err, "grpc_max_message_size");
  CHECK_EQ(parse_bad("sc://h/;token"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "must be written key=value");
  CHECK_EQ(parse_bad("sc://h/;=x"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "must be written key=value");
  CHECK_EQ(parse_bad("sc://h/;token="), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 15: the parameter token needs a value");
  CHECK_EQ(parse_bad("sc://h/;token=a;token=b"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 17: the parameter token is given twice");
  CHECK_EQ(parse_bad("sc://h/;token=a b"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 16: the value of token holds a space or a control");
  CHECK_EQ(parse_bad("sc://h/;user_id=a\tb"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "the value of user_id holds a space or a control");
  CHECK_EQ(parse_bad("sc://h/;use_ssl=yes"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 17: use_ssl must be true or false");
  CHECK_EQ(parse_bad("sc://h/;session_id=1234"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "session_id must be a UUID");
  CHECK_EQ(parse_bad("sc://h/;session_id=0123abcd-4567-89ab-cdef-0123456789AX"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "session_id must be a UUID");
  CHECK_EQ(parse_bad("sc://h/;grpc_max_message_size=0"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "grpc_max_message_size must be a number of bytes from 1 to 2147483647");
  CHECK_EQ(parse_bad("sc://h/;grpc_max_message_size=2147483648"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "grpc_max_message_size must be a number");
  CHECK_EQ(parse_bad("sc://h/;grpc_max_message_size=99999999999999999999999"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "grpc_max_message_size must be a number");
  CHECK_EQ(parse_bad("sc://h/;grpc_max_message_size=12k"), DIPPER_OPTION);
  CHECK_CONTAINS(last_err, "character 33: grpc_max_message_size must be a number");
  /* the whole string is quoted so the user sees what the position counts in */
  CHECK_CONTAINS(last_err, "connection string 'sc://h/;grpc_max_message_size=12k'");
}

TEST(largest_limit_accepted) {
  dp_sc_uri u;
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(dp_sc_uri_parse("sc://h/;grpc_max_message_size=2147483647", &u, &err), DIPPER_OK);
  CHECK_EQ(u.max_message, 2147483647);
  dp_sc_uri_free(&u);
  dp_buf_free(&err);
}

int main(void) { return RUN_TESTS(); }
