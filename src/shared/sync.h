/* SPDX-License-Identifier: MIT */
/*
 * The handshake channel: small fixed messages over a SOCK_SEQPACKET socketpair. A child that
 * fails sends its struct sbx_error (exit code, code, message) so the user sees the real cause,
 * not "child died".
 */
#pragma once

#include "error.h"

/* Send "step done" (sync point reached). */
int sync_send_ok(int fd);
/* The same, passing pass_fd along (SCM_RIGHTS) when it is >= 0. */
int sync_send_ok_fd(int fd, int pass_fd);
/* sync_wait() that also receives a passed fd (-1 when none came). */
int sync_wait_fd(int fd, const char *what, int *ret_fd, struct sbx_error *e);
/* Send the error e. */
int sync_send_error(int fd, const struct sbx_error *e);
/*
 * Wait for the peer's next message. 0 on OK; a negative errno with *e filled (the peer's
 * own error, or "<what> ended before reporting" when the channel closed).
 */
int sync_wait(int fd, const char *what, struct sbx_error *e);
