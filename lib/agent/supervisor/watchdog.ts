// The watchdog of the signal-based containers (pidns, pgroup): Node cannot set PR_SET_PDEATHSIG or
// PR_SET_CHILD_SUBREAPER, so a tiny second process holds a pipe from the supervisor. When the pipe
// closes without a "disarm" line — the supervisor died, even by SIGKILL — it stops and kills every
// member it can find (the state file's known processes, the session, the group, the environment marker,
// their descendants) and writes what it killed beside the state file, for `quiesce exec --reattach`.
// Plain JavaScript run by `node -e`: it must start without tsx or the bundle.
import { spawn } from "node:child_process";

const SCRIPT = String.raw`
const fs = require("fs");
const stateFile = process.argv[1];
let disarmed = false, buf = "";
process.stdin.on("data", (d) => { buf += d; if (buf.includes("disarm\n")) disarmed = true; });
process.stdin.on("close", () => { if (!disarmed) reap(); else process.exit(0); });
process.stdin.on("error", () => {});
function stat(pid) {
  try {
    const t = fs.readFileSync("/proc/" + pid + "/stat", "utf8");
    const f = t.slice(t.lastIndexOf(")") + 2).split(" ");
    return { pid, state: f[0], ppid: +f[1], pgid: +f[2], sid: +f[3], key: pid + "@" + f[19], start: +f[19] };
  } catch { return null; }
}
function members(st) {
  const h = st.handle, known = new Set(Object.keys(st.processes || {})), marker = "QUIESCE_EXEC_CONTAINER=" + h.name;
  const all = new Map();
  for (const n of fs.readdirSync("/proc")) {
    const pid = +n; if (!(pid > 0) || pid === process.pid) continue;
    const s = stat(pid); if (!s || s.state === "Z" || s.state === "X" || s.start < (h.sinceTicks || 0)) continue;
    all.set(pid, s);
  }
  const m = new Set();
  for (const s of all.values()) {
    let env = "";
    try { env = fs.readFileSync("/proc/" + s.pid + "/environ", "latin1"); } catch {}
    let ns = null;
    try { ns = fs.readlinkSync("/proc/" + s.pid + "/ns/pid"); } catch {}
    if (known.has(s.key) || s.key === h.rootKey || (h.sid && s.sid === h.sid) || (h.pgid && s.pgid === h.pgid) ||
        env.split("\0").includes(marker) || (h.pidns && ns === h.pidns)) m.add(s.pid);
  }
  for (let grew = true; grew; ) { grew = false; for (const s of all.values()) if (!m.has(s.pid) && m.has(s.ppid)) { m.add(s.pid); grew = true; } }
  return [...m].map((p) => all.get(p));
}
function reap() {
  let st; try { st = JSON.parse(fs.readFileSync(stateFile, "utf8")); } catch { process.exit(1); }
  const killed = {}; const until = Date.now() + 10000; let emptyAt = null;
  while (Date.now() < until) {
    const ms = members(st);
    if (ms.length === 0) { emptyAt = new Date().toISOString(); break; }
    for (const s of ms) { try { process.kill(s.pid, "SIGSTOP"); } catch {} }
    for (const s of ms) { try { process.kill(s.pid, "SIGKILL"); killed[s.key] = killed[s.key] || { pid: s.pid, at: new Date().toISOString() }; } catch {} }
    const t = Date.now() + 20; while (Date.now() < t) {}
  }
  fs.writeFileSync(stateFile + ".watchdog", JSON.stringify({ at: new Date().toISOString(), killed, emptyAt }));
  process.exit(0);
}
`;

export interface Watchdog {
  /** The supervisor is done with the tree: the watchdog leaves it alone and exits. */
  disarm(): void;
}

export function startWatchdog(stateFile: string): Watchdog {
  const child = spawn(process.execPath, ["-e", SCRIPT, stateFile], { stdio: ["pipe", "ignore", "ignore"], detached: true });
  child.unref();
  child.stdin.on("error", () => undefined);
  // The pipe must not keep the supervisor alive; it only has to close when the supervisor is gone.
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  return {
    disarm: () => {
      child.stdin.end("disarm\n");
    },
  };
}
