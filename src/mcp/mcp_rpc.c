/* SPDX-License-Identifier: MIT */
/*
 * One JSON-RPC 2.0 message of the MCP stdio transport. Protocol problems are JSON-RPC errors
 * (-32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid
 * params); a command that fails is a successful response whose result has isError: true.
 * Notifications (no id) never get a response, not even an error.
 */
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "sbx-config.h"
#include "shared/util.h"
#include "mcp.h"

enum {
        RPC_PARSE_ERROR = -32700,
        RPC_INVALID_REQUEST = -32600,
        RPC_METHOD_NOT_FOUND = -32601,
        RPC_INVALID_PARAMS = -32602,
        RPC_INTERNAL_ERROR = -32603,
};

/* Newest first: the answer to an unknown version is the first. */
static const char *const protocol_versions[] = {MCP_PROTOCOL_LATEST, "2025-03-26", "2024-11-05"};

/*
 * Write to the client without ever blocking on it: a client that stops reading must not keep
 * the server from its SIGTERM (and the clean-up). Chunks of PIPE_BUF are written only when
 * poll says the pipe has room for them, so the write cannot block; a signal ends it.
 */
static int write_out(struct mcp_server *s, const char *p, size_t n)
{
        while (n > 0) {
                struct pollfd w[2] = {{s->out_fd, POLLOUT, 0}, {s->sigfd, POLLIN, 0}};
                if (poll(w, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (w[1].revents & POLLIN) {
                        s->stopping = true; /* the signal is read by whoever polls it next */
                        return -EINTR;
                }
                if (w[0].revents & (POLLERR | POLLHUP) && !(w[0].revents & POLLOUT))
                        return -EPIPE;
                if (!(w[0].revents & POLLOUT))
                        continue;
                ssize_t k = write(s->out_fd, p, n < PIPE_BUF ? n : PIPE_BUF);
                if (k < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t)k;
        }
        return 0;
}

static int send_json(struct mcp_server *s, json_object *msg)
{
        size_t len;
        const char *text = json_object_to_json_string_length(
            msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        if (!text)
                return -ENOMEM;
        _cleanup_buf_ struct buf b = {0};
        if (buf_append(&b, text, len) < 0 || buf_puts(&b, "\n") < 0)
                return -ENOMEM;
        return write_out(s, b.data, b.len);
}

static json_object *envelope(json_object *id)
{
        json_object *m = json_object_new_object();
        json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
        json_object_object_add(m, "id", id ? json_object_get(id) : NULL);
        return m;
}

int mcp_send_error(struct mcp_server *s, json_object *id, int code, const char *message)
{
        json_object *m = envelope(id), *e = json_object_new_object();
        json_object_object_add(e, "code", json_object_new_int(code));
        json_object_object_add(e, "message", json_object_new_string(message));
        json_object_object_add(m, "error", e);
        int r = send_json(s, m);
        json_object_put(m);
        return r;
}

int mcp_send_result(struct mcp_server *s, json_object *id, json_object *result)
{
        json_object *m = envelope(id);
        json_object_object_add(m, "result", result);
        int r = send_json(s, m);
        json_object_put(m);
        return r;
}

int mcp_send_notification(struct mcp_server *s, const char *method, json_object *params)
{
        json_object *m = json_object_new_object();
        json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
        json_object_object_add(m, "method", json_object_new_string(method));
        json_object_object_add(m, "params", json_object_get(params));
        int r = send_json(s, m);
        json_object_put(m);
        return r;
}

static json_object *initialize_result(json_object *params)
{
        json_object *v, *res = json_object_new_object();
        const char *want = json_object_object_get_ex(params, "protocolVersion", &v)
                               ? json_object_get_string(v)
                               : "";
        const char *answer = protocol_versions[0];
        for (size_t i = 0; i < ARRAY_SIZE(protocol_versions); i++)
                if (strcmp(want, protocol_versions[i]) == 0)
                        answer = protocol_versions[i];
        json_object_object_add(res, "protocolVersion", json_object_new_string(answer));
        json_object *caps = json_object_new_object(), *tools = json_object_new_object();
        json_object_object_add(tools, "listChanged", json_object_new_boolean(false));
        json_object_object_add(caps, "tools", tools);
        json_object_object_add(res, "capabilities", caps);
        json_object *info = json_object_new_object();
        json_object_object_add(info, "name", json_object_new_string("sbx"));
        json_object_object_add(info, "title", json_object_new_string("sbx sandboxes"));
        json_object_object_add(info, "version", json_object_new_string(SBX_VERSION));
        json_object_object_add(res, "serverInfo", info);
        json_object_object_add(
            res, "instructions",
            json_object_new_string(
                "Disposable, locked-down Linux sandboxes. Call create to get a session id, run "
                "commands with exec and work on files with ls, read, write, edit, glob and grep "
                "(all inside the session, never on the host), and destroy the session when "
                "done. The tools act only on sessions created through MCP; a session lives "
                "until destroy or until its TTL runs out without a connect, also after this "
                "connection ends. Limits you ask for can only be tighter than the "
                "operator's."));
        return res;
}

static json_object *tools_list_result(void)
{
        _cleanup_buf_ struct buf b = {0};
        buf_puts(&b, "{\"tools\":");
        tools_json(&b, "inputSchema");
        if (buf_puts(&b, "}") < 0)
                return NULL;
        return json_tokener_parse(b.data);
}

/* The progressToken of a request (params._meta.progressToken), or NULL. */
static json_object *progress_token(json_object *params)
{
        json_object *meta, *tok;
        if (!json_object_object_get_ex(params, "_meta", &meta) ||
            !json_object_object_get_ex(meta, "progressToken", &tok))
                return NULL;
        return json_object_is_type(tok, json_type_string) || json_object_is_type(tok, json_type_int)
                   ? tok
                   : NULL;
}

/* tools/call: -32602 for what the client got wrong; the call queued (mcp_calls.c). */
static int tools_call(struct mcp_server *s, json_object *id, json_object *params)
{
        json_object *name, *args = NULL;
        if (!json_object_is_type(params, json_type_object) ||
            !json_object_object_get_ex(params, "name", &name) ||
            !json_object_is_type(name, json_type_string))
                return mcp_send_error(s, id, RPC_INVALID_PARAMS,
                                      "tools/call needs params {\"name\": string, "
                                      "\"arguments\": object}");
        const struct tool *t = tool_find(json_object_get_string(name));
        if (!t) {
                char msg[256];
                snprintf(msg, sizeof(msg), "unknown tool '%.100s': see tools/list",
                         json_object_get_string(name));
                return mcp_send_error(s, id, RPC_INVALID_PARAMS, msg);
        }
        json_object_object_get_ex(params, "arguments", &args);
        if (args && !json_object_is_type(args, json_type_null) &&
            !json_object_is_type(args, json_type_object))
                return mcp_send_error(s, id, RPC_INVALID_PARAMS, "'arguments' must be an object");
        /* a copy: the checks rewrite the session argument, the message is freed */
        json_object *copy = NULL;
        if (!args || json_object_is_type(args, json_type_null))
                copy = json_object_new_object();
        else if (json_object_deep_copy(args, &copy, NULL) < 0)
                copy = NULL;
        if (!copy)
                return mcp_send_error(s, id, RPC_INTERNAL_ERROR, "out of memory");
        int r = mcp_calls_add(s, id, t, copy, progress_token(params));
        json_object_put(copy);
        return r;
}

/* notifications/cancelled: the call it names is stopped; other notifications are ignored
 * (initialized, and any this server does not know). */
static void notification(struct mcp_server *s, const char *method, json_object *params)
{
        json_object *rid;
        if (strcmp(method, "notifications/cancelled") == 0 &&
            json_object_object_get_ex(params, "requestId", &rid))
                mcp_calls_cancel(s, rid);
}

static int request(struct mcp_server *s, const char *method, json_object *id, json_object *params)
{
        if (strcmp(method, "initialize") == 0) {
                if (!json_object_is_type(params, json_type_object))
                        return mcp_send_error(s, id, RPC_INVALID_PARAMS,
                                              "initialize needs params {\"protocolVersion\", "
                                              "\"capabilities\", \"clientInfo\"}");
                return mcp_send_result(s, id, initialize_result(params));
        }
        if (strcmp(method, "ping") == 0)
                return mcp_send_result(s, id, json_object_new_object());
        if (strcmp(method, "tools/list") == 0) {
                json_object *res = tools_list_result();
                return res ? mcp_send_result(s, id, res)
                           : mcp_send_error(s, id, RPC_INTERNAL_ERROR, "out of memory");
        }
        if (strcmp(method, "tools/call") == 0)
                return tools_call(s, id, params);
        char msg[256];
        snprintf(msg, sizeof(msg),
                 "method not found: '%.100s' (this server has initialize, "
                 "ping, tools/list and tools/call)",
                 method);
        return mcp_send_error(s, id, RPC_METHOD_NOT_FOUND, msg);
}

static json_object *parse_line(const char *line, size_t len)
{
        struct json_tokener *tok = json_tokener_new_ex(MCP_MAX_DEPTH);
        if (!tok)
                return NULL;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        json_object *o = json_tokener_parse_ex(tok, line, (int)len);
        bool ok = json_tokener_get_error(tok) == json_tokener_success;
        /* exactly one value on the line: only blanks may follow it */
        for (size_t i = ok ? json_tokener_get_parse_end(tok) : len; i < len; i++)
                if (!strchr(" \t\r", line[i]))
                        ok = false;
        json_tokener_free(tok);
        if (!ok) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static bool valid_id(json_object *id)
{
        return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

int mcp_handle_line(struct mcp_server *s, const char *line, size_t len)
{
        json_object *msg = parse_line(line, len);
        if (!msg)
                return mcp_send_error(s, NULL, RPC_PARSE_ERROR,
                                      "parse error: a message is one JSON object on one line");
        json_object *jsonrpc, *method, *id = NULL, *params = NULL;
        int r = 0;
        bool has_id =
            json_object_is_type(msg, json_type_object) && json_object_object_get_ex(msg, "id", &id);
        if (!json_object_is_type(msg, json_type_object)) {
                r = mcp_send_error(s, NULL, RPC_INVALID_REQUEST,
                                   json_object_is_type(msg, json_type_array)
                                       ? "invalid request: batches are not supported"
                                       : "invalid request: a message is a JSON object");
        } else if (!json_object_object_get_ex(msg, "jsonrpc", &jsonrpc) ||
                   !json_object_is_type(jsonrpc, json_type_string) ||
                   strcmp(json_object_get_string(jsonrpc), "2.0") != 0) {
                r = mcp_send_error(s, valid_id(id) ? id : NULL, RPC_INVALID_REQUEST,
                                   "invalid request: \"jsonrpc\" must be \"2.0\"");
        } else if (!json_object_object_get_ex(msg, "method", &method)) {
                /* a response to a request of ours: we send none, so there is nothing to do */
                if (!has_id)
                        r = mcp_send_error(s, NULL, RPC_INVALID_REQUEST,
                                           "invalid request: no \"method\"");
        } else if (!json_object_is_type(method, json_type_string)) {
                r = mcp_send_error(s, valid_id(id) ? id : NULL, RPC_INVALID_REQUEST,
                                   "invalid request: \"method\" must be a string");
        } else if (!has_id) {
                json_object_object_get_ex(msg, "params", &params);
                notification(s, json_object_get_string(method), params);
        } else if (!valid_id(id)) {
                r = mcp_send_error(s, NULL, RPC_INVALID_REQUEST,
                                   "invalid request: \"id\" must be a string or an integer");
        } else {
                json_object_object_get_ex(msg, "params", &params);
                if (params && !json_object_is_type(params, json_type_object))
                        r = mcp_send_error(s, id, RPC_INVALID_PARAMS,
                                           "invalid params: \"params\" must be an object");
                else
                        r = request(s, json_object_get_string(method), id, params);
        }
        json_object_put(msg);
        return r;
}
