/**
 * Syscall classes, as Rezolus groups them: the `op` label of syscall and
 * syscall_latency. The index is the class number the BPF programs count by;
 * `classOf` maps a syscall name to it and `classTable` builds the per-number
 * lookup table the programs read.
 */
import { X86_64_SYSCALLS } from './x86_64.js';

export const SYSCALL_CLASSES = [
  'other', 'read', 'write', 'poll', 'lock', 'time', 'sleep', 'socket',
  'yield', 'filesystem', 'memory', 'process', 'query', 'ipc', 'timer', 'event',
] as const;
export type SyscallClass = (typeof SYSCALL_CLASSES)[number];

/** Entries of the lookup table: syscall numbers at or above it count as other. */
export const MAX_SYSCALL = 1024;

const MEMBERS: Readonly<Record<Exclude<SyscallClass, 'other'>, readonly string[]>> = {
  read: ['read', 'readv', 'pread64', 'preadv', 'preadv2', 'recvfrom', 'recvmsg', 'recvmmsg'],
  write: ['write', 'writev', 'pwrite64', 'pwritev', 'pwritev2', 'sendto', 'sendmsg', 'sendmmsg', 'sendfile', 'splice', 'tee', 'vmsplice', 'copy_file_range'],
  poll: ['poll', 'ppoll', 'select', 'pselect6', 'epoll_wait', 'epoll_pwait', 'epoll_pwait2', 'epoll_ctl', 'epoll_create', 'epoll_create1'],
  lock: ['futex', 'futex_waitv', 'flock'],
  time: ['clock_gettime', 'clock_settime', 'clock_getres', 'clock_adjtime', 'gettimeofday', 'settimeofday', 'time', 'adjtimex'],
  sleep: ['nanosleep', 'clock_nanosleep', 'pause'],
  socket: [
    'socket', 'socketpair', 'bind', 'listen', 'accept', 'accept4', 'connect', 'shutdown',
    'getsockopt', 'setsockopt', 'getsockname', 'getpeername',
  ],
  yield: ['sched_yield'],
  filesystem: [
    'open', 'openat', 'openat2', 'creat', 'close', 'close_range', 'stat', 'fstat', 'lstat', 'newfstatat', 'statx', 'statfs', 'fstatfs',
    'lseek', 'fsync', 'fdatasync', 'sync', 'syncfs', 'sync_file_range', 'truncate', 'ftruncate', 'fallocate',
    'rename', 'renameat', 'renameat2', 'mkdir', 'mkdirat', 'rmdir', 'link', 'linkat', 'unlink', 'unlinkat', 'symlink', 'symlinkat',
    'readlink', 'readlinkat', 'chmod', 'fchmod', 'fchmodat', 'chown', 'fchown', 'lchown', 'fchownat', 'access', 'faccessat', 'faccessat2',
    'getdents', 'getdents64', 'chdir', 'fchdir', 'getcwd', 'utime', 'utimes', 'utimensat', 'futimesat', 'mknod', 'mknodat',
    'dup', 'dup2', 'dup3', 'fcntl', 'ioctl', 'fadvise64', 'readahead', 'mount', 'umount2', 'chroot', 'pivot_root',
    'getxattr', 'lgetxattr', 'fgetxattr', 'setxattr', 'lsetxattr', 'fsetxattr', 'listxattr', 'llistxattr', 'flistxattr',
    'removexattr', 'lremovexattr', 'fremovexattr', 'name_to_handle_at', 'open_by_handle_at',
  ],
  memory: [
    'mmap', 'munmap', 'mprotect', 'mremap', 'madvise', 'brk', 'mlock', 'mlock2', 'munlock', 'mlockall', 'munlockall',
    'msync', 'mincore', 'mbind', 'set_mempolicy', 'get_mempolicy', 'migrate_pages', 'move_pages', 'membarrier',
    'process_madvise', 'process_mrelease', 'memfd_create', 'userfaultfd', 'pkey_mprotect', 'pkey_alloc', 'pkey_free',
  ],
  process: [
    'clone', 'clone3', 'fork', 'vfork', 'execve', 'execveat', 'exit', 'exit_group', 'wait4', 'waitid', 'kill', 'tkill', 'tgkill',
    'prctl', 'arch_prctl', 'setpriority', 'sched_setparam', 'sched_setscheduler', 'sched_setaffinity', 'sched_setattr',
    'setuid', 'setgid', 'setreuid', 'setregid', 'setresuid', 'setresgid', 'setsid', 'setpgid', 'unshare', 'setns',
    'set_tid_address', 'set_robust_list', 'rseq', 'ptrace', 'pidfd_open', 'pidfd_send_signal', 'pidfd_getfd',
    'rt_sigaction', 'rt_sigprocmask', 'rt_sigreturn', 'rt_sigsuspend', 'rt_sigqueueinfo', 'rt_tgsigqueueinfo', 'sigaltstack',
    'capset', 'setrlimit', 'prlimit64', 'seccomp', 'personality',
  ],
  query: [
    'getpid', 'getppid', 'gettid', 'getuid', 'geteuid', 'getgid', 'getegid', 'getresuid', 'getresgid', 'getpgid', 'getpgrp',
    'getsid', 'getgroups', 'uname', 'getrusage', 'getrlimit', 'sysinfo', 'getcpu', 'getpriority', 'times', 'capget',
    'sched_getparam', 'sched_getscheduler', 'sched_getaffinity', 'sched_getattr', 'sched_get_priority_max',
    'sched_get_priority_min', 'sched_rr_get_interval', 'getrandom', 'get_robust_list', 'rt_sigpending', 'rt_sigtimedwait',
  ],
  ipc: [
    'pipe', 'pipe2', 'msgget', 'msgsnd', 'msgrcv', 'msgctl', 'semget', 'semop', 'semtimedop', 'semctl',
    'shmget', 'shmat', 'shmdt', 'shmctl', 'mq_open', 'mq_unlink', 'mq_timedsend', 'mq_timedreceive', 'mq_notify', 'mq_getsetattr',
    'process_vm_readv', 'process_vm_writev',
  ],
  timer: [
    'alarm', 'getitimer', 'setitimer', 'timer_create', 'timer_settime', 'timer_gettime', 'timer_getoverrun', 'timer_delete',
    'timerfd_create', 'timerfd_settime', 'timerfd_gettime',
  ],
  event: [
    'eventfd', 'eventfd2', 'signalfd', 'signalfd4', 'inotify_init', 'inotify_init1', 'inotify_add_watch', 'inotify_rm_watch',
    'fanotify_init', 'fanotify_mark', 'io_setup', 'io_destroy', 'io_submit', 'io_cancel', 'io_getevents', 'io_pgetevents',
    'io_uring_setup', 'io_uring_enter', 'io_uring_register',
  ],
};

