/* SPDX-License-Identifier: MIT */
/*
 * libsystemd's D-Bus client (sd-bus), loaded only when an unprivileged sbx asks the systemd user
 * manager for a delegated cgroup (cgroup_delegate.c). Through dlopen rather than linked: the
 * one binary must still start where there is no libsystemd at all (Alpine, distroless and
 * other container images, hosts without systemd), where delegation cannot be had anyway; and
 * every other sbx call (root, hosts with a writable cgroup, every exec of a session without a
 * scope) does not pay for mapping and relocating it. sd-bus is used rather than a hand-made
 * D-Bus client: it speaks the wire protocol, the SASL handshake and the bus addresses of
 * $DBUS_SESSION_BUS_ADDRESS and $XDG_RUNTIME_DIR/bus exactly as systemd itself does.
 */
#pragma once

#include <systemd/sd-bus.h>

#include "shared/error.h"

/* libsystemd's ABI has been 0 since it exists (2014). */
#define SDBUS_LIB_SONAME "libsystemd.so.0"

struct sdbus_lib {
        typeof(sd_bus_open_user) *open_user;
        typeof(sd_bus_new) *new_bus;
        typeof(sd_bus_set_address) *set_address;
        typeof(sd_bus_start) *start;
        typeof(sd_bus_flush_close_unref) *flush_close_unref;
        typeof(sd_bus_message_new_method_call) *message_new_method_call;
        typeof(sd_bus_message_append) *message_append;
        typeof(sd_bus_message_open_container) *message_open_container;
        typeof(sd_bus_message_close_container) *message_close_container;
        typeof(sd_bus_message_read) *message_read;
        typeof(sd_bus_message_unref) *message_unref;
        typeof(sd_bus_call) *call;
        typeof(sd_bus_match_signal) *match_signal;
        typeof(sd_bus_process) *process;
        typeof(sd_bus_wait) *wait;
        typeof(sd_bus_error_free) *error_free;
};

/* The loaded library (kept for the life of the process), or NULL with why set to the reason
 * ("libsystemd.so.0: <dlerror>"). */
const struct sdbus_lib *sdbus_lib_load(char *why, size_t n);
