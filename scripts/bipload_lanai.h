/* SPDX-License-Identifier: MIT */
/*
 * bipload_lanai.h - bipload's part for the simulated LANai board: start
 * lanai-sim before the processes of a job, stop it after them.
 */
#ifndef BIPLOAD_LANAI_H
#define BIPLOAD_LANAI_H

#include <stddef.h>

struct bip_conf;

/*
 * Start the firmware if the job uses the board: BIP_NIC=lanai, or (BIP_NIC
 * unset) a configuration whose routes cross switches, for which BIP_NIC=lanai
 * is then set for the processes.  Waits until the boards are ready.
 * Returns 0 (started, or not needed) or -1 with a message in err.  Once
 * started, the firmware is stopped at exit whatever the path.
 */
int bipload_lanai_start(const struct bip_conf *conf, const char *conf_path, const char *jobid,
			int quiet, char *err, size_t errlen);

/* Stop the firmware (SIGTERM, then SIGKILL) and wait for it; nothing if not started. */
void bipload_lanai_stop(void);

#endif /* BIPLOAD_LANAI_H */
