/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "../launch/cgroup.h"
#include "../launch/launch.h"
#include "../launch/limits.h"
#include "shared/util.h"
#include "args.h"
#include "provision.h"
#include "session_json.h"

void session_json(struct buf *b, const struct session_state *st, bool with_created)
{
        char t[21];
        buf_puts(b, "{\"id\":");
        json_cstr(b, st->id);
        buf_puts(b, ",\"name\":");
        json_cstr(b, st->name);
        buf_printf(b, ",\"ttl_seconds\":%llu,\"expires_at\":", (unsigned long long)st->ttl_sec);
        if (st->expires_at) {
                format_rfc3339(st->expires_at, t);
                json_cstr(b, t);
        } else
                buf_puts(b, "null");
        if (with_created) {
                format_rfc3339(st->created_at, t);
                buf_puts(b, ",\"created_at\":");
                json_cstr(b, t);
                /* the host ids uid 0 inside is (0 count: a session of an older sbx) */
                buf_printf(b, ",\"uid_range\":{\"start\":%u,\"count\":%u}", st->uid_start,
                           st->uid_count);
                /* list: which limits hold */
                struct limits_report lr;
                limits_from_state(st, &lr);
                limits_json(b, &lr);
                /* list: frozen by sbx pause (front-ends such as serve report it) */
                buf_printf(b, ",\"paused\":%s", cgroup_state_frozen(st) == 1 ? "true" : "false");
        }
        buf_puts(b, "}");
}

/* One line naming every default limit the session goes without, and the fix. */
static void warn_unenforced(const struct session_state *st)
{
        struct limits_report lr;
        char w[1024];
        limits_from_state(st, &lr);
        if (limits_warning(&lr, w, sizeof(w)))
                cli_warn("%s", w);
}

int cmd_create(struct cli *cli, int argc, char **argv)
{
        struct option opts[32];
        memcpy(opts, create_long_options, n_create_long_options * sizeof(struct option));
        size_t n = n_create_long_options;
        opts[n++] = (struct option){"json", 0, NULL, OPT_JSON};
        opts[n++] = (struct option){"config", 1, NULL, OPT_CONFIG};
        opts[n++] = (struct option){"help", 0, NULL, OPT_HELP};
        opts[n++] = (struct option){"progress", 1, NULL, OPT_PROGRESS};
        opts[n] = (struct option){0};

        struct flag_list fl = {0};
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
                int k = args_common(cli, "create", opt);
                if (k == -1)
                        return 0;
                if (k == 0 && args_record_create_flag(cli, &fl, opt, optarg) == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "create");
        }
        if (optind < argc) {
                sbx_usage(&cli->err, "unexpected argument '%s'", argv[optind]);
                return cli_finish_error(cli, "create");
        }
        struct sbx_config c;
        int r = args_build_config(cli, &fl, &c);
        struct session_state st = {0};
        _cleanup_close_ int ack = -1;
        _cleanup_free_ char *save_as = NULL;
        if (r == 0)
                r = pkgcache_use(&c, &save_as, &cli->err);
        if (r > 0)
                r = 0;
        if (r == 0) {
                args_print_warnings(&c);
                r = session_create(&c, &st, &ack, &cli->err);
                if (r == 0)
                        warn_unenforced(&st);
        }
        if (r == 0 && ((c.packages && c.packages[0]) || c.setup)) {
                /* installs and setup before the id is printed; a failure leaves nothing */
                _cleanup_buf_ struct buf out = {0};
                struct cli_progress pr;
                cli_progress_init(cli, &pr);
                r = provision_packages(&c, provision_exec_by_id, st.id, &pr, &out, &cli->err);
                if (r == 0 && save_as) /* before setup: the packages only */
                        pkgcache_save(st.id, save_as);
                if (r == 0)
                        r = provision_setup(&c, provision_exec_by_id, st.id, &out, &cli->err);
                if (r < 0) {
                        provision_destroy(st.id);
                        session_state_free(&st);
                        if (!cli->json && out.len)
                                (void)!fwrite(out.data, 1, out.len, stderr);
                }
        }
        config_free(&c);
        if (r < 0)
                return cli_finish_error(cli, "create");

        _cleanup_buf_ struct buf b = {0};
        if (cli->json) {
                session_json(&b, &st, false);
                buf_puts(&b, "\n");
        } else
                buf_printf(&b, "%s\n", st.id);
        /* The session lives on only when its id reached the caller (sync point #4); with
         * stdout closed at start it goes to /dev/null, which is no caller. */
        if (cli->stdout_closed)
                sbx_internal(&cli->err, EBADF, "failed to write the output");
        if (cli->stdout_closed || cli_print(cli, &b)) {
                provision_destroy(st.id);
                session_state_free(&st);
                return cli_finish_error(cli, "create");
        }
        session_state_free(&st);
        session_create_ack(TAKE_FD(ack));
        return 0;
}
