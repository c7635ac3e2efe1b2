/* SPDX-License-Identifier: MIT */
/*
 * Build-time generator of the seccomp profiles: `seccomp-gen OUT.c` builds every profile for
 * every supported architecture with libseccomp from the tables of seccomp_tables.c, and writes
 * the BPF programs as C arrays (seccomp_bpf.h says what OUT.c defines). sbx itself only loads
 * them (seccomp.c): building and exporting the two programs with libseccomp cost ~2 ms and
 * ~7 million instructions in every process that started a sandbox, for a result that depends
 * on nothing but the tables and the architecture.
 *
 * What the filters are, and why (this is the policy; seccomp.c is only the loader):
 *
 * Allow list, not deny list. Both `default` and `strict` name what may run; everything else
 * fails. A deny list is only as good as the kernel it was written for: Flatpak's missed the
 * new mount API (CVE-2021-41133), and the kernel keeps adding syscalls (open_tree_attr,
 * listmount, file_setattr...) that a deny list written today would let through tomorrow. The
 * syscalls we refuse on purpose (docs/SECURITY.md) get an explicit EPERM, or ENOSYS where libc
 * must fall back (clone3, io_uring); anything not listed, including every syscall newer than
 * this libseccomp knows, gets ENOSYS, which is what libc expects from a kernel that lacks a
 * syscall (Docker's EPERM default broke glibc's faccessat2 fallback for exactly this reason).
 *
 * Two filters, stacked. The first ("argument filter") allows everything except argument
 * patterns: clone with namespace flags, ioctl TIOCSTI/TIOCLINUX, socket families, device
 * nodes in mknod/mknodat. The second ("syscall filter") is the allow list. The kernel runs
 * both and the stricter verdict wins, so no allow rule can ever shadow an argument rule. In
 * one filter they would meet on the same syscall, and libseccomp silently drops conditional
 * rules when the same syscall also has an unconditional rule with another action: an
 * unconditional "allow ioctl" would make a TIOCSTI rule vanish without an error.
 *
 * Compat ABIs are refused, not filtered. Only the target's native ABI is in the filters; the
 * bad-arch action answers ENOSYS to every syscall made through another one: int 0x80 / i386
 * and x32 on x86_64 (libseccomp also checks the x32 bit of the syscall number, since x32
 * shares the x86_64 audit arch), AArch32 on aarch64. Nothing sbx runs needs them, the compat
 * entry points have their own history of exploits (the compat setsockopt of CVE-2021-22555),
 * and the x86 ABI multiplexes socketcall/ipc through pointers that seccomp cannot inspect, so
 * the socket-family rule could not hold there.
 *
 * Denials return an errno, never kill, so programs can handle them.
 *
 * The generator runs on the build machine (meson `native: true`) and emits the programs of
 * every target architecture: libseccomp translates each syscall name to the target's number.
 */
#include <errno.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macros.h"
#include "seccomp_tables.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define LOW32 0xffffffffULL

/* The targets: the name used in the emitted C, the preprocessor test that selects it. The
 * argument positions below (clone flags in arg 0) hold for both. */
static const struct target {
        const char *name;
        uint32_t arch;
        const char *cpp_test;
} targets[] = {
    {"x86_64", SCMP_ARCH_X86_64, "defined(__x86_64__) && !defined(__ILP32__)"},
    {"aarch64", SCMP_ARCH_AARCH64, "defined(__aarch64__)"},
};

/* In the order of enum sbx_seccomp_profile (config.h), which seccomp.c indexes with. */
static const struct profile {
        const char *name;
        unsigned int bit;
} profiles[] = {
    {"default", SECCOMP_IN_DEFAULT},
    {"strict", SECCOMP_IN_STRICT},
};

/* Namespace flags refused in clone(2). CLONE_NEWTIME shares its bit with the exit signal
 * field of clone(2), where a value >= 128 is invalid anyway. */
static const uint64_t clone_ns_flags[] = {
    CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
    CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET, CLONE_NEWTIME,
};

/* Terminal ioctls that push input into a terminal or drive the console (CVE-2017-5226).
 * Their numbers are the same on x86_64 and aarch64 (asm-generic ioctls). */
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

/* Build state: target, profile and what failed, for one error message. */
struct build {
        const struct target *target;
        const struct profile *profile;
        const char *what; /* the rule or step that failed */
};

