/* SPDX-License-Identifier: MIT */
/*
 * [packages]: where `--package` installs come from. The index (PyPI unless index_url names
 * another, such as a local mirror or devpi) and any extra hosts are the provisioning window:
 * the allow entries the session's egress proxy admits while the packages install, and never
 * afterwards unless [network] allow names them too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

/* PyPI: the simple index, and the host its files are served from. */
static const char *const pypi_hosts[] = {"pypi.org", "files.pythonhosted.org"};

const char *package_index_check(const char *url, char **ret_entry)
{
        const char *rest;
        if (strncmp(url, "https://", 8) == 0)
                rest = url + 8;
        else if (strncmp(url, "http://", 7) == 0)
                rest = url + 7;
        else
                return "the URL must start with http:// or https://";
        size_t n = strcspn(rest, "/?#");
        if (n == 0)
                return "the URL has no host";
        if (memchr(rest, '@', n))
                return "credentials in the URL would be visible to every process of the session";
        for (const char *p = url; *p; p++)
                if ((unsigned char)*p <= ' ' || *p == 0x7f)
                        return "the URL holds a blank or a control character";
        if (strlen(url) > 1024)
                return "the URL is too long";
        _cleanup_free_ char *authority = strndup(rest, n);
        if (!authority)
                return "out of memory";
        char *entry = NULL;
        const char *why = allow_entry_check(authority, &entry);
        if (why)
                return why;
        if (ret_entry)
                *ret_entry = entry;
        else
                free(entry);
        return NULL;
}

const char *package_index_url(const struct sbx_config *c)
{
        return c->package_index ? c->package_index : PACKAGE_INDEX_DEFAULT;
}

static int push_dup(char ***v, const char *s)
{
        for (char **p = *v; p && *p; p++)
                if (strcmp(*p, s) == 0)
                        return 0;
        char *copy = strdup(s);
        return copy ? strv_push(v, copy) : -ENOMEM;
}

int package_window(const struct sbx_config *c, char ***ret)
{
        _cleanup_strv_ char **v = calloc(1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        if (c->package_index) {
                _cleanup_free_ char *entry = NULL;
                if (package_index_check(c->package_index, &entry))
                        return -EINVAL; /* checked when it was set */
                if (push_dup(&v, entry) < 0)
                        return -ENOMEM;
        } else
                for (size_t i = 0; i < ARRAY_SIZE(pypi_hosts); i++)
                        if (push_dup(&v, pypi_hosts[i]) < 0)
                                return -ENOMEM;
        for (char **p = c->package_hosts; p && *p; p++)
                if (push_dup(&v, *p) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(v);
        return 0;
}

/* The hosts the session's NO_PROXY names (session/state.c). */
static bool index_on_loopback(const char *url)
{
        if (!url)
                return false;
        const char *h = url + (strncmp(url, "https://", 8) == 0 ? 8 : 7);
        size_t n = strcspn(h, "/?#");
        static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                size_t k = strlen(names[i]);
                if (n >= k && strncasecmp(h, names[i], k) == 0 && (n == k || h[k] == ':'))
                        return true;
        }
        return false;
}

int package_pip_env(const struct sbx_config *c, char ***ret)
{
        _cleanup_strv_ char **v = calloc(1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        /* A disposable sandbox may install over a distribution's "externally managed" Python
         * (PEP 668), as root, without prompts: said here, inside the session, never on the
         * host. */
        static const char *const fixed[] = {"PIP_BREAK_SYSTEM_PACKAGES=1",
                                            "PIP_ROOT_USER_ACTION=ignore",
                                            "PIP_DISABLE_PIP_VERSION_CHECK=1"};
        for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
                if (push_dup(&v, fixed[i]) < 0)
                        return -ENOMEM;
        if (c->net == SBX_NET_PROXY && index_on_loopback(c->package_index)) {
                /* NO_PROXY names loopback, and pip's own proxy setting holds for every host:
                 * an index on the host's loopback is the proxy's to reach */
                char *s = strdup("PIP_PROXY=http://127.0.0.1:3128");
                if (!s || strv_push(&v, s) < 0)
                        return -ENOMEM;
        }
        if (c->package_index) {
                char *s = NULL;
                if (asprintf(&s, "PIP_INDEX_URL=%s", c->package_index) < 0 || strv_push(&v, s) < 0)
                        return -ENOMEM;
                /* a plain-http index (a mirror on the local network) must be trusted by name */
                if (strncmp(c->package_index, "http://", 7) == 0) {
                        const char *h = c->package_index + 7;
                        if (asprintf(&s, "PIP_TRUSTED_HOST=%.*s", (int)strcspn(h, "/?#"), h) < 0 ||
                            strv_push(&v, s) < 0)
                                return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(v);
        return 0;
}
