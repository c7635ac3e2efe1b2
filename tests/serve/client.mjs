// End-to-end run of `sbx serve` with the official OpenSandbox TypeScript SDK, configured as an
// agent platform configures it: OPEN_SANDBOX_DOMAIN, OPEN_SANDBOX_API_KEY and
// OPEN_SANDBOX_USE_SERVER_PROXY=true in the environment. tests/910-serve-sdk.bats runs it
// against a server on an ephemeral port. Each step prints "ok STEP" when it passed; the first
// step that fails prints "FAIL STEP: why" and the script exits 1.
//
//   node client.mjs [STEP...]   steps: lifecycle commands background interrupt files
//                               transfer renew kill (default: all, in that order; each step
//                               that needs a sandbox uses the one made by "lifecycle")
import { randomBytes } from "node:crypto";
import { ConnectionConfig, Sandbox, SandboxApiException } from "@alibaba-group/opensandbox";

const image = process.env.SBX_TEST_IMAGE ?? "python:3.11";
const config = () =>
  new ConnectionConfig({
    useServerProxy: process.env.OPEN_SANDBOX_USE_SERVER_PROXY === "true",
    requestTimeoutSeconds: 60,
    disableMetrics: true,
  });

class StepError extends Error {}
function check(cond, why) {
  if (!cond) throw new StepError(why);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (msgs) => msgs.map((m) => m.text).join("\n");

let sandbox;

// Poll a background command until it is no longer running (at most ms).
async function waitDone(id, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const st = await sandbox.commands.getCommandStatus(id);
    if (!st.running) return st;
    check(Date.now() < end, `command ${id} still running after ${ms} ms`);
    await sleep(200);
  }
}

