// A real MCP client (the official TypeScript SDK) driving `sbx mcp` over stdio.
//
//   node client.mjs SCENARIO
//
// SBX names the sbx binary; the environment (SBX_RUNTIME_DIR, HOME) is passed on to the
// server. Each scenario prints "ok - ..." per check and exits 0, or prints what went wrong and
// exits 1. Driven by tests/510-mcp.bats.
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const sbx = process.env.SBX;
if (!sbx) {
  console.error("SBX must name the sbx binary");
  process.exit(2);
}

function check(cond, what, detail) {
  if (!cond) {
    throw new Error(`not ok - ${what}` + (detail === undefined ? "" : `\n  got: ${JSON.stringify(detail)}`));
  }
  console.log(`ok - ${what}`);
}

// JSON with the keys of every object sorted: equal documents give equal strings.
const canon = (v) => JSON.stringify(v, (k, x) =>
  x && typeof x === "object" && !Array.isArray(x)
    ? Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]]))
    : x);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The ids of the caller's live sessions, from the CLI (not from the server under test).
function liveIds() {
  const out = execFileSync(sbx, ["list", "--json"], { encoding: "utf8" });
  return JSON.parse(out).map((s) => s.id);
}

async function waitGone(ids, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const live = liveIds();
    const left = ids.filter((id) => live.includes(id));
    if (left.length === 0 || Date.now() > end) return left;
    await sleep(100);
  }
}

