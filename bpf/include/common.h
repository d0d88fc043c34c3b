/* Included first by every program: kernel types from the generated vmlinux.h
 * (CO-RE), libbpf's helpers, and the limits every map layout uses. */
#ifndef REZOLUS_COMMON_H
#define REZOLUS_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* Per-CPU banks are sized for this many CPUs in the object; userspace shrinks
 * them to the possible CPUs before load. */
#define MAX_CPUS 1024
/* Per-task arrays are sized for this many ids; userspace sets pid_max before load. */
#define MAX_PID 4194304

char LICENSE[] SEC("license") = "GPL";

#endif
