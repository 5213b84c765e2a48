/*
** ft_kafka_tool.c — the Kafka ends of tests/ft/kafka_kill_test.sh, on
** librdkafka alone (no dipper code, no Python Kafka client):
**
**   ft_kafka_tool create BOOTSTRAP TOPIC PARTITIONS
**       create the topic and wait until every partition has a leader
**   ft_kafka_tool produce BOOTSTRAP TOPIC PARTITIONS
**       create it, then send each line of stdin, PARTITION<TAB>VALUE, as one
**       message to that partition, with an idempotent producer (acks=all, no
**       duplicates on a retry); exit 0 once every message is acknowledged
**   ft_kafka_tool consume BOOTSTRAP TOPIC [read_committed|read_uncommitted]
**       print every message's value, one a line, from the beginning of each
**       partition to its end (for read_committed, the last stable offset):
**       what a consumer of that isolation level sees
**
** Exit 0 on success, 1 with a message on stderr otherwise.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

static int die(const char *what, const char *why) {
  fprintf(stderr, "ft_kafka_tool: %s: %s\n", what, why);
  return 1;
}

static void nap_ms(long ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL); }

static rd_kafka_t *client(rd_kafka_type_t type, const char *bootstrap, const char *const *kv) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof err) != RD_KAFKA_CONF_OK)
    goto bad;
  for (int i = 0; kv && kv[i]; i += 2)
    if (rd_kafka_conf_set(conf, kv[i], kv[i + 1], err, sizeof err) != RD_KAFKA_CONF_OK) goto bad;
  rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk) return rk;
bad:
  rd_kafka_conf_destroy(conf);
  die("client", err);
  return NULL;
}

/* The topic's partition count from the metadata, -1 while it has none, or a
** partition has no leader yet. */
static int ready_partitions(rd_kafka_t *rk, const char *topic) {
  rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
  const struct rd_kafka_metadata *md = NULL;
  int n = -1;
  if (rkt && rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (md->topic_cnt == 1 && !md->topics[0].err) {
      n = md->topics[0].partition_cnt;
      for (int i = 0; i < md->topics[0].partition_cnt; i++)
        if (md->topics[0].partitions[i].leader < 0) n = -1;
    }
    rd_kafka_metadata_destroy(md);
  }
  if (rkt) rd_kafka_topic_destroy(rkt);
  return n;
}

static int create_topic(rd_kafka_t *rk, const char *topic, int partitions) {
  char err[512];
  rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, 1, err, sizeof err);
  if (!nt) return die(topic, err);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
  rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
  int rc = 0;
  if (!ev) {
    rc = die(topic, "no answer to CreateTopics within 30 s");
  } else {
    size_t n = 0;
    const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
    const rd_kafka_topic_result_t **tr = res ? rd_kafka_CreateTopics_result_topics(res, &n) : NULL;
    if (rd_kafka_event_error(ev))
      rc = die(topic, rd_kafka_event_error_string(ev));
    else if (n == 1 && rd_kafka_topic_result_error(tr[0]) &&
             rd_kafka_topic_result_error(tr[0]) != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
      rc = die(topic, rd_kafka_topic_result_error_string(tr[0]));
    rd_kafka_event_destroy(ev);
  }
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  for (int tries = 0; rc == 0; tries++) {
    int got = ready_partitions(rk, topic);
    if (got == partitions) break;
    if (got > 0 && got != partitions) return die(topic, "exists with another partition count");
    if (tries == 300) return die(topic, "its partitions have no leader after 30 s");
    nap_ms(100);
  }
  return rc;
}

static long long failed_deliveries;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk, (void)opaque;
  if (m->err && failed_deliveries++ == 0)
    fprintf(stderr, "ft_kafka_tool: delivery failed: %s\n", rd_kafka_err2str(m->err));
}

