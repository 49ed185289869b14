/* SPDX-License-Identifier: MIT */
/*
 * bipload_monitor.h - bipload --monitor (bipload_monitor.c): the server of
 * the job's live view and the pages of its processes.
 */
#ifndef BIPLOAD_MONITOR_H
#define BIPLOAD_MONITOR_H

#include <poll.h>
#include <stddef.h>

/* How often bipload reads the processes' pages. */
#define BIPLOAD_MONITOR_PERIOD_MS 250

/* 1 if s reads as ADDR:PORT (the optional argument of --monitor). */
int bipload_monitor_addr_like(const char *s);
/* Listen on addr (NULL: 127.0.0.1 and a port the system picks), make the
 * token and print the page's URL on stderr.  Dies when it cannot. */
void bipload_monitor_start(const char *addr);
/* 1 once started. */
int bipload_monitor_on(void);
/* Room for room nodes (bipload_room()); after bipload_monitor_start. */
void bipload_monitor_prepare(int room);
/* A new page for node, which its process is to inherit (BIP_MONITOR_FD),
 * or -1 (monitoring off, or no page: the node is then not monitored). */
int bipload_monitor_page_fd(int node);
/* A MONITOR frame from node's proxy (bipload_proxy.h): its page's copy,
 * checked; 0, or a negative errno (a broken frame). */
int bipload_monitor_remote(int node, const void *data, size_t len);
/* The poll loop's part: the descriptors (at most bipload_monitor_maxfds()),
 * what came on them, and the poll time-out (ms at most) so that the pages
 * are read on time. */
int bipload_monitor_maxfds(void);
int bipload_monitor_pollfds(struct pollfd *pfd);
void bipload_monitor_events(const struct pollfd *pfd, int n);
int bipload_monitor_timeout(int ms);
void bipload_monitor_stop(void);

#endif /* BIPLOAD_MONITOR_H */
