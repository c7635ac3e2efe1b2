/* SPDX-License-Identifier: MIT */
/*
 * outer-seccomp CMD [ARG...]: run CMD under a seccomp filter like a container runtime's
 * default profile for a container without CAP_SYS_ADMIN: unshare(2) and clone(2) with
 * CLONE_NEWUSER fail with EPERM, clone3(2) with ENOSYS (its flags cannot be filtered).
 * sbx must then refuse with one line naming the filter and the fix (tests/076-host-refusals.bats).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: outer-seccomp CMD [ARG...]\n");
                return 2;
        }
        struct sock_filter insns[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
            /* the low 32 bits of clone's flags */
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
            BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = sizeof(insns) / sizeof(insns[0]), .filter = insns};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                perror("outer-seccomp: seccomp");
                return 1;
        }
        execv(argv[1], argv + 1);
        perror("outer-seccomp: execv");
        return 127;
}