static int produce(const char *bootstrap, const char *topic, int partitions) {
  static const char *const kv[] = {"enable.idempotence", "true", "linger.ms", "20", NULL};
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof err);
  for (int i = 0; kv[i]; i += 2) rd_kafka_conf_set(conf, kv[i], kv[i + 1], err, sizeof err);
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return die("producer", err);
  }
  int rc = create_topic(rk, topic, partitions);
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while (rc == 0 && (len = getline(&line, &cap, stdin)) >= 0) {
    if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
    char *tab = strchr(line, '\t'), *end = NULL;
    long part = tab ? strtol(line, &end, 10) : -1;
    if (!tab || end != tab || part < 0 || part >= partitions) {
      rc = die("produce", "a line is not PARTITION<TAB>VALUE with a partition of the topic");
      break;
    }
    char *value = tab + 1;
    size_t vlen = (size_t)(line + len - value);
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION((int32_t)part),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(value, vlen),
          RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rc = die("produce", rd_kafka_err2str(e));
        break;
      }
      rd_kafka_poll(rk, 100);
    }
  }
  free(line);
  if (rc == 0 && rd_kafka_flush(rk, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR)
    rc = die("produce", "not every message was acknowledged within 60 s");
  if (rc == 0 && failed_deliveries > 0) rc = die("produce", "some deliveries failed");
  rd_kafka_destroy(rk);
  return rc;
}

static int consume(const char *bootstrap, const char *topic, const char *isolation) {
  const char *const kv[] = {"group.id", "ft-kafka-tool", "isolation.level", isolation,
                            "enable.partition.eof", "true", "enable.auto.commit", "false", NULL};
  rd_kafka_t *rk = client(RD_KAFKA_CONSUMER, bootstrap, kv);
  if (!rk) return 1;
  int nparts = -1;
  for (int tries = 0; nparts < 0 && tries < 100; tries++)
    if ((nparts = ready_partitions(rk, topic)) < 0) nap_ms(100);
  if (nparts <= 0) {
    rd_kafka_destroy(rk);
    return die(topic, "no such topic");
  }
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(nparts);
  for (int p = 0; p < nparts; p++)
    rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, l);
  rd_kafka_topic_partition_list_destroy(l);
  /* Each partition is done at its end-of-partition event; an empty one
  ** gives one too. */
  char *done = calloc((size_t)nparts, 1);
  int ndone = 0, rc = 0, quiet = 0;
  while (ndone < nparts && rc == 0) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (!m) {
      if (++quiet == 600) rc = die(topic, "no message nor end of partition for 60 s");
      continue;
    }
    quiet = 0;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (m->partition >= 0 && m->partition < nparts && !done[m->partition]) {
        done[m->partition] = 1;
        ndone++;
      }
    } else if (m->err) {
      rc = die(topic, rd_kafka_message_errstr(m));
    } else if (m->payload) {
      fwrite(m->payload, 1, m->len, stdout);
      fputc('\n', stdout);
    }
    rd_kafka_message_destroy(m);
  }
  free(done);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  if (fflush(stdout) != 0) rc = die("consume", "cannot write stdout");
  return rc;
}

int main(int argc, char **argv) {
  if (argc >= 5 && strcmp(argv[1], "create") == 0) {
    rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, argv[2], NULL);
    int rc = rk ? create_topic(rk, argv[3], atoi(argv[4])) : 1;
    if (rk) rd_kafka_destroy(rk);
    return rc;
  }
  if (argc >= 5 && strcmp(argv[1], "produce") == 0) return produce(argv[2], argv[3], atoi(argv[4]));
  if (argc >= 4 && strcmp(argv[1], "consume") == 0)
    return consume(argv[2], argv[3], argc >= 5 ? argv[4] : "read_committed");
  fprintf(stderr, "usage: ft_kafka_tool create|produce BOOTSTRAP TOPIC PARTITIONS\n"
                  "       ft_kafka_tool consume BOOTSTRAP TOPIC [read_committed|read_uncommitted]\n");
  return 2;
}
