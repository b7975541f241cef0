// `quiesce members` as a real process against the real database: disable|enable --team acts on the
// membership in that team only; disable-user|enable-user on the user in every team; a team's last
// active admin is refused (exit 2, nothing changed).
import { expect, test } from "vitest";
import { CLI_TEST_TIMEOUT, runCli } from "./run-cli";
import { prisma } from "../../lib/platform/db/prisma";
import { makeTeam, makeUser } from "../support/fixtures";
import { newId } from "../../lib/platform/ids";

test(
  "disable --team takes one team's membership; disable-user every team, never a team's last admin",
  async () => {
    const A = await makeTeam("cli A");
    const B = await makeTeam("cli B");
    await makeUser(A.teamId, "admin");
    const x = await makeUser(B.teamId, "admin");
    await prisma().membership.create({ data: { id: newId("mem"), teamId: A.teamId, userId: x.userId, role: "operator" } });

    const off = await runCli(["members", "disable", "--team", A.slug, "--user", x.email]);
    expect(off, off.stderr).toMatchObject({ code: 0 });
    expect(off.stdout).toContain(`disabled in ${A.slug}`);
    const list = await runCli(["members", "list", "--team", A.slug]);
    expect(list.stdout).toContain(`${x.email}\toperator\tdisabled in this team`);
    expect(await prisma().membership.count({ where: { userId: x.userId } })).toBe(1);
    expect((await prisma().user.findUniqueOrThrow({ where: { id: x.userId } })).disabledAt).toBeNull();

    // x is B's only admin: neither their membership there nor the user may be disabled.
    const last = await runCli(["members", "disable", "--team", B.slug, "--user", x.email]);
    const everywhere = await runCli(["members", "disable-user", "--user", x.email]);
    for (const r of [last, everywhere]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("at least one active admin");
    }
    expect((await prisma().user.findUniqueOrThrow({ where: { id: x.userId } })).disabledAt).toBeNull();
    expect(await prisma().membership.count({ where: { userId: x.userId } })).toBe(1);

    const both = await runCli(["members", "disable-user", "--user", x.email, "--team", A.slug]);
    expect(both.code).toBe(2);
    const on = await runCli(["members", "enable", "--team", A.slug, "--user", x.email]);
    expect(on.code, on.stderr).toBe(0);
    expect(await prisma().membership.count({ where: { userId: x.userId } })).toBe(2);
  },
  CLI_TEST_TIMEOUT * 3,
);