async function connect(extra = []) {
  const transport = new StdioClientTransport({
    command: sbx,
    args: ["mcp", ...extra],
    env: { ...process.env },
    stderr: "inherit",
  });
  const client = new Client({ name: "sbx-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

async function call(client, name, args) {
  return client.callTool({ name, arguments: args });
}

async function createSession(client, args = {}) {
  const res = await call(client, "create", args);
  check(!res.isError && /^sb_[a-z0-9]{16}$/.test(res.structuredContent?.id ?? ""),
    `create returns a session id (${res.structuredContent?.id})`, res);
  return res.structuredContent.id;
}

const scenarios = {
  // tools/list: the eighteen tools, with the schemas of `sbx tools --json`
  async tools() {
    const { client } = await connect();
    check(client.getServerVersion()?.name === "sbx", "serverInfo names sbx", client.getServerVersion());
    check(client.getServerCapabilities()?.tools !== undefined, "the tools capability is announced");
    const { tools } = await client.listTools();
    const want = ["create", "connect", "exec", "ls", "read", "write", "edit", "glob", "grep", "destroy", "stats",
      "ps", "logs", "kill", "pause", "resume", "diff", "commit"];
    check(JSON.stringify(tools.map((t) => t.name).sort()) === JSON.stringify([...want].sort()),
      "tools/list has exactly the eighteen tools", tools.map((t) => t.name));
    const cli = JSON.parse(execFileSync(sbx, ["tools", "--json"], { encoding: "utf8" }));
    for (const t of tools) {
      const c = cli.find((x) => x.name === t.name);
      check(c && canon(c.input_schema) === canon(t.inputSchema) &&
        c.description === t.description, `${t.name}: same schema and description as sbx tools --json`);
      check(t.inputSchema.type === "object" && t.description.length > 80,
        `${t.name}: an object schema and a real description`);
    }
    const exec = tools.find((t) => t.name === "exec").inputSchema;
    check(exec.properties.command.type === "array" && exec.required.includes("command"),
      "exec takes command as an array of strings");
    check(!("mount" in tools.find((t) => t.name === "create").inputSchema.properties),
      "create does not offer --mount to a model");
    await client.close();
  },

  // create, exec, write, read, edit, grep, glob, ls, connect, destroy: end to end
  async e2e() {
    const { client } = await connect();
    const id = await createSession(client, { name: "mcp-e2e", ttl: "10m" });
    check(liveIds().includes(id), "the session exists for the CLI too");

    let res = await call(client, "exec", { session: id, command: ["sh", "-c", "echo out; echo err >&2; exit 3"] });
    check(!res.isError && res.structuredContent.exit_code === 3, "exec returns the exit code", res);
    check(/out/.test(res.structuredContent.output) && /err/.test(res.structuredContent.output),
      "exec returns stdout and stderr", res.structuredContent.output);
    check(/\[exit code 3\]/.test(text(res)), "exec's text says the exit code", text(res));

    // no shell: metacharacters and leading dashes reach the program as they are
    res = await call(client, "exec", { session: "mcp-e2e", command: ["printf", "%s|", "$(id)", "; rm -rf /", "--help"] });
    check(res.structuredContent.output === "$(id)|; rm -rf /|--help|", "exec passes arguments verbatim, no shell",
      res.structuredContent);

    const content = "héllo wörld\nsecond line\n-- dashes --\n";
    res = await call(client, "write", { session: id, path: "src/notes.txt", content });
    check(!res.isError && res.structuredContent.path === "/workspace/src/notes.txt" &&
      res.structuredContent.bytes === Buffer.byteLength(content), "write creates the file", res);
    res = await call(client, "exec", { session: id, command: ["cat", "/workspace/src/notes.txt"] });
    check(res.structuredContent.output === content, "the file has exactly the content", res.structuredContent);

    res = await call(client, "read", { session: id, path: "src/notes.txt" });
    check(!res.isError && text(res) === "     1\théllo wörld\n     2\tsecond line\n     3\t-- dashes --\n",
      "read returns the numbered lines", text(res));
    check(res.structuredContent.lines === 3, "read reports the line count", res.structuredContent);
    res = await call(client, "read", { session: id, path: "src/notes.txt", offset: 1, limit: 1 });
    check(text(res) === "     2\tsecond line\n", "read honours offset and limit", text(res));

    res = await call(client, "edit", { session: id, path: "src/notes.txt", old_string: "second line", new_string: "2nd\nline" });
    check(!res.isError && res.structuredContent.replacements === 1, "edit replaces the string", res);

    res = await call(client, "grep", { session: id, pattern: "w.rld" });
    check(!res.isError && JSON.stringify(res.structuredContent.results) === '["/workspace/src/notes.txt"]',
      "grep finds the file", res.structuredContent);
    res = await call(client, "grep", { session: id, pattern: "^line", mode: "content" });
    check(res.structuredContent.results.length === 1 && res.structuredContent.results[0].line === 3 &&
      text(res) === "/workspace/src/notes.txt:3:line\n", "grep content mode gives path, line, text", res);
    res = await call(client, "grep", { session: id, pattern: "no such thing" });
    check(!res.isError && res.structuredContent.results.length === 0, "grep without a match: empty list", res);

    res = await call(client, "glob", { session: id, pattern: "**/*.txt" });
    check(res.structuredContent.entries.map((e) => e.path).join() === "/workspace/src/notes.txt", "glob finds it", res);
    res = await call(client, "ls", { session: id });
    check(res.structuredContent.entries.some((e) => e.path === "/workspace/src" && e.is_dir), "ls lists src", res);
    res = await call(client, "connect", { session: id, ttl: "20m" });
    check(!res.isError && res.structuredContent.ttl_seconds === 1200, "connect renews the TTL", res);

    res = await call(client, "destroy", { session: id });
    check(!res.isError, "destroy succeeds", res);
    check(!liveIds().includes(id), "the session is gone");
    await client.close();
  },

  // failures are tool results (isError), protocol problems are JSON-RPC errors
  async errors() {
    const { client } = await connect();
    const id = await createSession(client);
    let res = await call(client, "read", { session: id, path: "missing.txt" });
    check(res.isError === true && res.structuredContent.error.code === "not_found" && /missing\.txt/.test(text(res)),
      "reading a missing file is an isError result naming it", res);
    res = await call(client, "write", { session: id, path: "a.txt", content: "x" });
    res = await call(client, "write", { session: id, path: "a.txt", content: "y" });
    check(res.isError === true && /already exists/.test(text(res)), "write over a file is an isError result", res);
    res = await call(client, "edit", { session: id, path: "a.txt", old_string: "zzz", new_string: "y" });
    check(res.isError === true && /String not found/.test(text(res)), "edit of a missing string is an isError result", res);
    res = await call(client, "exec", { session: "sb_0000000000000000", command: ["true"] });
    check(res.isError === true && res.structuredContent.error.code === "session_not_found" &&
      /not created by this MCP server/.test(text(res)),
      "a session that does not exist (or is not the server's) is an isError result", res);
    res = await call(client, "exec", { session: id, command: ["no-such-program"] });
    check(res.structuredContent.exit_code === 127, "a missing program exits 127", res);
    res = await call(client, "create", { memory: "lots" });
    check(res.isError === true && res.structuredContent.error.code === "usage" && /memory/.test(text(res)),
      "a bad value is an isError result naming the option", res);

    for (const [args, what] of [
      [{ name: "nope", arguments: {} }, "an unknown tool"],
      [{ name: "read", arguments: { session: id } }, "a missing required argument"],
      [{ name: "read", arguments: { session: id, path: "a.txt", limit: "ten" } }, "a wrong type"],
      [{ name: "ls", arguments: { session: id, mount: "/:/host" } }, "an argument the tool does not have"],
      [{ name: "create", arguments: { seccomp: "unconfined" } }, "a value outside the enum (seccomp unconfined)"],
      [{ name: "create", arguments: { net: "host" } }, "an option a model is not offered (net)"],
      [{ name: "ls", arguments: { session: "../../etc" } }, "a session that is not an id or name"],
    ]) {
      let err;
      try {
        await client.callTool(args);
      } catch (e) {
        err = e;
      }
      check(err instanceof McpError && err.code === -32602, `${what} is a -32602 error`, err?.message);
    }
    const ping = await client.ping();
    check(ping && typeof ping === "object", "the server still answers after errors");
    await call(client, "destroy", { session: id });
    await client.close();
  },

  // sessions made through MCP outlive the connection: a new client (a resumed conversation)
  // uses them by id and by name; with --destroy-on-close they end with their connection
  async disconnect() {
    let { client, transport } = await connect();
    const a = await createSession(client);
    const b = await createSession(client, { name: "mcp-keep" });
    await call(client, "write", { session: a, path: "kept.txt", content: "still here\n" });
    const pid = transport.pid;
    await client.close();
    await sleep(500);
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    check(!alive, "the server has exited");
    check(liveIds().includes(a) && liveIds().includes(b), "both sessions outlive the connection");
    ({ client } = await connect());
    let res = await call(client, "read", { session: a, path: "kept.txt" });
    check(!res.isError && /still here/.test(text(res)), "a new connection reads the file by id", res);
    res = await call(client, "exec", { session: "mcp-keep", command: ["echo", "hi"] });
    check(!res.isError && res.structuredContent.output === "hi\n", "and runs in the other by name", res);
    for (const id of [a, b]) await call(client, "destroy", { session: id });
    await client.close();
    check(!liveIds().includes(a) && !liveIds().includes(b), "destroy ends them");

    ({ client } = await connect(["--destroy-on-close"]));
    const c = await createSession(client);
    await client.close();
    const left = await waitGone([c], 10000);
    check(left.length === 0, "--destroy-on-close: the session ends with the connection", left);
  },

  // a request the client gives up on (AbortSignal: notifications/cancelled) stops its command
  async cancel() {
    const { client } = await connect();
    const id = await createSession(client);
    const ac = new AbortController();
    const t0 = Date.now();
    const pending = client.callTool({ name: "exec", arguments: { session: id, command: ["sleep", "60"] } },
      undefined, { signal: ac.signal }).catch((e) => e);
    await sleep(1000);
    ac.abort("test");
    const err = await pending;
    check(err instanceof Error, "the aborted call rejects on the client side", String(err));
    const res = await call(client, "exec", { session: id, command: ["sh", "-c", "ps -eo comm | grep -cx sleep"] });
    check(res.structuredContent.output === "0\n", "the cancelled command no longer runs", res.structuredContent);
    check(Date.now() - t0 < 15000, "and the next call was served at once", Date.now() - t0);
    check(liveIds().includes(id), "the session itself is still there");
    await call(client, "destroy", { session: id });
    await client.close();
  },

  // SIGTERM while a command runs: the command is stopped, the session lives on
  async sigterm() {
    const { client, transport } = await connect();
    const id = await createSession(client);
    const t0 = Date.now();
    const pending = call(client, "exec", { session: id, command: ["sleep", "60"] }).catch((e) => e);
    await sleep(1000);
    process.kill(transport.pid, "SIGTERM");
    await Promise.race([pending, sleep(5000)]);
    let out = "";
    for (const end = Date.now() + 5000; Date.now() < end; await sleep(200)) {
      out = execFileSync(sbx, ["exec", id, "--", "sh", "-c", "ps -eo comm | grep -cx sleep || true"],
        { encoding: "utf8" });
      if (out === "0\n") break;
    }
    check(out === "0\n", "the running command is stopped", out);
    check(Date.now() - t0 < 8000, "well before it would have ended", Date.now() - t0);
    check(liveIds().includes(id), "the session lives on");
    execFileSync(sbx, ["destroy", id]);
    await client.close();
  },

  // ---- 515-mcp-sdk.bats ---------------------------------------------------------------------

  // a call longer than the client's request timeout survives on progress notifications;
  // without a progress token the same call times out (the control: the timeout is real)
  async progress() {
    const { client } = await connect();
    const id = await createSession(client);
    const ticks = [];
    const t0 = Date.now();
    const res = await client.callTool({ name: "exec", arguments: { session: id, command: ["sleep", "7"] } },
      undefined, { timeout: 3000, resetTimeoutOnProgress: true, onprogress: (p) => ticks.push(p) });
    check(!res.isError && res.structuredContent.exit_code === 0, "a 7 s exec succeeds under a 3 s request timeout", res);
    check(Date.now() - t0 >= 7000, "it did run 7 s", Date.now() - t0);
    check(ticks.length >= 4, `progress notifications arrived (${ticks.length})`, ticks);
    check(ticks.every((p, i) => i === 0 || p.progress > ticks[i - 1].progress), "their progress increases", ticks);
    check(/exec running for \d+s/.test(ticks[ticks.length - 1].message ?? ""), "and says how long", ticks);
    let err;
    try {
      await client.callTool({ name: "exec", arguments: { session: id, command: ["sleep", "7"] } },
        undefined, { timeout: 3000 });
    } catch (e) {
      err = e;
    }
    check(err instanceof McpError && err.code === -32001, "without progress the same call times out", String(err));
    // the timed-out call was cancelled by the client: its sleep is stopped
    await sleep(1500);
    const ps = await call(client, "exec", { session: id, command: ["sh", "-c", "ps -eo comm | grep -cx sleep || true"] });
    check(ps.structuredContent.output === "0\n", "the timed-out call's command was stopped", ps.structuredContent);
    await call(client, "destroy", { session: id });
    await client.close();
  },

  // a long exec blocks neither ls nor another exec; cancelling one call stops its command only
  async concurrent() {
    const { client } = await connect();
    const id = await createSession(client);
    const other = await createSession(client);
    const t0 = Date.now();
    let longDone = 0;
    const long = call(client, "exec", { session: id, command: ["sleep", "6"] }).then((r) => {
      longDone = Date.now();
      return r;
    });
    await sleep(500);
    const [ls, echo, inOther] = await Promise.all([
      call(client, "ls", { session: id }),
      call(client, "exec", { session: id, command: ["echo", "side"] }),
      call(client, "exec", { session: other, command: ["echo", "other"] }),
    ]);
    const tSide = Date.now();
    check(!ls.isError && !echo.isError && echo.structuredContent.output === "side\n" &&
      inOther.structuredContent.output === "other\n", "ls and two execs answer", [ls, echo, inOther]);
    check(tSide - t0 < 4000 && longDone === 0, `they answer while the long exec runs (${tSide - t0} ms)`, tSide - t0);
    const lr = await long;
    check(!lr.isError && lr.structuredContent.exit_code === 0 && longDone - t0 >= 6000, "the long exec ends after them", lr);

    // two running execs; cancelling one stops its command, the other runs on and answers
    const ac = new AbortController();
    const a = client.callTool({ name: "exec", arguments: { session: id, command: ["sleep", "31"] } },
      undefined, { signal: ac.signal }).catch((e) => e);
    const b = call(client, "exec", { session: id, command: ["sh", "-c", "sleep 3; echo b-done"] });
    await sleep(800);
    ac.abort("test");
    check((await a) instanceof Error, "the aborted call rejects");
    await sleep(1000);
    const ps = await call(client, "exec", { session: id, command: ["sh", "-c", "ps -eo args > /tmp/ps; grep -cx 'sleep 31' /tmp/ps; grep -cx 'sleep 3' /tmp/ps"] });
    check(ps.structuredContent.output === "0\n1\n", "the cancelled call's sleep 31 is gone, the other's sleep 3 runs", ps.structuredContent);
    const br = await b;
    check(br.structuredContent.output === "b-done\n", "the other call answers", br);
    for (const s of [id, other]) await call(client, "destroy", { session: s });
    await client.close();
  },

  // numbers are numbers in the schemas, and strings of digits are taken too
  async types() {
    const { client } = await connect();
    const { tools } = await client.listTools();
    const props = tools.find((t) => t.name === "create").inputSchema.properties;
    check(props.pids.type === "integer" && props.nofile.type === "integer", "pids and nofile are integers", props.pids);
    check(props.cpus.type === "number", "cpus is a number", props.cpus);
    check(JSON.stringify(props.ttl.type) === '["integer","string"]' &&
      JSON.stringify(props.memory.type) === '["integer","string"]', "ttl and memory: an integer or a string", props.ttl);
    const exec = tools.find((t) => t.name === "exec").inputSchema.properties;
    check(JSON.stringify(exec.timeout.type) === '["integer","string"]', "exec's timeout too", exec.timeout);

    const id = await createSession(client, { pids: 100, cpus: 0.5, ttl: 600, memory: 268435456, timeout: 60 });
    let s = JSON.parse(execFileSync(sbx, ["list", "--json"], { encoding: "utf8" })).find((x) => x.id === id);
    check(s.limits.pids.value === 100 && s.limits.cpus_milli.value === 500 && s.ttl_seconds === 600 &&
      s.limits.memory_bytes.value === 268435456, "numbers reach the session's limits", s);
    const id2 = await createSession(client, { pids: "90", cpus: "0.25", ttl: "5m" });
    s = JSON.parse(execFileSync(sbx, ["list", "--json"], { encoding: "utf8" })).find((x) => x.id === id2);
    check(s.limits.pids.value === 90 && s.limits.cpus_milli.value === 250 && s.ttl_seconds === 300,
      "strings are taken too", s);
    let res = await call(client, "exec", { session: id, command: ["sleep", "5"], timeout: 1 });
    check(res.structuredContent.timed_out === true && res.structuredContent.exit_code === 124,
      "a numeric exec timeout is in seconds", res.structuredContent);
    res = await call(client, "read", { session: id, path: "/etc/hostname", limit: "1" });
    check(!res.isError, "limit as a string of digits", res);
    res = await call(client, "create", { pids: 1000000 });
    check(res.isError && /above the operator's limit/.test(text(res)), "a number above the operator's limit is refused", res);
    for (const [args, what] of [
      [{ pids: true }, "a boolean for pids"],
      [{ pids: "lots" }, "a word for pids"],
      [{ pids: 1.5 }, "a fraction for pids"],
      [{ cpus: 0.0001 }, "cpus with 4 decimals"],
      [{ cpus: [1] }, "an array for cpus"],
      [{ ttl: { m: 1 } }, "an object for ttl"],
      [{ memory: -1 }, "a negative memory"],
    ]) {
      let err;
      try {
        await client.callTool({ name: "create", arguments: args });
      } catch (e) {
        err = e;
      }
      check(err instanceof McpError && err.code === -32602, `${what} is a -32602 error`, err?.message);
    }
    for (const x of [id, id2]) await call(client, "destroy", { session: x });
    await client.close();
  },

  // the text of a result is capped: head and tail kept around a marker saying how much was cut
  async cap() {
    let { client } = await connect();
    const id = await createSession(client);
    const gen = "echo FIRST-LINE; i=0; while [ $i -lt 4000 ]; do echo \"line $i of the middle of a long build log\"; i=$((i+1)); done; echo 'error: LAST-LINE' >&2; exit 2";
    let res = await call(client, "exec", { session: id, command: ["sh", "-c", gen] });
    const full = (await call(client, "exec", { session: id, command: ["sh", "-c", `(${gen}) 2>&1 | wc -c`] }));
    const t = text(res);
    check(Number(full.structuredContent.output) > 150000, "the output is larger than the cap", full.structuredContent);
    check(t.length <= 64 * 1024 + 200, `the text is at most 64 KiB and a marker (${t.length})`, t.length);
    check(t.startsWith("FIRST-LINE\n") && /error: LAST-LINE\n\[exit code 2\]$/.test(t), "it keeps the head and the tail", t.slice(-80));
    const m = /\[\.\.\. (\d+) bytes cut: the output has (\d+) bytes/.exec(t);
    check(m && Number(m[1]) > 80000, "the marker says how much was cut", m && m[0]);
    const o = res.structuredContent.output;
    check(res.structuredContent.output_cut === true && o.length < 64 * 1024 + 200 && /LAST-LINE/.test(o),
      "structuredContent.output is capped the same way", o.length);
    res = await call(client, "exec", { session: id, command: ["sh", "-c", "seq 1 1000"] });
    check(res.structuredContent.output.split("\n").length === 1001 && !/bytes cut/.test(text(res)),
      "a small output is whole (control)", res.structuredContent.output.length);
    await client.close();
    ({ client } = await connect(["--max-output", "8K"]));
    res = await call(client, "exec", { session: id, command: ["sh", "-c", gen] });
    check(text(res).length <= 8 * 1024 + 200 && /LAST-LINE/.test(text(res)), "--max-output 8K caps at 8 KiB", text(res).length);
    await call(client, "destroy", { session: id });
    await client.close();
  },

  // an image read with read is MCP image content, typed by its magic bytes
  async image() {
    const { client } = await connect();
    const id = await createSession(client);
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const files = {
      "pic.dat": [png, "image/png"],
      "photo.jpg": [Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]).toString("base64"), "image/jpeg"],
      "anim.gif": [Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00\x00;", "latin1").toString("base64"), "image/gif"],
      "x.webp": [Buffer.from("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00", "latin1").toString("base64"), "image/webp"],
    };
    for (const [name, [b64, mime]] of Object.entries(files)) {
      await call(client, "exec", { session: id, command: ["sh", "-c", `echo ${b64} | base64 -d > ${name}`] });
      const res = await call(client, "read", { session: id, path: name });
      const c = res.content[0];
      check(!res.isError && c.type === "image" && c.mimeType === mime && c.data === b64,
        `${name} reads as ${mime} image content`, res);
    }
    let res = await call(client, "read", { session: id, path: "pic.dat", binary: true });
    check(res.content[0].type === "image", "also with binary: true", res);
    await call(client, "exec", { session: id, command: ["sh", "-c", "printf 'PNG\\000\\001\\002' > fake.png"] });
    res = await call(client, "read", { session: id, path: "fake.png" });
    check(res.isError && res.content[0].type === "text" && /not_text/.test(text(res)),
      "a binary file that is no image is still not_text, whatever its name", res);
    res = await call(client, "read", { session: id, path: "fake.png", binary: true });
    check(!res.isError && res.content[0].type === "text", "binary: true returns it as base64 text", res);
    await call(client, "destroy", { session: id });
    await client.close();
  },
};

const name = process.argv[2];
if (!scenarios[name]) {
  console.error(`usage: node client.mjs ${Object.keys(scenarios).join("|")}`);
  process.exit(2);
}
try {
  await scenarios[name]();
  process.exit(0);
} catch (e) {
  console.log(e.message);
  process.exit(1);
}
