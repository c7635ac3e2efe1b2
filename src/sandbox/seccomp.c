/* SPDX-License-Identifier: MIT */
/*
 * Seccomp profiles, built with libseccomp from the compiled-in tables of seccomp_tables.c.
 *
 * Allow list, not deny list. Both `default` and `strict` name what may run; everything else
 * fails. A deny list is only as good as the kernel it was written for: Flatpak's missed the
 * new mount API (CVE-2021-41133), and the kernel keeps adding syscalls (open_tree_attr,
 * listmount, file_setattr...) that a deny list written today would let through tomorrow. The
 * syscalls we refuse on purpose (HARDENING.md) get an explicit EPERM, or ENOSYS where libc
 * must fall back (clone3, io_uring); anything not listed, including every syscall newer than
 * this libseccomp knows, gets ENOSYS, which is what libc expects from a kernel that lacks a
 * syscall (Docker's EPERM default broke glibc's faccessat2 fallback for exactly this reason).
 *
 * Two filters, stacked. The first ("argument filter") allows everything except argument
 * patterns: clone with namespace flags, ioctl TIOCSTI/TIOCLINUX, socket families. The second
 * ("syscall filter") is the allow list. The kernel runs both and the stricter verdict wins,
 * so no allow rule can ever shadow an argument rule. In one filter they would meet on the
 * same syscall, and libseccomp silently drops conditional rules when the same syscall also
 * has an unconditional rule with another action: an unconditional "allow ioctl" would make
 * a TIOCSTI rule vanish without an error.
 *
 * Compat ABIs are refused, not filtered. Only the native ABI is in the filters; the bad-arch
 * action answers ENOSYS to every syscall made through another one: int 0x80 / i386 and x32 on
 * x86_64 (libseccomp also checks the x32 bit of the syscall number, since x32 shares the
 * x86_64 audit arch), AArch32 on aarch64. Nothing sbx runs needs them, the compat entry
 * points have their own history of exploits (the compat setsockopt of CVE-2021-22555), and
 * the x86 ABI multiplexes socketcall/ipc through pointers that seccomp cannot inspect, so
 * the socket-family rule could not hold there.
 *
 * Denials return an errno, never kill, so programs can handle them.
 */
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../shared/macros.h"
#include "seccomp_tables.h"

#if defined(__x86_64__) && !defined(__ILP32__)
#define NATIVE_ARCH SCMP_ARCH_X86_64
#define NATIVE_NAME "x86_64" /* refused: x86 (int 0x80, i386 binaries) and x32 */
#elif defined(__aarch64__)
/* AArch32 (SCMP_ARCH_ARM) is left out of the filter on purpose, like x86 and x32 above. */
#define NATIVE_ARCH SCMP_ARCH_AARCH64
#define NATIVE_NAME "aarch64" /* refused: arm (AArch32 binaries) */
#else
/* Other arches: clone's argument order and the tables are unchecked; refuse at run time. */
#define NATIVE_ARCH 0
#define NATIVE_NAME "this architecture"
#endif

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define LOW32 0xffffffffULL

/* Namespace flags refused in clone(2). CLONE_NEWTIME shares its bit with the exit signal
 * field of clone(2), where a value >= 128 is invalid anyway. */
static const uint64_t clone_ns_flags[] = {
    CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
    CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET, CLONE_NEWTIME,
};

/* Terminal ioctls that push input into a terminal or drive the console (CVE-2017-5226). */
static const uint64_t ioctl_refused[] = {TIOCSTI, TIOCLINUX};

/* Socket families a sandboxed process may use; the rest fail with EAFNOSUPPORT. */
static const uint64_t socket_families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
#define SOCKET_FAMILY_MAX AF_NETLINK

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}
#define _cleanup_seccomp_ _cleanup_(seccomp_releasep)

/* Build state: the profile and what failed, for one error message. */
struct build {
        enum sbx_seccomp_profile profile;
        const char *what; /* the rule or step that failed */
};

static int filter_new(uint32_t default_action, scmp_filter_ctx *ret)
{
        _cleanup_seccomp_ scmp_filter_ctx ctx = seccomp_init(default_action);
        if (!ctx)
                return -ENOMEM;

        /* Every ABI but the native one: refused (see the top of this file). */
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
        if (r < 0)
                return r;
        /* A binary tree over syscall numbers: O(log n) per syscall for a 300-entry list. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (r < 0)
                return r;
        /* Report the kernel's errno from seccomp_load, not -ECANCELED. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
        if (r < 0)
                return r;
        /* SCMP_FLTATR_CTL_NNP stays on (the default): the caller has set no_new_privs already,
         * and setting it again on load costs nothing. No TSYNC: the caller is single-threaded. */
        *ret = TAKE_PTR(ctx);
        return 0;
}