const BY_NAME = new Map<string, number>();
for (const [cls, names] of Object.entries(MEMBERS)) {
  const index = SYSCALL_CLASSES.indexOf(cls as SyscallClass);
  for (const n of names) BY_NAME.set(n, index);
}

/** The class number of a syscall name (0, other, when unclassified). */
export function classOf(name: string): number {
  return BY_NAME.get(name) ?? 0;
}

/** Set in a lookup table entry (beside the class) for syscalls that never return: latency does not stamp them. */
export const UNTIMED = 256;
/** Set for execve and execveat: latency stamps them only in a process's leader (another thread returns under the leader's id). */
export const EXEC = 512;
const NEVER_RETURN = new Set(['exit', 'exit_group']);
const EXECS = new Set(['execve', 'execveat']);

/** The BPF lookup table: entry n is the class of syscall number n, with UNTIMED and EXEC where they apply. */
export function classTable(numbers: Readonly<Record<string, number>> = X86_64_SYSCALLS): Uint32Array {
  const table = new Uint32Array(MAX_SYSCALL);
  for (const [name, nr] of Object.entries(numbers)) {
    if (nr < MAX_SYSCALL) table[nr] = classOf(name) | (NEVER_RETURN.has(name) ? UNTIMED : 0) | (EXECS.has(name) ? EXEC : 0);
  }
  return table;
}
