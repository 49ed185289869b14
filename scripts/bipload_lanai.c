/* SPDX-License-Identifier: MIT */
/*
 * bipload_lanai.c - start and stop lanai-sim, the firmware of the simulated
 * LANai boards, around a job.
 *
 * The firmware runs in its own process group (a Ctrl-C reaches the job's
 * processes through bipload, not the firmware), with a pipe on which it says
 * when its boards are ready.  It ends with bipload even when bipload is
 * killed (it asks the kernel for a signal at its parent's death), so
 * nothing is left running.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bipload.h"
#include "bipload_lanai.h"
#include "conf.h"

static pid_t fw_pid;

/* 1 if some route of the configuration, on any rail, crosses a switch. */
static int switched(const struct bip_conf *conf)
{
	return !bip_conf_all_direct(conf);
}

/* $BIP_LANAI_SIM, else lanai-sim beside bipload (or in the build tree), else PATH. */
static void find_firmware(char *buf, size_t len)
{
	bipload_find_helper("BIP_LANAI_SIM", "lanai-sim", "../nic_firmware_sim", buf, len);
}

static void stop_at_exit(void)
{
	bipload_lanai_stop();
}

int bipload_lanai_start(const struct bip_conf *conf, const char *conf_path, const char *jobid,
			int quiet, char *err, size_t errlen)
{
	const char *nic = getenv("BIP_NIC");
	char prog[PATH_MAX], nodes[16], room[16], fd_text[16], buf[16];
	int ready[2], status, i;
	pid_t parent;
	size_t got = 0;
	double deadline;
	pid_t pid;

	if (nic && *nic && strcmp(nic, "lanai"))
		return 0;
	if ((!nic || !*nic) && !switched(conf))
		return 0;
	setenv("BIP_NIC", "lanai", 1);
	find_firmware(prog, sizeof(prog));
	if (pipe(ready) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	snprintf(nodes, sizeof(nodes), "%d", conf->n);
	snprintf(room, sizeof(room), "%d", bipload_room());
	snprintf(fd_text, sizeof(fd_text), "%d", ready[1]);
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if (pid == 0) {
		char *argv[16];
		int k = 0, in = open("/dev/null", O_RDONLY);

		/* The board goes with bipload, whatever kills it. */
		bipload_child_setup(parent);
		if (in >= 0)
			dup2(in, 0);
		for (i = 3; i < 1024; i++)
			if (i != ready[1])
				close(i);
		argv[k++] = prog;
		argv[k++] = "-j";
		argv[k++] = (char *)jobid;
		argv[k++] = "-n";
		argv[k++] = nodes;
		argv[k++] = "-r";
		argv[k++] = fd_text;
		if (bipload_room() > conf->n) {
			/* Boards for the nodes that may join (bip_grow(3)). */
			argv[k++] = "-u";
			argv[k++] = room;
			argv[k++] = "-g";
			argv[k++] = (char *)bipload_grow_host();
		}
		if (conf_path && conf_path[0]) {
			argv[k++] = "-f";
			argv[k++] = (char *)conf_path;
		}
		if (quiet)
			argv[k++] = "-q";
		argv[k] = NULL;
		execvp(prog, argv);
		fprintf(stderr,
			"bipload: cannot run the board firmware %s: %s (set "
			"BIP_LANAI_SIM to its path)\n",
			prog, strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(ready[1]);
	fw_pid = pid;
	atexit(stop_at_exit);
	deadline = now_s() + 20.0;
	while (got < 6) {
		struct pollfd pfd = {.fd = ready[0], .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, 200) < 0 && errno != EINTR)
			break;
		if (pfd.revents) {
			n = read(ready[0], buf + got, sizeof(buf) - got);
			if (n <= 0 && errno != EINTR)
				break;
			if (n > 0)
				got += (size_t)n;
		}
		if (now_s() > deadline)
			break;
	}
	close(ready[0]);
	if (got >= 6 && !memcmp(buf, "ready\n", 6))
		return 0;
	/* The pipe closed without "ready": the firmware is ending, wait for it. */
	if (waitpid(pid, &status, got < 6 && now_s() <= deadline ? 0 : WNOHANG) == pid) {
		fw_pid = 0;
		if (WIFEXITED(status))
			snprintf(err, errlen,
				 "the board firmware %s did not start (exit status %d)", prog,
				 WEXITSTATUS(status));
		else
			snprintf(err, errlen, "the board firmware %s was killed by signal %d", prog,
				 WTERMSIG(status));
	} else {
		snprintf(err, errlen,
			 "the board firmware %s (pid %d) did not make its boards "
			 "ready",
			 prog, (int)pid);
	}
	return -1;
}

void bipload_lanai_stop(void)
{
	double deadline;
	int status;
	pid_t r;

	if (!fw_pid)
		return;
	/* It may have ended with its job and been reaped with the processes:
	 * then its pid is no longer ours to signal. */
	r = waitpid(fw_pid, &status, WNOHANG);
	if (r != 0) {
		fw_pid = 0;
		return;
	}
	kill(fw_pid, SIGTERM);
	deadline = now_s() + 5.0;
	for (;;) {
		r = waitpid(fw_pid, &status, WNOHANG);
		if (r == fw_pid || (r < 0 && errno == ECHILD))
			break;
		if (now_s() > deadline) {
			kill(fw_pid, SIGKILL);
			waitpid(fw_pid, &status, 0);
			break;
		}
		usleep(2000);
	}
	fw_pid = 0;
}
