/* SPDX-License-Identifier: MIT */
/*
 * What the execd file routes share (files.c, files_transfer.c): each runs `sbx fs --json ID
 * OP ...` (cli/cmd_fs.c), the one implementation of the operation, and turns its answer into
 * the execd API's.
 */
#pragma once

#include "serve.h"

/* The most a JSON answer of `sbx fs` may take (a search of OPS_RESULTS_MAX files fits). */
#define FILES_MAX_OUT (16u << 20)

/* Run `sbx fs --json SESSION OP ARGS...` (args NULL-terminated) with stdin from in_fd (-1:
 * none): 0 with *ret_exit and its output in out, or -errno. */
int files_run(const struct serve_request *rq, const char *op, const char *const *args, int in_fd,
              struct buf *out, size_t max_out, int *ret_exit);
/* Answer a failed `sbx fs` (exit code and its JSON error in out) as the execd API does:
 * 404 FILE_NOT_FOUND, 400 INVALID_REQUEST_BODY, 413 for a size limit, 500 RUNTIME_ERROR. */
int files_reply_error(struct serve_response *rs, int exit_code, const struct buf *out);
/* A memfd holding data[0..n), at offset 0: the fd or -errno. */
int files_memfd(const char *data, size_t n);

int files_upload(struct serve_request *rq, struct serve_response *rs);
extern const struct serve_parts files_upload_parts; /* the upload's form, as it arrives */
/* How many file parts' memfds uploads may hold at once (serve_run sets it from RLIMIT_NOFILE). */
void files_upload_fds_budget(unsigned n);
/* The bytes of file parts all uploads still arriving may hold together (8 x max_upload). */
void files_upload_bytes_budget(unsigned long long n);
int files_download(struct serve_request *rq, struct serve_response *rs);
