/* SPDX-License-Identifier: MIT */
/*
 * env.c - the drivers compiled in and the variables the library reads.
 * Keep bip_env_vars in step with bip(7) and the drivers' pages: bip_shm(7),
 * bip_lanai(7), bip_ofi(7), bip_psm2(7).
 *
 * bip_settings and bip_setting hand the table to a layer that may not see
 * the library's inside (the MPI shim's control variables, bip_settings(3)):
 * the table is constant, so the answers hold for the life of the process,
 * before bip_init as after it.
 */
#include <errno.h>

#include "env.h"
#include "state.h"

const struct bip_nic_ops *const bip_drivers[] = {
	&bip_shm_ops,
#ifdef BIP_HAVE_OFI
	&bip_ofi_ops,
#endif
#ifdef BIP_HAVE_PSM2
	&bip_psm2_ops,
#endif
	/* Never chosen by themselves: the simulated board (BIP_NIC=lanai) and
	 * libfabric's datagram endpoints (BIP_NIC=udp) serve when asked. */
	&bip_lanai_ops,
#ifdef BIP_HAVE_OFI
	&bip_udp_ops,
#endif
};
const size_t bip_ndrivers = sizeof(bip_drivers) / sizeof(bip_drivers[0]);

const struct bip_env_var bip_env_vars[] = {
	{ "BIPCONF", "$HOME/.bip/bipconf", "configuration file" },
	{ "BIP_OPTS", "", "n<k>: use the first k nodes (k nodes on this host without a file); "
			   "q: quiet" },
	{ "BIP_NODE", "(from the host name)", "this process's node, set by bipload" },
	{ "BIP_JOBID", "(from the configuration)", "job id naming shared memory, set by bipload" },
	{ "BIP_SECRET", "(none)", "the job's secret for the network start-up exchange, 32 to 128 "
				  "hex digits, set by bipload (its value is never shown)" },
	{ "BIP_HOST", "(the kernel's host name)", "this host's name in the configuration, set by bipload" },
	{ "BIP_BOOTSTRAP", "(from the environment)", "start-up back end: bipload, pmix or pmi2; "
	  "otherwise BIP_NODE means bipload, PMIX_RANK pmix, PMI_FD or PMI_RANK pmi2" },
	{ "BIP_INIT_TIMEOUT", "10 + 2 per node", "seconds bip_init waits for the other nodes" },
	{ "BIP_BIND", "none", "core: bind the k-th process of a host to the k-th CPU it may use "
			      "(set by bipload --bind-to); none: leave the affinity alone" },
	{ "BIP_REPORT_BINDINGS", "0", "1: each node prints its host, pid, drivers and CPUs on "
				      "stderr at bip_init (set by bipload --report-bindings)" },
	{ "BIP_APPNUM", "0", "the command of an MPMD launch this process runs (MPI_APPNUM), set by "
			     "bipload" },
	{ "BIP_WAIT", "auto", "waiting: auto (spin, then yield; with more local processes than "
			      "processors, sleep once a wait lasts BIP_SLEEP_AFTER), spin, yield, "
			      "block (spin, then sleep until a peer wakes the process: shm, lanai, "
			      "ofi, udp)" },
	{ "BIP_PROGRESS_THREAD", "0", "1: a thread per process moves long messages and a layer's "
				       "non-blocking operations while the application computes" },
	{ "BIP_SLEEP_AFTER", "2000", "with BIP_WAIT=auto and more local processes than "
				    "processors: microseconds a wait lasts before it sleeps" },
	{ "BIP_SLEEP_MAX", "0.01", "when a waiter sleeps: the longest sleep, seconds (a wake-up "
				   "that never comes, and how often a sleeper looks around)" },
	{ "BIP_SPIN", "2000 (5 with more local processes than processors)",
	  "rounds of spinning before yielding, with BIP_WAIT=auto" },
	{ "BIP_TOPOLOGY", "$HOME/.bip/biptopology",
	  "biproute, lanai-sim: the cabling of the (simulated) network" },
	{ "BIP_NIC", "(shm on this host, else ofi, else psm2)",
	  "force one driver for every peer: shm, lanai, ofi, psm2" },
	{ "BIP_SHM_CMA_MIN", "none", "shm: long messages from this size use process_vm_readv" },
	{ "BIP_SHM_CMA", "1", "shm: 0 disables process_vm_readv" },
	{ "BIP_OFI_PROVIDER", "(best: verbs, efa, psm3, cxi, psm2 before tcp; never shm across "
			      "hosts)", "ofi: the libfabric provider, e.g. tcp, shm, verbs" },
	{ "BIP_OFI_CREDITS", "64", "ofi: short messages in flight per peer (a power of two)" },
	{ "BIP_OFI_ALIVE_TIMEOUT", "10",
	  "ofi: seconds a peer's host may leave a liveness check unanswered" },
	{ "BIP_OFI_MR_CACHE", "1", "ofi: 0 registers each long message's buffer anew" },
	{ "BIP_OFI_MR_LOCAL", "0", "ofi: 1 registers buffers even where the provider does not "
				   "ask" },
	{ "BIP_OOB_PORT", "(20000 .. 59999, from the job id)",
	  "first TCP port of a host's listener in the address exchange (the next 7 if busy)" },
	{ "BIP_RETRY_TIMEOUT", "30", "seconds without anything from a peer, every path down, "
				   "before it is lost (reliability layer)" },
	{ "BIP_REL_WINDOW", "256", "reliability layer: packets unacknowledged per peer "
				   "(a power of two)" },
	{ "BIP_REL_WINDOW_BYTES", "1048576",
	  "reliability layer: bytes of fragments unacknowledged per peer" },
	{ "BIP_REL_FRAG", "65536 (less if the NIC carries less)",
	  "reliability layer: bytes of a long message's fragment" },
	{ "BIP_REL_EAGER", "16384 (at most BIP_REL_FRAG)",
	  "reliability layer: the largest long message of the program's tags sent whole with "
	  "its announcement (0: none)" },
	{ "BIP_REL_RTO", "0.002", "reliability layer: least retransmission timeout, seconds" },
	{ "BIP_REL_RTO_MAX", "0.5", "reliability layer: greatest retransmission timeout" },
	{ "BIP_REL_ACK_DELAY", "0.0002",
	  "reliability layer: seconds an acknowledgement waits for traffic to ride on" },
	{ "BIP_REL_PROBE", "0.1", "reliability layer: seconds between probes of a retired path" },
	{ "BIP_REL_PATH_FAILS", "3", "reliability layer: timeouts in a row that retire a path" },
	{ "BIP_LANAI_RELIABLE", "1",
	  "lanai: 1 the reliability layer repairs the wire; 0 the board alone (fault-free wires)" },
	{ "BIP_LANAI_RX_QUEUE", "8M", "lanai: bytes of the datagram receive queue" },
	{ "BIP_LANAI_SIM", "lanai-sim beside bipload, else in PATH",
	  "bipload: the firmware program of the simulated board" },
	{ "BIP_LANAI_CONF", "$HOME/.bip/biplanai if it exists",
	  "lanai: file of the wire's knobs (the variables below win)" },
	{ "BIP_LANAI_TRACE", "none", "lanai: log every packet sent and received to this file" },
	{ "BIP_LANAI_LOSS", "0", "lanai: percentage of packets the wire loses" },
	{ "BIP_LANAI_CORRUPT", "0", "lanai: percentage of packets with one bit flipped" },
	{ "BIP_LANAI_DUPLICATE", "0", "lanai: percentage of packets delivered twice" },
	{ "BIP_LANAI_REORDER", "0", "lanai: percentage of packets held behind the next one" },
	{ "BIP_LANAI_DELAY", "0", "lanai: time every packet spends on the wire (10ms, 250us)" },
	{ "BIP_LANAI_SEED", "1", "lanai: seed of the fault generator" },
	{ "BIP_LANAI_LINK_DOWN", "none",
	  "lanai: NODE@DOWN[:UP], packets or times: the link of NODE goes down (and up)" },
	{ "BIP_LANAI_RAILS", "1 (or the routes per line of the configuration)",
	  "lanai: boards per node, each on a network of its own (1 to 4)" },
	{ "BIP_LANAI_RAIL<r>_<KNOB>", "the knob for every rail",
	  "lanai: a fault knob for rail r alone (BIP_LANAI_RAIL1_LOSS=5)" },
	{ "BIP_LANAI_RATE", "0 (no limit)", "lanai: speed of each board's link, in MB/s" },
	{ "BIP_LANAI_DROP", "none",
	  "lanai: KIND:SRC:DST:N: the wire loses the N-th packet of KIND on that link" },
	{ "BIP_LANAI_SYNC", "1ms",
	  "lanai: idle time of a link before its board confirms its last packet (SYNC)" },
	{ "BIP_LANAI_LINK_TIMEOUT", "10",
	  "lanai: seconds a link may go without an acknowledgement before it is down" },
	{ "BIP_UDP_LOSS", "0", "udp: percentage of datagrams the driver drops when it sends" },
	{ "BIP_UDP_CORRUPT", "0", "udp: percentage of datagrams sent with one bit flipped" },
	{ "BIP_UDP_DUPLICATE", "0", "udp: percentage of datagrams sent twice" },
	{ "BIP_UDP_SEED", "1", "udp: seed of the fault generator (each node: seed ^ node)" },
	{ "BIPLOAD_GRACE", "3", "bipload: seconds between SIGTERM and SIGKILL" },
	{ "BIPLOAD_START_TIMEOUT", "60", "bipload: seconds a remote shell has to start its process" },
	{ "BIP_ATTACH_DIR", "/run/user/UID, else /tmp/bip-UID",
	  "bipload: the private directory of the sockets through which commands attach to "
	  "running jobs (bipload --attach)" },
	{ "BIP_RSH", "ssh -o BatchMode=yes -o ConnectTimeout=10",
	  "bipload: the remote shell that starts processes on other hosts" },
	{ "BIPCC_CC", "$CC, else cc", "bipcc: the C compiler" },
};
const size_t bip_nenv_vars = sizeof(bip_env_vars) / sizeof(bip_env_vars[0]);

BIP_EXPORT int bip_settings(void)
{
	return (int)bip_nenv_vars;
}

BIP_EXPORT int bip_setting(int i, const char **name, const char **def, const char **what)
{
	const struct bip_env_var *v;

	if (i < 0 || (size_t)i >= bip_nenv_vars)
		return -EINVAL;
	v = &bip_env_vars[i];
	if (name)
		*name = v->name;
	if (def)
		*def = v->def;
	if (what)
		*what = v->what;
	return 0;
}