const steps = {
  // create with a TTL, then the info the server keeps about it
  async lifecycle() {
    sandbox = await Sandbox.create({ connectionConfig: config(), image, timeoutSeconds: 600 });
    check(/^sb_[0-9a-f]{16}$/.test(sandbox.id), `unexpected sandbox id ${sandbox.id}`);
    const info = await sandbox.getInfo();
    check(info.status.state === "Running", `state ${info.status.state}`);
    const left = info.expiresAt.getTime() - Date.now();
    check(left > 500e3 && left <= 601e3, `expiresAt is ${left} ms away, not ~600 s`);
  },

  // a foreground command: its lines as stdout/stderr events and its exit code
  async commands() {
    const ex = await sandbox.commands.run("echo hello; echo oops >&2; echo world; exit 3");
    check(text(ex.logs.stdout) === "hello\nworld", `stdout ${JSON.stringify(ex.logs.stdout)}`);
    check(text(ex.logs.stderr) === "oops", `stderr ${JSON.stringify(ex.logs.stderr)}`);
    check(ex.exitCode === 3, `exit code ${ex.exitCode}`);
    const ok = await sandbox.commands.run("pwd");
    check(ok.exitCode === 0 && text(ok.logs.stdout).length > 0, `pwd: ${JSON.stringify(ok)}`);
  },

  // a background command: its id at once, status polling, logs read with a cursor
  async background() {
    const ex = await sandbox.commands.run("for i in 1 2 3; do echo line$i; sleep 0.3; done", {
      background: true,
    });
    check(ex.id, "no command id for a background command");
    const st = await waitDone(ex.id, 20000);
    check(st.exitCode === 0, `background exit code ${st.exitCode}`);
    const all = await sandbox.commands.getBackgroundCommandLogs(ex.id);
    check(all.content === "line1\nline2\nline3\n", `logs ${JSON.stringify(all.content)}`);
    check(typeof all.cursor === "number" && all.cursor === all.content.length,
      `cursor ${all.cursor} after ${all.content.length} bytes`);
    const tail = await sandbox.commands.getBackgroundCommandLogs(ex.id, 6);
    check(tail.content === "line2\nline3\n", `logs from cursor 6: ${JSON.stringify(tail.content)}`);
  },

  // a long background command interrupted, as a platform does on its own timeout
  async interrupt() {
    const ex = await sandbox.commands.run("sleep 120", { background: true });
    check(ex.id, "no command id");
    const st0 = await sandbox.commands.getCommandStatus(ex.id);
    check(st0.running, "sleep 120 is not running");
    const t0 = Date.now();
    await sandbox.commands.interrupt(ex.id);
    const st = await waitDone(ex.id, 10000);
    check(Date.now() - t0 < 10000, "the interrupt took more than 10 s");
    check(st.exitCode !== 0, `interrupted command exit code ${st.exitCode}`);
  },

  // the file API: write (creates parents, mode), read, info, search, replace, mkdir, move,
  // permissions, delete
  async files() {
    const f = sandbox.files;
    await f.writeFiles([{ path: "/workspace/sdk/deep/hello.txt", data: "Hello sbx", mode: 640 }]);
    check((await f.readFile("/workspace/sdk/deep/hello.txt")) === "Hello sbx", "read back");
    await f.writeFiles([{ path: "/workspace/sdk/deep/hello.txt", data: "Hello again" }]);
    check((await f.readFile("/workspace/sdk/deep/hello.txt")) === "Hello again", "overwrite");
    const info = await f.getFileInfo(["/workspace/sdk/deep/hello.txt"]);
    const hi = info["/workspace/sdk/deep/hello.txt"];
    check(hi && hi.type === "file" && hi.size === 11 && hi.mode === 640,
      `info ${JSON.stringify(hi)}`);
    check(hi.modifiedAt instanceof Date, "modifiedAt is not a date");
    const found = await f.search({ path: "/workspace/sdk", pattern: "*.txt" });
    check(found.length === 1 && found[0].path === "/workspace/sdk/deep/hello.txt",
      `search ${JSON.stringify(found)}`);
    const counts = await f.replaceContentsDetailed([
      { path: "/workspace/sdk/deep/hello.txt", oldContent: "a", newContent: "A" },
    ]);
    check(counts[0]?.replacedCount === 2, `replace ${JSON.stringify(counts)}`);
    check((await f.readFile("/workspace/sdk/deep/hello.txt")) === "Hello AgAin", "replaced");
    await f.createDirectories([{ path: "/workspace/sdk/made/here", mode: 700 }]);
    await f.moveFiles([{ src: "/workspace/sdk/deep/hello.txt", dest: "/workspace/sdk/made/here/h.txt" }]);
    await f.setPermissions([{ path: "/workspace/sdk/made/here/h.txt", mode: 600 }]);
    const moved = await f.getFileInfo(["/workspace/sdk/made/here/h.txt", "/workspace/sdk/made/here"]);
    check(moved["/workspace/sdk/made/here/h.txt"].mode === 600, "chmod");
    check(moved["/workspace/sdk/made/here"].mode === 700, "mkdir mode");
    const listed = await f.listDirectory({ path: "/workspace/sdk", depth: 3 });
    check(listed.some((e) => e.path === "/workspace/sdk/made/here/h.txt"),
      `list ${JSON.stringify(listed.map((e) => e.path))}`);
    await f.deleteFiles(["/workspace/sdk/made/here/h.txt"]);
    await f.deleteDirectories(["/workspace/sdk"]);
    let gone;
    try {
      await f.readFile("/workspace/sdk/made/here/h.txt");
    } catch (e) {
      gone = e;
    }
    check(gone instanceof SandboxApiException && gone.statusCode === 404,
      `reading a deleted file: ${gone?.statusCode ?? "no error"}`);
  },

  // a binary upload bigger than one download piece (8 MiB) comes back byte for byte, also
  // as a stream and as a range; a command in the sandbox sees the same bytes
  async transfer() {
    const data = randomBytes(20 << 20);
    await sandbox.files.writeFiles([{ path: "/workspace/big.bin", data }]);
    const back = await sandbox.files.readBytes("/workspace/big.bin");
    check(Buffer.compare(Buffer.from(back), data) === 0, `download differs (${back.length} bytes)`);
    let n = 0;
    for await (const chunk of sandbox.files.readBytesStream("/workspace/big.bin")) n += chunk.length;
    check(n === data.length, `streamed ${n} bytes`);
    const part = await sandbox.files.readBytes("/workspace/big.bin", { range: "bytes=9000000-9000009" });
    check(Buffer.compare(Buffer.from(part), data.subarray(9000000, 9000010)) === 0, "range");
    const sum = await sandbox.commands.run("wc -c < /workspace/big.bin");
    check(text(sum.logs.stdout).trim() === String(data.length), `wc: ${text(sum.logs.stdout)}`);
  },

  // renew the TTL, and connect (which a platform does before each use) finds the sandbox
  async renew() {
    await sandbox.renew(1800);
    const info = await sandbox.getInfo();
    const left = info.expiresAt.getTime() - Date.now();
    check(left > 1700e3 && left <= 1801e3, `after renew expiresAt is ${left} ms away`);
    const again = await Sandbox.connect({ sandboxId: sandbox.id, connectionConfig: config() });
    const ex = await again.commands.run("echo connected");
    check(text(ex.logs.stdout) === "connected", "command through the connected sandbox");
  },

  // kill; then connect gets a 404 (a platform then creates a new one)
  async kill() {
    const id = sandbox.id;
    await sandbox.kill();
    let err;
    try {
      await Sandbox.connect({ sandboxId: id, connectionConfig: config() });
    } catch (e) {
      err = e;
    }
    check(err instanceof SandboxApiException && err.statusCode === 404,
      `connect after kill: ${err ? `${err.name} ${err.statusCode}` : "no error"}`);
  },
};

const want = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(steps);
let failed = false;
for (const name of want) {
  const fn = steps[name];
  if (!fn) {
    console.log(`FAIL ${name}: no such step`);
    failed = true;
    break;
  }
  try {
    await fn();
    console.log(`ok ${name}`);
  } catch (e) {
    const why = e instanceof StepError ? e.message
      : `${e?.name ?? "Error"}: ${e?.message ?? e}${e?.statusCode ? ` (HTTP ${e.statusCode})` : ""}` +
        `${e?.rawBody ? ` ${typeof e.rawBody === "string" ? e.rawBody : JSON.stringify(e.rawBody)}` : ""}`;
    console.log(`FAIL ${name}: ${why}`);
    failed = true;
    if (name === "lifecycle") break; /* nothing else can run without the sandbox */
  }
}
if (sandbox && failed) await sandbox.kill().catch(() => {});
process.exit(failed ? 1 : 0);
