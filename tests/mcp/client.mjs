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

async function connect() {
  const transport = new StdioClientTransport({
    command: sbx,
    args: ["mcp"],
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
  // tools/list: the fourteen tools, with the schemas of `sbx tools --json`
  async tools() {
    const { client } = await connect();
    check(client.getServerVersion()?.name === "sbx", "serverInfo names sbx", client.getServerVersion());
    check(client.getServerCapabilities()?.tools !== undefined, "the tools capability is announced");
    const { tools } = await client.listTools();
    const want = ["create", "connect", "exec", "ls", "read", "write", "edit", "glob", "grep", "destroy", "stats", "ps", "logs", "kill"];
    check(JSON.stringify(tools.map((t) => t.name).sort()) === JSON.stringify([...want].sort()),
      "tools/list has exactly the fourteen tools", tools.map((t) => t.name));
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

  // sessions created through the server end when the client disconnects
  async disconnect() {
    const { client, transport } = await connect();
    const a = await createSession(client);
    const b = await createSession(client, { name: "mcp-keep" });
    const pid = transport.pid;
    await client.close(); // ends stdin: the server destroys a and b, then exits
    const left = await waitGone([a, b], 10000);
    check(left.length === 0, "both sessions are destroyed at disconnect", left);
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    check(!alive, "the server has exited");
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

  // SIGTERM while a command runs: the command is stopped, the sessions destroyed
  async sigterm() {
    const { client, transport } = await connect();
    const id = await createSession(client);
    const t0 = Date.now();
    const pending = call(client, "exec", { session: id, command: ["sleep", "60"] }).catch((e) => e);
    await sleep(1000);
    process.kill(transport.pid, "SIGTERM");
    const left = await waitGone([id], 10000);
    check(left.length === 0, "the session is destroyed after SIGTERM", left);
    check(Date.now() - t0 < 8000, "well before the command would have ended", Date.now() - t0);
    await Promise.race([pending, sleep(2000)]);
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