static int filter_new(const struct build *b, uint32_t default_action, scmp_filter_ctx *ret)
{
        _cleanup_seccomp_ scmp_filter_ctx ctx = seccomp_init(default_action);
        if (!ctx)
                return -ENOMEM;

        /* Exactly one ABI: the target's (see the top of this file). */
        if (b->target->arch != seccomp_arch_native()) {
                int r = seccomp_arch_add(ctx, b->target->arch);
                if (r < 0)
                        return r;
                r = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
                if (r < 0)
                        return r;
        }
        /* Every other ABI: refused. */
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
        if (r < 0)
                return r;
        /* A binary tree over syscall numbers: O(log n) per syscall for a 300-entry list. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(ctx);
        return 0;
}

/*
 * Add one rule by name. Names libseccomp does not know, or that do not exist on the target
 * architecture, are skipped: with an allow list, a syscall that cannot be named is never
 * allowed, so neither can it need an argument rule. libseccomp takes the build machine's
 * number (or its pseudo number for a syscall the build machine lacks) and translates it.
 */
static int rule_add(struct build *b, scmp_filter_ctx ctx, uint32_t action, const char *name,
                    unsigned int n, const struct scmp_arg_cmp *cmp)
{
        if (seccomp_syscall_resolve_name_arch(b->target->arch, name) < 0)
                return 0;
        int nr = seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR)
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

/*
 * Device nodes: mknod(2) and mknodat(2) of a block or character device are refused here, not
 * left to the kernel's CAP_MKNOD check (which a capability leak, or the whiteout exception
 * for a 0:0 character device, would pass). FIFOs, sockets and regular files stay allowed. The
 * kernel reads the mode as a 16-bit umode_t, so only the S_IFMT bits are compared: bits above
 * them cannot change the type the kernel sees.
 */
static int add_mknod_rules(struct build *b, scmp_filter_ctx ctx)
{
        static const uint64_t device_types[] = {S_IFCHR, S_IFBLK};
        static const struct {
                const char *name;
                unsigned int mode_arg;
        } calls[] = {{"mknod", 1}, {"mknodat", 2}};
        for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
                for (size_t j = 0; j < ARRAY_SIZE(device_types); j++) {
                        struct scmp_arg_cmp c = {.arg = calls[i].mode_arg,
                                                 .op = SCMP_CMP_MASKED_EQ,
                                                 .datum_a = S_IFMT,
                                                 .datum_b = device_types[j]};
                        int r = rule_add(b, ctx, SCMP_ACT_ERRNO(EPERM), calls[i].name, 1, &c);
                        if (r < 0)
                                return r;
                }
        return 0;
}

/* The argument filter: default allow, every rule refuses an argument pattern. */
static int build_argument_filter(struct build *b, scmp_filter_ctx *ret)
{
        _cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
        int r = filter_new(b, SCMP_ACT_ALLOW, &ctx);
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

        r = add_mknod_rules(b, ctx);
        if (r < 0)
                return r;

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
        unsigned int bit = b->profile->bit;
        _cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
        int r = filter_new(b, SYSCALL_FILTER_DEFAULT, &ctx);
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

/* libseccomp 2.5 exports BPF only to a file descriptor: go through a memfd. Returns the
 * number of instructions, or -errno. */
static int export_prog(scmp_filter_ctx ctx, struct sock_filter **ret)
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
        struct sock_filter *insns = malloc((size_t)size);
        if (!insns)
                return -ENOMEM;
        if (pread(fd, insns, (size_t)size, 0) != size) {
                free(insns);
                return -EIO;
        }
        *ret = insns;
        return (int)((size_t)size / sizeof(struct sock_filter));
}

/* The generator's output is written with unchecked fprintf calls: one ferror() before fclose()
 * in main catches a failed write (a full disk) for all of them. */
/* NOLINTBEGIN(cert-err33-c) */
static void emit_array(FILE *out, const char *name, const struct sock_filter *insns, int n)
{
        fprintf(out, "static const struct sock_filter %s[%d] = {\n", name, n);
        for (int i = 0; i < n; i++)
                fprintf(out, "    {0x%04x, %u, %u, 0x%08x},\n", insns[i].code, insns[i].jt,
                        insns[i].jf, insns[i].k);
        fprintf(out, "};\n");
}

/* Build, export and emit both programs of one profile for one target. */
static int emit_profile(FILE *out, const struct target *t, const struct profile *p)
{
        struct build b = {.target = t, .profile = p, .what = ""};
        _cleanup_seccomp_ scmp_filter_ctx args = NULL;
        _cleanup_seccomp_ scmp_filter_ctx syscalls = NULL;
        int r = build_argument_filter(&b, &args);
        if (r >= 0)
                r = build_syscall_filter(&b, &syscalls);
        if (r < 0) {
                fprintf(stderr, "seccomp-gen: %s/%s: failed to build (%s): %s\n", t->name, p->name,
                        b.what, strerror(-r));
                return r;
        }
        const struct {
                scmp_filter_ctx ctx;
                const char *part;
        } progs[2] = {{args, "args"}, {syscalls, "syscalls"}};
        for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
                struct sock_filter *insns = NULL;
                int n = export_prog(progs[i].ctx, &insns);
                if (n < 0) {
                        fprintf(stderr, "seccomp-gen: %s/%s: failed to export: %s\n", t->name,
                                p->name, strerror(-n));
                        return n;
                }
                char name[64];
                snprintf(name, sizeof(name), "%s_%s_%s", t->name, p->name, progs[i].part);
                emit_array(out, name, insns, n);
                free(insns);
        }
        return 0;
}

