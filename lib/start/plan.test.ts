import fc from "fast-check";
import { expect, test } from "vitest";
import { childEnv, COMPANIONS, demoEnabled, parsePort, planChildren } from "./plan";

const ROOT = "/srv/quiesce";

test("the web app always runs; companions run only when registered, in start order, with their flags", () => {
  const none = planChildren(ROOT, ["migrate", "keys"], { port: 3000, dev: false, demo: true });
  expect(none.map((c) => c.name)).toEqual(["web"]);
  expect(none[0]!.args.slice(-5)).toEqual(["start", "-p", "3000", "-H", "127.0.0.1"]);
  // Next runs behind the front that decides source addresses from the socket, not as a bare `next start`.
  expect(none[0]!.args).toContain(`${ROOT}/lib/start/web-main.ts`);
  expect(none[0]!.args.join(" ")).not.toMatch(/next\/dist\/bin\/next/);
  const built = planChildren(ROOT, [], { port: 3000, dev: false, demo: false, builtDir: "/b" });
  expect(built[0]!.args.slice(-6)).toEqual(["/b/web.mjs", "start", "-p", "3000", "-H", "127.0.0.1"]);
  expect(none[0]!.essential).toBe(true);

  const all = planChildren(ROOT, ["demo", "provider-sim", "webhook-worker", "barrier-worker", "hook"], {
    port: 4100,
    dev: false,
    demo: true,
  });
  // The four share one process (GROUPS), started after the web app because the demo needs the API.
  expect(all.map((c) => c.name)).toEqual(["web", "workers"]);
  const workers = all.find((c) => c.name === "workers")!;
  expect(workers.members).toEqual(["barrier-worker", "webhook-worker", "provider-sim", "demo"]);
  expect(workers.args.slice(workers.args.indexOf("together"))).toEqual([
    "together",
    "barrier-worker",
    "+",
    "webhook-worker",
    "+",
    "provider-sim",
    "--port",
    "4700",
    "+",
    "demo",
  ]);
  expect(workers.args).toContain("--conditions=react-server");
  expect(workers.afterWeb).toBe(true);
  expect(all.filter((c) => c.essential).map((c) => c.name)).toEqual(["web"]);
});

test("a group runs only when all its members run; otherwise each runs alone", () => {
  const noDemo = planChildren(ROOT, ["demo", "provider-sim", "webhook-worker", "barrier-worker"], { port: 1, dev: false, demo: false });
  expect(noDemo.map((c) => [c.name, c.members])).toEqual([
    ["web", ["web"]],
    ["workers", ["barrier-worker", "webhook-worker", "provider-sim"]],
  ]);
  expect(noDemo[1]!.afterWeb).toBe(false);
  const two = planChildren(ROOT, ["provider-sim", "barrier-worker"], { port: 1, dev: false, demo: true });
  expect(two.map((c) => c.name)).toEqual(["web", "barrier-worker", "provider-sim"]);
  expect(two[2]!.args.slice(-3)).toEqual(["provider-sim", "--port", "4700"]);
});

test("production children run the prebuilt CLI with capped V8 settings; from source (no build) they run tsx", () => {
  const built = planChildren(ROOT, ["api", "barrier-worker"], { port: 1, dev: false, demo: false, builtDir: "/b/x" });
  const api = built.find((c) => c.name === "api")!;
  expect(api.args).toContain("/b/x/quiesce.mjs");
  expect(api.args).not.toContain("tsx");
  expect(api.args).toEqual(expect.arrayContaining(["--max-semi-space-size=2", "--v8-pool-size=1"]));
  expect(built[0]!.args).toEqual(expect.arrayContaining(["--max-semi-space-size=1", "--max-old-space-size=512"]));
  const source = planChildren(ROOT, ["api"], { port: 1, dev: false, demo: false });
  expect(source[1]!.args).toEqual(expect.arrayContaining(["--import", "tsx", `${ROOT}/bin/quiesce.ts`]));
  const dev = planChildren(ROOT, ["api"], { port: 1, dev: true, demo: false });
  expect(dev.flatMap((c) => c.args).some((a) => a.startsWith("--max-"))).toBe(false);
});

test("--no-demo drops only the demo; --dev runs next dev", () => {
  const plan = planChildren(ROOT, ["demo", "barrier-worker"], { port: 3000, dev: true, demo: false });
  expect(plan.map((c) => c.name)).toEqual(["web", "barrier-worker"]);
  expect(plan[0]!.args).toContain("dev");
});

test("for any registry, the plan is the web app plus exactly the registered companions", () => {
  const names = [...COMPANIONS.map((c) => c.name), "start", "keys", "hook", "x"];
  fc.assert(
    fc.property(fc.subarray(names), fc.boolean(), (registered, demo) => {
      const plan = planChildren(ROOT, registered, { port: 3000, dev: false, demo });
      const expected = COMPANIONS.filter((c) => registered.includes(c.name) && (demo || c.name !== "demo")).map((c) => c.name);
      // Every registered companion runs exactly once, alone or in a group.
      expect(plan.flatMap((c) => c.members).sort()).toEqual(["web", ...expected].sort());
      expect(plan[0]!.name).toBe("web");
    }),
  );
});

