/* SPDX-License-Identifier: MIT */
/* `image import NAME[:TAG] SOURCE`, `image pull REF`, `image list`, `image rm NAME[:TAG]`
 * (src/image/). */
#include <stdio.h>
#include <string.h>

#include "../config/config-internal.h"
#include "../image/image.h"
#include "args.h"
#include "progress.h"

static void info_json(struct buf *b, const struct image_info *i, bool full)
{
        char t[21];
        buf_puts(b, "{\"name\":");
        json_cstr(b, i->name);
        buf_puts(b, ",\"tag\":");
        json_cstr(b, i->tag);
        buf_printf(b, ",\"id\":\"sha256:%s\"", i->id);
        if (!full) {
                buf_puts(b, "}");
                return;
        }
        size_t n = 0;
        while (i->layers && i->layers[n])
                n++;
        format_rfc3339(i->created_at, t);
        buf_printf(b, ",\"layers\":%zu,\"size\":%llu,\"created_at\":\"%s\",\"in_use\":%s", n,
                   (unsigned long long)i->size, t, i->in_use ? "true" : "false");
        buf_puts(b, ",\"env\":[");
        for (size_t k = 0; i->env && i->env[k]; k++) {
                buf_puts(b, k ? "," : "");
                json_cstr(b, i->env[k]);
        }
        buf_puts(b, "],\"workdir\":");
        if (i->workdir)
                json_cstr(b, i->workdir);
        else
                buf_puts(b, "null");
        /* "rootfs:DIR": the image needs that directory of this host (not portable) */
        buf_puts(b, ",\"base\":");
        if (i->base)
                json_cstr(b, i->base);
        else
                buf_puts(b, "null");
        buf_puts(b, "}");
}

static int check_ref(struct cli *cli, const char *ref)
{
        const char *why = image_name_check(ref);
        return why ? sbx_usage(&cli->err, "invalid image '%s': %s", ref, why) : 0;
}

static int do_import(struct cli *cli, struct buf *b, char **args, int n)
{
        if (n != 2)
                return sbx_usage(&cli->err, "usage: sbx image import NAME[:TAG] SOURCE");
        int r = check_ref(cli, args[0]);
        if (r < 0)
                return r;
        struct image_info i = {0};
        struct cli_progress pr;
        cli_progress_init(cli, &pr);
        r = image_import(args[0], args[1], pr.mode == CLI_PROGRESS_NONE ? NULL : cli_progress_show,
                         &pr, &i, &cli->err);
        cli_progress_end(&pr);
        if (r < 0)
                return r;
        if (cli->json) {
                info_json(b, &i, true);
                buf_puts(b, "\n");
        } else
                buf_printf(b, "sha256:%s\n", i.id);
        image_info_free(&i);
        return 0;
}

static int do_pull(struct cli *cli, struct buf *b, char **args, int n, bool insecure)
{
        if (n != 1)
                return sbx_usage(&cli->err, "usage: sbx image pull [--insecure-registry] REF");
        struct cli_progress pr;
        struct sbx_config c;
        config_init_defaults(&c);
        int r = config_load(&c, cli->config_file, &cli->err);
        struct image_pull_opts o = {.insecure = insecure, .insecure_hosts = c.insecure_registries};
        cli_progress_attach(cli, &o, &pr);
        struct image_info i = {0};
        if (r == 0)
                r = image_pull(args[0], &o, &i, &cli->err);
        cli_progress_end(&pr);
        config_free(&c);
        if (r < 0)
                return r;
        if (cli->json) {
                info_json(b, &i, true);
                buf_puts(b, "\n");
        } else
                buf_printf(b, "%s:%s sha256:%s\n", i.name, i.tag, i.id);
        image_info_free(&i);
        return 0;
}

