#!/usr/bin/env bats
# The official OpenSandbox TypeScript SDK (@alibaba-group/opensandbox, pinned in
# tests/serve/package-lock.json and installed by scripts/bootstrap with npm ci) against
# `sbx serve` on an ephemeral port, configured through the environment as an agent platform
# does (OPEN_SANDBOX_DOMAIN, OPEN_SANDBOX_API_KEY, OPEN_SANDBOX_USE_SERVER_PROXY=true):
# create with a TTL -> foreground command -> background command, status polling, logs ->
# interrupt -> the file API and a 20 MiB upload/download -> renew and connect -> kill ->
# connect to the killed sandbox gets 404. tests/serve/client.mjs prints "ok STEP" per step
# and exits 1 when any step failed, which fails the test.

BATS_TEST_TIMEOUT=240
load helpers
load serve_env

setup() { setup_sbx; }
teardown() {
        serve_stop
        teardown_sbx
}

# sdk STEP...: run tests/serve/client.mjs against the server. Without node or the SDK the case
# is skipped on a developer's machine and fails in CI (CI=true), where scripts/bootstrap must
# have installed them.
sdk_present() {
        local why=
        command -v node >/dev/null || why="node is not installed (scripts/bootstrap installs it)"
        [ -n "$why" ] || [ -d "$SBX_SRC/tests/serve/node_modules/@alibaba-group/opensandbox" ] ||
                why="the OpenSandbox SDK is not installed: run scripts/bootstrap (npm ci in tests/serve)"
        if [ -n "$why" ]; then
                [ -z "${CI:-}" ] || fail "$why"
                skip "$why"
        fi
}

sdk() {
        sdk_present
        sbx_call_timeout=200 _expect any env OPEN_SANDBOX_DOMAIN="${serve_url#http://}" \
                OPEN_SANDBOX_API_KEY="$serve_key" OPEN_SANDBOX_USE_SERVER_PROXY=true \
                node "$SBX_SRC/tests/serve/client.mjs" "$@"
        printf '# %s\n' "${lines[@]}" >&3
        [ "$status" -eq 0 ] || fail "an SDK step failed (exit $status):" "${lines[@]}" "$stderr"
        # every step asked for reported ok (the script cannot pass by printing nothing)
        local step
        for step in "$@"; do
                printf '%s\n' "${lines[@]}" | grep -qx "ok $step" || fail "step $step did not pass"
        done
}

@test "OpenSandbox SDK: create, commands, background, interrupt, files, transfer, renew, kill" {
        serve_start
        sdk lifecycle commands background interrupt files transfer renew kill
        # the sandbox the SDK killed is gone for sbx too
        sbx_ok list --quiet
        [ -z "$output" ] || fail "sessions left: $output"
}

@test "OpenSandbox SDK: a wrong API key is refused" {
        sdk_present
        serve_start
        serve_key=wrong-key
        sbx_call_timeout=60 _expect any env OPEN_SANDBOX_DOMAIN="${serve_url#http://}" \
                OPEN_SANDBOX_API_KEY="$serve_key" OPEN_SANDBOX_USE_SERVER_PROXY=true \
                node "$SBX_SRC/tests/serve/client.mjs" lifecycle
        [ "$status" -eq 1 ] || fail "the client passed with a wrong key: ${lines[*]}"
        [[ $output == *"FAIL lifecycle"*"401"* ]] || fail "not refused with 401: $output"
        sbx_ok list --quiet
        [ -z "$output" ] || fail "a session was made: $output"
}