static int emit_target(FILE *out, const struct target *t)
{
        fprintf(out, "\n#if %s\n", t->cpp_test);
        for (size_t i = 0; i < ARRAY_SIZE(profiles); i++)
                if (emit_profile(out, t, &profiles[i]) < 0)
                        return -1;
        fprintf(out, "const char seccomp_bpf_arch[] = \"%s\";\n", t->name);
        fprintf(out, "const struct seccomp_bpf_profile seccomp_bpf_profiles[%zu] = {\n",
                ARRAY_SIZE(profiles));
        for (size_t i = 0; i < ARRAY_SIZE(profiles); i++) {
                const char *pn = profiles[i].name;
                fprintf(out,
                        "    {.prog = {{%s_%s_args, ARRAY_SIZE(%s_%s_args)},\n"
                        "              {%s_%s_syscalls, ARRAY_SIZE(%s_%s_syscalls)}}},\n",
                        t->name, pn, t->name, pn, t->name, pn, t->name, pn);
        }
        fprintf(out, "};\n#define SECCOMP_BPF_DONE\n#endif\n");
        return 0;
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: seccomp-gen OUT.c\n");
                return 2;
        }
        const struct scmp_version *v = seccomp_version();
        if (!v || v->major < 2 || (v->major == 2 && v->minor < 5)) {
                fprintf(stderr, "seccomp-gen: libseccomp 2.5 or newer is needed\n");
                return 1;
        }
        FILE *out = fopen(argv[1], "we");
        if (!out) {
                fprintf(stderr, "seccomp-gen: %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        /* A half-written file is removed on failure; anything else (a device such as
         * /dev/full, a fifo, a symlink to a file: unlink would remove the link) is not ours to
         * remove. */
        struct stat st, at;
        bool regular = fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode) &&
                       lstat(argv[1], &at) == 0 && S_ISREG(at.st_mode) && at.st_dev == st.st_dev &&
                       at.st_ino == st.st_ino;
        fprintf(out,
                "/* Generated by seccomp-gen (src/sandbox/seccomp_gen.c) with libseccomp "
                "%u.%u.%u: do not edit. */\n#include \"src/sandbox/seccomp_bpf.h\"\n",
                v->major, v->minor, v->micro);
        int r = 0;
        for (size_t i = 0; i < ARRAY_SIZE(targets) && r == 0; i++)
                r = emit_target(out, &targets[i]);
        /* Other architectures get no programs: seccomp.c refuses every profile there. */
        fprintf(out, "\n#ifndef SECCOMP_BPF_DONE\nconst char seccomp_bpf_arch[] = \"\";\n"
                     "const struct seccomp_bpf_profile seccomp_bpf_profiles[2] = {{{{0}}}};\n"
                     "#endif\n");
        /* fclose alone misses a write that failed before the final flush */
        bool write_failed = ferror(out) != 0;
        if (fclose(out) != 0 || write_failed || r != 0) {
                if (r == 0)
                        fprintf(stderr, "seccomp-gen: %s: failed to write\n", argv[1]);
                if (regular)
                        unlink(argv[1]);
                return 1;
        }
        return 0;
}
/* NOLINTEND(cert-err33-c) */