static int do_list(struct cli *cli, struct buf *b, int n)
{
        if (n != 0)
                return sbx_usage(&cli->err, "usage: sbx image list");
        struct image_info *v;
        size_t count;
        int r = image_list(&v, &count, &cli->err);
        if (r < 0)
                return r;
        if (cli->json)
                buf_puts(b, "[");
        else
                buf_printf(b, "%-32s %-16s %-12s %6s %8s %s\n", "NAME", "TAG", "ID", "LAYERS",
                           "SIZE", "CREATED");
        for (size_t i = 0; i < count; i++) {
                if (cli->json) {
                        buf_puts(b, i ? "," : "");
                        info_json(b, &v[i], true);
                        continue;
                }
                char t[21], size[16];
                format_rfc3339(v[i].created_at, t);
                cli_human_size(v[i].size, size);
                size_t layers = 0;
                while (v[i].layers[layers])
                        layers++;
                buf_printf(b, "%-32s %-16s %.12s %6zu %8s %s%s", v[i].name, v[i].tag, v[i].id,
                           layers, size, t, v[i].in_use ? " (in use)" : "");
                /* an image on a directory of this host says so */
                if (!v[i].base)
                        buf_puts(b, "\n");
                else if (strcmp(v[i].base, "host") == 0)
                        buf_puts(b, " (on the host base)\n");
                else
                        buf_printf(b, " (on %s)\n", v[i].base + 7);
        }
        if (cli->json)
                buf_puts(b, "]\n");
        image_list_free(v, count);
        return 0;
}

static int do_rm(struct cli *cli, struct buf *b, char **args, int n)
{
        if (n != 1)
                return sbx_usage(&cli->err, "usage: sbx image rm NAME[:TAG]");
        int r = check_ref(cli, args[0]);
        if (r < 0)
                return r;
        struct image_info i = {0};
        if ((r = image_remove(args[0], &i, &cli->err)) < 0)
                return r;
        if (cli->json) {
                info_json(b, &i, false);
                buf_puts(b, "\n");
        } else
                buf_printf(b, "%s:%s\n", i.name, i.tag);
        image_info_free(&i);
        return 0;
}

int cmd_image(struct cli *cli, int argc, char **argv)
{
        static const struct option opts[] = {
            {"json", 0, NULL, OPT_JSON},         {"config", 1, NULL, OPT_CONFIG},
            {"help", 0, NULL, OPT_HELP},         {"insecure-registry", 0, NULL, 'k'},
            {"progress", 1, NULL, OPT_PROGRESS}, {0},
        };
        bool insecure = false;
        int opt;
        optind = 1;
        opterr = 0;
        /* options may come before or after the subcommand (getopt permutes) */
        while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                if (opt == 'k') {
                        insecure = true;
                        continue;
                }
                int k = args_common(cli, "image", opt);
                if (k == -1)
                        return 0;
                if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "image");
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "image");
        if (optind >= argc) {
                sbx_usage(&cli->err, "missing subcommand: import, pull, list or rm");
                return cli_finish_error(cli, "image");
        }
        const char *sub = argv[optind];
        char **args = argv + optind + 1;
        int n = argc - optind - 1;
        _cleanup_buf_ struct buf b = {0};
        int r;
        if (insecure && strcmp(sub, "pull") != 0)
                r = sbx_usage(&cli->err, "--insecure-registry goes with image pull");
        else if (strcmp(sub, "import") == 0)
                r = do_import(cli, &b, args, n);
        else if (strcmp(sub, "pull") == 0)
                r = do_pull(cli, &b, args, n, insecure);
        else if (strcmp(sub, "list") == 0 || strcmp(sub, "ls") == 0)
                r = do_list(cli, &b, n);
        else if (strcmp(sub, "rm") == 0)
                r = do_rm(cli, &b, args, n);
        else
                r = sbx_usage(&cli->err, "unknown subcommand '%s': import, pull, list or rm", sub);
        if (r < 0)
                return cli_finish_error(cli, "image");
        return cli_print(cli, &b) ? cli_finish_error(cli, "image") : 0;
}
