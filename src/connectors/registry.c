/*
** registry.c — connector names to their classes (connector.h), and the
** table-option lookup every connector uses.
**
** Owns: the two lists.  Each connector file defines its class; a new one
** adds one line here.  'print' is Flink's name for the console sink.
*/
#include <string.h>
#include <strings.h>

#include "connectors/connector.h"

extern const dp_source_class dp_source_datagen, dp_source_memory, dp_source_filesystem;
extern const dp_sink_class dp_sink_console, dp_sink_blackhole, dp_sink_memory, dp_sink_callback,
    dp_sink_filesystem;
extern const dp_source_class dp_source_kafka;
extern const dp_source_class dp_source_nexmark;
extern const dp_sink_class dp_sink_kafka, dp_sink_upsert_kafka;
extern const dp_source_class dp_source_upsert_kafka;
extern const dp_source_class dp_source_kinesis;
extern const dp_sink_class dp_sink_kinesis;

static const dp_source_class *const sources[] = {
    &dp_source_datagen,
    &dp_source_memory,
    &dp_source_filesystem,
    &dp_source_kafka,
    &dp_source_upsert_kafka,
    &dp_source_nexmark,
    &dp_source_kinesis,
};

static const dp_sink_class *const sinks[] = {
    &dp_sink_console,
    &dp_sink_blackhole,
    &dp_sink_memory,
    &dp_sink_callback,
    &dp_sink_filesystem,
    &dp_sink_kafka,
    &dp_sink_upsert_kafka,
    &dp_sink_kinesis,
};

const dp_source_class *dp_source_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
    if (strcasecmp(sources[i]->name, name) == 0) return sources[i];
  return NULL;
}

const dp_sink_class *dp_sink_find(const char *name) {
  if (!name) return NULL;
  if (strcasecmp(name, "print") == 0) name = "console";
  for (size_t i = 0; i < sizeof sinks / sizeof sinks[0]; i++)
    if (strcasecmp(sinks[i]->name, name) == 0) return sinks[i];
  return NULL;
}

const char *dp_table_option(const dp_table_def *t, const char *key, const char *dflt) {
  if (!t || !key) return dflt;
  for (int i = 0; i < t->noptions; i++)
    if (t->options[i].key && strcmp(t->options[i].key, key) == 0) return t->options[i].value;
  return dflt;
}