/*
 * Add one rule by name. Names libseccomp does not know, or that do not exist on this
 * architecture, are skipped: with an allow list, a syscall that cannot be named is never
 * allowed, so neither can it need an argument rule.
 */
static int rule_add(struct build *b, scmp_filter_ctx ctx, uint32_t action, const char *name,
                    unsigned int n, const struct scmp_arg_cmp *cmp)
{
        int nr = seccomp_syscall_resolve_name(name);
        if (nr < 0)
                return 0;
        int r = seccomp_rule_add_array(ctx, action, nr, n, cmp);
        if (r < 0)
                b->what = name;
        return r;
}

static int add_socket_rules(struct build *b, scmp_filter_ctx ctx, const char *name)
{
        uint32_t eaf = SCMP_ACT_ERRNO(EAFNOSUPPORT);
        int r;

        /* Refuse every family value but the allowed ones: each value 0..AF_NETLINK that is not
         * allowed, and everything above it (as a 64-bit value, so high garbage bits are
         * refused too, although the kernel would read only the low 32). */
        for (uint64_t fam = 0; fam <= SOCKET_FAMILY_MAX; fam++) {
                bool allowed = false;
                for (size_t i = 0; i < ARRAY_SIZE(socket_families); i++)
                        allowed = allowed || socket_families[i] == fam;
                if (allowed)
                        continue;
                struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, fam);
                r = rule_add(b, ctx, eaf, name, 1, &c);
                if (r < 0)
                        return r;
        }
        struct scmp_arg_cmp above = SCMP_A0(SCMP_CMP_GT, SOCKET_FAMILY_MAX);
        return rule_add(b, ctx, eaf, name, 1, &above);
}

/* The argument filter: default allow, every rule refuses an argument pattern. */
static int build_argument_filter(struct build *b, scmp_filter_ctx *ret)
{
        _cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
        int r = filter_new(SCMP_ACT_ALLOW, &ctx);
        if (r < 0) {
                b->what = "argument filter";
                return r;
        }

        /* clone(2) flags are arg 0 on x86_64 and aarch64; the kernel reads the low 32 bits. */
        for (size_t i = 0; i < ARRAY_SIZE(clone_ns_flags); i++) {
                struct scmp_arg_cmp c =
                    SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns_flags[i], clone_ns_flags[i]);
                r = rule_add(b, ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, &c);
                if (r < 0)
                        return r;
        }

        /* The ioctl request is an unsigned int in the kernel: compare only the low 32 bits, so
         * setting high bits cannot slip past (snapd CVE-2019-7303). */
        for (size_t i = 0; i < ARRAY_SIZE(ioctl_refused); i++) {
                struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, ioctl_refused[i]);
                r = rule_add(b, ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &c);
                if (r < 0)
                        return r;
        }

        r = add_socket_rules(b, ctx, "socket");
        if (r < 0)
                return r;
        r = add_socket_rules(b, ctx, "socketpair");
        if (r < 0)
                return r;

        /* Raw IP sockets need CAP_NET_RAW, which no sandboxed process has; refuse them here
         * too, so a capability leak alone does not open them. */
        static const uint64_t ip_families[] = {AF_INET, AF_INET6};
        static const uint64_t raw_types[] = {SOCK_RAW, SOCK_PACKET};
        for (size_t i = 0; i < ARRAY_SIZE(ip_families); i++)
                for (size_t j = 0; j < ARRAY_SIZE(raw_types); j++) {
                        struct scmp_arg_cmp c[] = {
                            SCMP_A0(SCMP_CMP_EQ, ip_families[i]),
                            SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf /* SOCK_TYPE_MASK */, raw_types[j]),
                        };
                        r = rule_add(b, ctx, SCMP_ACT_ERRNO(EPERM), "socket", ARRAY_SIZE(c), c);
                        if (r < 0)
                                return r;
                }

        *ret = TAKE_PTR(ctx);
        return 0;
}