test("QUIESCE_DEMO=0 (or false/no/off) and --no-demo turn the demo off; unset or 1/true/yes leaves it on; anything else is an error", () => {
  expect(() => demoEnabled(undefined, { QUIESCE_DEMO: "maybe" })).toThrow(/QUIESCE_DEMO="maybe" is not valid/);
  for (const v of ["0", "false", "NO", " off "]) expect(demoEnabled(false, { QUIESCE_DEMO: v })).toBe(false);
  for (const v of [undefined, "1", "true", "yes"]) expect(demoEnabled(undefined, { QUIESCE_DEMO: v })).toBe(true);
  expect(demoEnabled(true, { QUIESCE_DEMO: "1" })).toBe(false);
});

test("ports are whole numbers from 1 to 65535", () => {
  expect(parsePort("3000", "--port")).toBe(3000);
  for (const bad of ["0", "65536", "abc", "30.5", "", undefined]) expect(() => parsePort(bad, "--port")).toThrow(/--port: not a TCP port/);
});

test("every child gets the database, the control plane URL, the auth secret and the demo keys", () => {
  const env = childEnv(
    { PATH: "/bin", QUIESCE_API_KEY: "users-own-key" },
    {
      databaseUrl: "postgresql://u@h:1/db",
      port: 3100,
      authSecret: "s".repeat(43),
      keys: { agent: "qk_agent_a", worker: "qk_worker_w", operator: "qk_operator_o" },
    },
  );
  expect(env).toMatchObject({
    PATH: "/bin",
    DATABASE_URL: "postgresql://u@h:1/db",
    PORT: "3100",
    QUIESCE_URL: "http://127.0.0.1:3100",
    NEXTAUTH_URL: "http://localhost:3100",
    NEXTAUTH_SECRET: "s".repeat(43),
    QUIESCE_API_KEY: "qk_agent_a",
    QUIESCE_AGENT_KEY: "qk_agent_a",
    QUIESCE_WORKER_KEY: "qk_worker_w",
    QUIESCE_OPERATOR_KEY: "qk_operator_o",
    QUIESCE_PROVIDER_SIM_URL: `http://127.0.0.1:4700`,
  });
  expect(env.QUIESCE_GATEWAY_KEY).toBeUndefined();
  expect(childEnv({ NEXTAUTH_URL: "https://q.example" }, { databaseUrl: "x", port: 1, authSecret: "y", keys: {} }).NEXTAUTH_URL).toBe(
    "https://q.example",
  );
});

test("the API process runs on QUIESCE_API_PORT's port on loopback, is essential like the web app, and the console's port forwards to it", () => {
  const plan = planChildren(ROOT, ["api", "barrier-worker"], { port: 3000, dev: false, demo: true, apiPort: 3901, host: "0.0.0.0" });
  expect(plan.map((c) => c.name)).toEqual(["web", "api", "barrier-worker"]);
  const api = plan.find((c) => c.name === "api")!;
  // The web app listens where HOST says; the API process only where the front can reach it.
  expect(plan[0]!.args.slice(-2)).toEqual(["-H", "0.0.0.0"]);
  expect(api.args.slice(-5)).toEqual(["api", "--port", "3901", "--host", "127.0.0.1"]);
  expect(plan.filter((c) => c.essential).map((c) => c.name)).toEqual(["web", "api"]);
  const env = childEnv({}, { databaseUrl: "x", port: 3000, apiPort: 3901, authSecret: "y", frontSecret: "f".repeat(43), keys: {} });
  expect(env.QUIESCE_URL).toBe("http://127.0.0.1:3901");
  expect(env.QUIESCE_API_PORT).toBe("3901");
  expect(env.QUIESCE_API_UPSTREAM).toBe("http://127.0.0.1:3901");
  expect(env.QUIESCE_FRONT_SECRET).toBe("f".repeat(43));
  expect(env.NEXTAUTH_URL).toBe("http://localhost:3000");
  // Without the API process, Next answers /api/v1 itself: nothing to forward to.
  const alone = childEnv({}, { databaseUrl: "x", port: 3000, authSecret: "y", frontSecret: "f".repeat(43), keys: {} });
  expect(alone.QUIESCE_API_UPSTREAM).toBeUndefined();
});

test("the simulated provider runs on QUIESCE_PROVIDER_SIM_PORT (4700 by default), and the children are pointed at it", () => {
  const moved = planChildren(ROOT, ["provider-sim", "barrier-worker"], { port: 1, dev: false, demo: true, simPort: 4799 });
  expect(moved.find((c) => c.name === "provider-sim")!.args.slice(-3)).toEqual(["provider-sim", "--port", "4799"]);
  const base = { databaseUrl: "x", port: 1, authSecret: "y", keys: {} };
  expect(childEnv({}, { ...base, simPort: 4799 }).QUIESCE_PROVIDER_SIM_URL).toBe("http://127.0.0.1:4799");
  expect(childEnv({ QUIESCE_PROVIDER_SIM_PORT: "4801" }, base).QUIESCE_PROVIDER_SIM_URL).toBe("http://127.0.0.1:4801");
  expect(childEnv({}, base).QUIESCE_PROVIDER_SIM_URL).toBe("http://127.0.0.1:4700");
});
