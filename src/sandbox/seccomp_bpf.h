/* SPDX-License-Identifier: MIT */
/*
 * The seccomp programs generated at build time by seccomp_gen.c (seccomp_bpf.c in the build
 * directory), for the architecture sbx is compiled for. Private to seccomp.c.
 */
#pragma once

#include <linux/filter.h>
#include <stddef.h>

#include "shared/macros.h"

struct seccomp_bpf_prog {
        const struct sock_filter *insns;
        size_t len; /* 0: no program for this architecture */
};

/* One profile: [0] the argument filter, [1] the syscall filter, loaded in that order. */
struct seccomp_bpf_profile {
        struct seccomp_bpf_prog prog[2];
};

/* Indexed by enum sbx_seccomp_profile (SBX_SECCOMP_DEFAULT, SBX_SECCOMP_STRICT). */
extern const struct seccomp_bpf_profile seccomp_bpf_profiles[2];
/* The architecture the programs are for ("x86_64", "aarch64"), or "" when there are none. */
extern const char seccomp_bpf_arch[];