/* The syscall filter: the profile's allow list; default ENOSYS. */
#define SYSCALL_FILTER_DEFAULT SCMP_ACT_ERRNO(ENOSYS)
static int build_syscall_filter(struct build *b, scmp_filter_ctx *ret)
{
        unsigned int bit =
            b->profile == SBX_SECCOMP_STRICT ? SECCOMP_IN_STRICT : SECCOMP_IN_DEFAULT;
        _cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
        int r = filter_new(SYSCALL_FILTER_DEFAULT, &ctx);
        if (r < 0) {
                b->what = "syscall filter";
                return r;
        }

        for (size_t i = 0; i < seccomp_allow_table_len; i++) {
                if (!(seccomp_allow_table[i].profiles & bit))
                        continue;
                r = rule_add(b, ctx, SCMP_ACT_ALLOW, seccomp_allow_table[i].name, 0, NULL);
                if (r < 0)
                        return r;
        }

        /* personality(2): Docker's values only (not READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE...).
         * The kernel reads an unsigned int; compare the low 32 bits. */
        for (size_t i = 0; i < seccomp_personality_allowed_len; i++) {
                struct scmp_arg_cmp c =
                    SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, seccomp_personality_allowed[i]);
                r = rule_add(b, ctx, SCMP_ACT_ALLOW, "personality", 1, &c);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < seccomp_deny_table_len; i++) {
                uint32_t action = SCMP_ACT_ERRNO((uint16_t)seccomp_deny_table[i].errnum);
                /* ENOSYS entries are the default already (libseccomp refuses such a rule);
                 * they stay in the table to say the choice is deliberate. */
                if (action == SYSCALL_FILTER_DEFAULT)
                        continue;
                r = rule_add(b, ctx, action, seccomp_deny_table[i].name, 0, NULL);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(ctx);
        return 0;
}

/* Build both filters of profile p (nothing compiled, nothing loaded). */
static int build_profile(enum sbx_seccomp_profile p, scmp_filter_ctx *ret_args,
                         scmp_filter_ctx *ret_syscalls, struct sbx_error *e)
{
        if (NATIVE_ARCH == 0 || seccomp_arch_native() != NATIVE_ARCH)
                return sbx_unsupported(e, 0,
                                       "seccomp profile '%s' is only defined for native x86_64 "
                                       "and aarch64 processes",
                                       seccomp_profile_name(p));

        struct build b = {.profile = p, .what = ""};
        _cleanup_seccomp_ scmp_filter_ctx args = NULL;
        _cleanup_seccomp_ scmp_filter_ctx syscalls = NULL;
        int r = build_argument_filter(&b, &args);
        if (r >= 0)
                r = build_syscall_filter(&b, &syscalls);
        if (r < 0)
                return sbx_internal(e, -r, "failed to build seccomp profile '%s' (%s)",
                                    seccomp_profile_name(p), b.what);
        *ret_args = TAKE_PTR(args);
        *ret_syscalls = TAKE_PTR(syscalls);
        return 0;
}

/*
 * Profiles compiled to BPF, kept for the life of this sbx process. Building and generating
 * the two programs with libseccomp costs ~2 ms; attaching compiled programs ~0.15 ms. A
 * parent that calls seccomp_check() before it forks hands the compiled programs to every
 * child, whose seccomp_apply() then only attaches them (and needs no file descriptor). The
 * cache is plain memory of this process, made from the compiled-in tables: nothing inside a
 * sandbox can reach it. Without it, seccomp_apply() builds and loads through libseccomp.
 */
struct compiled {
        bool ready;
        struct sock_fprog prog[2]; /* [0] the argument filter, [1] the syscall filter */
};
static struct compiled compiled_profiles[SBX_SECCOMP_UNCONFINED];

