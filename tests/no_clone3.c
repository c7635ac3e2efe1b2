/* SPDX-License-Identifier: MIT */
/*
 * no-clone3 CMD [ARG...]: run CMD with clone3(2) failing with ENOSYS, as on a kernel before
 * 5.3 or inside a container whose seccomp profile predates clone3. sbx must then fall back to
 * clone plus a cgroup.procs write and still put every process of an exec into the session's
 * cgroup (tests/320-limits.bats, tests/vm/run-v2.sh).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: no-clone3 CMD [ARG...]\n");
                return 2;
        }
        struct sock_filter insns[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = sizeof(insns) / sizeof(insns[0]), .filter = insns};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                perror("no-clone3: seccomp");
                return 1;
        }
        execv(argv[1], argv + 1);
        perror("no-clone3: execv");
        return 127;
}
