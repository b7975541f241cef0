// A malformed environment variable stops every command before it does anything, with a message that
// names the variable and what it accepts (lib/platform/config, checked at the top of bin/quiesce.ts).
import { expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { CLI_TEST_TIMEOUT, runCli } from "./run-cli";

test(
  "a bad value exits 2 naming the variable and its range; every bad variable is listed; nothing is written",
  async () => {
    const teamsBefore = await prisma().team.count();
    const one = (args: string[], env: Record<string, string>) => runCli(args, env);
    const badPool = await one(["seed"], { QUIESCE_DB_POOL: "1O" });
    expect(badPool.code).toBe(2);
    expect(badPool.stderr).toContain('QUIESCE_DB_POOL="1O" is not valid: expected an integer from 1 to 1000');
    const two = await one(["runs", "list"], { PORT: "70000", QUIESCE_TIMEOUT_MS: "soon" });
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/PORT="70000" is not valid: expected an integer from 1 to 65535/);
    expect(two.stderr).toMatch(/QUIESCE_TIMEOUT_MS="soon" is not valid/);
    const hidden = await one(["seed"], { DATABASE_URL: "mysql://root:hunter2@db/x" });
    expect(hidden.code).toBe(2);
    expect(hidden.stderr).toContain("DATABASE_URL=(value hidden)");
    expect(hidden.stderr).not.toContain("hunter2");
    expect(await prisma().team.count()).toBe(teamsBefore);
    await prisma().$disconnect();
  },
  CLI_TEST_TIMEOUT,
);