/* libseccomp 2.5 exports BPF only to a file descriptor: go through a memfd. */
static int export_prog(scmp_filter_ctx ctx, struct sock_fprog *ret)
{
        _cleanup_close_ int fd = memfd_create("sbx-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return negerrno();
        int r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        off_t size = lseek(fd, 0, SEEK_END);
        if (size < 0)
                return negerrno();
        if (size == 0 || size % sizeof(struct sock_filter) != 0 ||
            (size_t)size / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -E2BIG;

        _cleanup_free_ struct sock_filter *insns = malloc((size_t)size);
        if (!insns)
                return -ENOMEM;
        ssize_t n = RETRY_EINTR(pread(fd, insns, (size_t)size, 0));
        if (n < 0)
                return negerrno();
        if (n != size)
                return -EIO;
        ret->len = (unsigned short)((size_t)size / sizeof(struct sock_filter));
        ret->filter = TAKE_PTR(insns);
        return 0;
}

/* Build and compile profile p into compiled_profiles[p], unless it is there already. */
static int compile_profile(enum sbx_seccomp_profile p, struct sbx_error *e)
{
        struct compiled *c = &compiled_profiles[p];
        if (c->ready)
                return 0;

        _cleanup_seccomp_ scmp_filter_ctx args = NULL;
        _cleanup_seccomp_ scmp_filter_ctx syscalls = NULL;
        int r = build_profile(p, &args, &syscalls, e);
        if (r < 0)
                return r;

        struct sock_fprog prog[2] = {};
        r = export_prog(args, &prog[0]);
        if (r >= 0)
                r = export_prog(syscalls, &prog[1]);
        if (r < 0) {
                free(prog[0].filter);
                return sbx_internal(e, -r, "failed to generate seccomp profile '%s' for %s",
                                    seccomp_profile_name(p), NATIVE_NAME);
        }
        memcpy(c->prog, prog, sizeof(prog));
        c->ready = true;
        return 0;
}

static int load_failed(enum sbx_seccomp_profile p, int err, struct sbx_error *e)
{
        /* EINVAL/ENOSYS: this kernel cannot take the filter; anything else is ours. */
        bool unsupported = err == EINVAL || err == ENOSYS;
        return sbx_fail(e, unsupported ? EXIT_UNSUPPORTED : EXIT_SBX_FAILED,
                        unsupported ? "unsupported" : "internal", err,
                        "failed to load seccomp profile '%s'", seccomp_profile_name(p));
}

int seccomp_apply(enum sbx_seccomp_profile p, struct sbx_error *e)
{
        if (p == SBX_SECCOMP_UNCONFINED)
                return 0;
        if ((unsigned int)p >= ARRAY_SIZE(compiled_profiles))
                return sbx_internal(e, EINVAL, "unknown seccomp profile %d", (int)p);

        /* In both paths the argument filter goes first: the syscall filter may refuse
         * seccomp(2) itself. */
        struct compiled *c = &compiled_profiles[p];
        if (c->ready) {
                /* The caller has set it; without it, an unprivileged seccomp() gets EACCES. */
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        return sbx_internal(e, errno, "failed to set no_new_privs");
                for (size_t i = 0; i < ARRAY_SIZE(c->prog); i++)
                        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &c->prog[i]) < 0)
                                return load_failed(p, errno, e);
                return 0;
        }

        _cleanup_seccomp_ scmp_filter_ctx args = NULL;
        _cleanup_seccomp_ scmp_filter_ctx syscalls = NULL;
        int r = build_profile(p, &args, &syscalls, e);
        if (r < 0)
                return r;
        r = seccomp_load(args);
        if (r >= 0)
                r = seccomp_load(syscalls);
        if (r < 0)
                return load_failed(p, -r, e);
        return 0;
}

/* Whether the kernel can return an errno from a filter: seccomp(SECCOMP_GET_ACTION_AVAIL),
 * else the sysctl list. 0 or -errno. */
static int kernel_has_errno_action(void)
{
        uint32_t action = SECCOMP_RET_ERRNO;
        if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0)
                return 0;
        int err = errno;

        _cleanup_close_ int fd =
            open("/proc/sys/kernel/seccomp/actions_avail", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -err;
        char buf[256];
        ssize_t n = RETRY_EINTR(read(fd, buf, sizeof(buf) - 1));
        if (n < 0)
                return -err;
        buf[n] = '\0';
        char *save = NULL;
        for (char *tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
                if (strcmp(tok, "errno") == 0)
                        return 0;
        return -err;
}

int seccomp_check(enum sbx_seccomp_profile p, struct sbx_error *e)
{
        if (p == SBX_SECCOMP_UNCONFINED)
                return 0;

        /* EINVAL: the kernel was built without CONFIG_SECCOMP. 2 means sbx itself already runs
         * under a filter (a container): ours stack on top, which is fine. */
        if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
                return sbx_unsupported(e, errno,
                                       "seccomp: the kernel has no seccomp support (it needs "
                                       "CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER)");
        int r = kernel_has_errno_action();
        if (r < 0)
                return sbx_unsupported(e, -r,
                                       "seccomp: the kernel has no seccomp filters with an "
                                       "errno action (CONFIG_SECCOMP_FILTER)");

        const struct scmp_version *v = seccomp_version();
        if (!v || v->major < 2 || (v->major == 2 && v->minor < 5))
                return sbx_unsupported(e, 0,
                                       "seccomp: libseccomp %u.%u.%u is older than 2.5: "
                                       "install libseccomp 2.5 or newer",
                                       v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0);

        /* Build and compile both filters, loading nothing; the result is kept for the
         * seccomp_apply() of every child forked after this. Every ABI but the native one is
         * refused by construction (the bad-arch action), so nothing else needs covering. */
        if ((unsigned int)p >= ARRAY_SIZE(compiled_profiles))
                return sbx_internal(e, EINVAL, "unknown seccomp profile %d", (int)p);
        return compile_profile(p, e);
}
