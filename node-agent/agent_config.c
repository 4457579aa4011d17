// SPDX-License-Identifier: GPL-3.0-or-later
/* erg-agent's configuration: defaults, the [agent] section of agent.conf
 * and single keys set from flags (the same checks). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "agent_int.h"

int erg_agent_sub_interval(const char *value, double *out, char *why, size_t whylen) {
  double v;
  if (erg_config_double(value, 0, 3600, &v, why, whylen) != 0)
    return -1;
  if (v > 0 && v < 0.01) {
    snprintf(why, whylen, "%s: 0 (off) or at least 0.01", value);
    return -1;
  }
  *out = v;
  return 0;
}

void erg_agent_config_defaults(struct erg_agent_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  if (gethostname(cfg->node, sizeof cfg->node) != 0)
    strcpy(cfg->node, "localhost");
  cfg->node[sizeof cfg->node - 1] = '\0';
  strcpy(cfg->collector, "tcp://127.0.0.1:9711");
  cfg->interval_seconds = 1.0;
  cfg->sub_interval_seconds = ERG_AGENT_SUB_INTERVAL_DEFAULT;
  cfg->queue_samples = 3600;
  cfg->resend_samples = 60;
  strcpy(cfg->proc_root, "/proc");
  strcpy(cfg->collection, "auto");
  cfg->log_level = ERG_LOG_INFO;
}

/* The collector's public key, inline (40 Z85 characters) or a file holding
 * it. Z85 has '/': 38 % of keys hold one, and were read as a file name
 * before. A value that decodes is the key unless a file has that name. */
int erg_agent_server_key(const char *value, char out[ERG_KEY_Z85_LEN + 1], char *why,
                         size_t whylen) {
  uint8_t bin[32];
  char inner[400];
  if (strlen(value) == ERG_KEY_Z85_LEN && zmq_z85_decode(bin, value) && access(value, F_OK)) {
    memcpy(out, value, ERG_KEY_Z85_LEN + 1);
    return 0;
  }
  if (erg_key_read_file(value, out, inner, sizeof inner) == 0)
    return 0;
  snprintf(why, whylen,
           "'%.64s' is neither a 40-character Z85 CURVE key nor a readable key "
           "file (%.200s)",
           value, inner);
  return -1;
}

/* Read at load, so that a cut or mistyped key fails the config check, not
 * the agent's start. */
static int agent_config_server_key(struct erg_agent_config *cfg, const char *value, char *why,
                                   size_t whylen) {
  char key[ERG_KEY_Z85_LEN + 1], inner[500];
  if (strlen(value) >= sizeof cfg->curve_server_key) {
    snprintf(why, whylen, "key 'curve_server_key': longer than %zu bytes",
             sizeof cfg->curve_server_key - 1);
    return -1;
  }
  if (erg_agent_server_key(value, key, inner, sizeof inner) != 0) {
    snprintf(why, whylen, "key 'curve_server_key': %s", inner);
    return -1;
  }
  erg_strlcpy(cfg->curve_server_key, value, sizeof cfg->curve_server_key);
  return 0;
}

static int agent_config_cb(void *user, const char *section, const char *key, const char *value,
                           char *why, size_t whylen) {
  struct erg_agent_config *cfg = user;
  if (strcmp(section, "agent") != 0) {
    snprintf(why, whylen, "unknown section [%s] (erg-agent reads [agent])", section);
    return -1;
  }
  if (strcmp(key, "node") == 0) {
    if (!value[0] || strlen(value) >= sizeof cfg->node) {
      snprintf(why, whylen, "key 'node': must be 1..%zu bytes", sizeof cfg->node - 1);
      return -1;
    }
    erg_strlcpy(cfg->node, value, sizeof cfg->node);
    return 0;
  }
  if (strcmp(key, "collector") == 0) {
    char inner[200];
    if (strlen(value) >= sizeof cfg->collector || erg_config_endpoint(value, inner, sizeof inner)) {
      snprintf(why, whylen, "key 'collector': %s",
               strlen(value) >= sizeof cfg->collector ? "too long" : inner);
      return -1;
    }
    erg_strlcpy(cfg->collector, value, sizeof cfg->collector);
    return 0;
  }
  if (strcmp(key, "curve_server_key") == 0)
    return agent_config_server_key(cfg, value, why, whylen);
  if (strcmp(key, "curve_secret_key_file") == 0) {
    erg_strlcpy(cfg->curve_secret_key_file, value, sizeof cfg->curve_secret_key_file);
    return 0;
  }
  if (strcmp(key, "collection") == 0) {
    if (strcmp(value, "auto") && strcmp(value, "bpf") && strcmp(value, "proc")) {
      snprintf(why, whylen, "key 'collection': '%s' is not auto, bpf or proc", value);
      return -1;
    }
    erg_strlcpy(cfg->collection, value, sizeof cfg->collection);
    return 0;
  }
  if (strcmp(key, "scope") == 0)
    return agent_scope_normalize(value, cfg->scope, sizeof cfg->scope, why, whylen);
  if (strcmp(key, "proc_root") == 0) {
    erg_strlcpy(cfg->proc_root, value, sizeof cfg->proc_root);
    return 0;
  }
  if (strcmp(key, "sysfs_cpu_root") == 0) {
    erg_strlcpy(cfg->sysfs_cpu_root, value, sizeof cfg->sysfs_cpu_root);
    return 0;
  }
  if (strcmp(key, "gpu") == 0 || strcmp(key, "nvml_library") == 0 ||
      strcmp(key, "rocm_smi_library") == 0) /* agent_gpu.c */
    return agent_gpu_config(cfg, key, value, why, whylen);
  char inner[256];
  int rc = -1;
  if (strcmp(key, "interval_seconds") == 0)
    rc = erg_config_double(value, 0.1, 3600, &cfg->interval_seconds, inner, sizeof inner);
  else if (strcmp(key, "sub_interval_seconds") == 0)
    rc = erg_agent_sub_interval(value, &cfg->sub_interval_seconds, inner, sizeof inner);
  else if (strcmp(key, "queue_samples") == 0)
    rc = erg_config_long(value, 1, 10000000, &cfg->queue_samples, inner, sizeof inner);
  else if (strcmp(key, "resend_samples") == 0)
    rc = erg_config_long(value, 0, 100000, &cfg->resend_samples, inner, sizeof inner);
  else if (strcmp(key, "heartbeat_seconds") == 0) /* ×3 must fit ZMTP's 6553 s TTL */
    rc = erg_config_double(value, 0.1, 600, &cfg->heartbeat_seconds, inner, sizeof inner);
  else if (strcmp(key, "log_level") == 0) {
    cfg->log_level = erg_log_level_parse(value);
    rc = cfg->log_level < 0 ? -1 : 0;
    snprintf(inner, sizeof inner, "'%s' is not one of error, warning, info, debug", value);
  } else {
    snprintf(why, whylen, "unknown key '%s' in [agent]", key);
    return -1;
  }
  if (rc != 0)
    snprintf(why, whylen, "key '%s': %s", key, inner);
  return rc;
}

int erg_agent_config_load(const char *path, struct erg_agent_config *cfg,
                          struct erg_config_error *err) {
  return erg_config_parse(path, agent_config_cb, cfg, err);
}

int erg_agent_config_set(struct erg_agent_config *cfg, const char *key, const char *value,
                         char *why, size_t whylen) {
  return agent_config_cb(cfg, "agent", key, value, why, whylen);
}
