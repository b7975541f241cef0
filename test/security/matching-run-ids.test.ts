// "Select all N matching (by run id)" (docs/console.md#runs-list): the ids of every run matching the
// runs list's search and breaker filters, for a fleet stop that names them one by one. Only the caller's
// team, only roles that may stop, and beyond the cap nothing (never a silently truncated list).
import { afterAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { listMatchingRunIds, MATCHING_IDS_CAP } from "../../lib/modules/runs/console/runs";
import { makeRun, makeTeam, makeUser } from "../support/fixtures";
import { QuiesceError } from "../../lib/platform/errors";

afterAll(async () => {
  await prisma().$disconnect();
});

async function member(role: "operator" | "viewer") {
  const { teamId } = await makeTeam(`matching-${role}`);
  const u = await makeUser(teamId, role);
  return { teamId, p: { type: "user", userId: u.userId, email: u.email, teamId, role } as const };
}

test("search and breaker: exactly the caller's team's matching runs", async () => {
  const { teamId, p } = await member("operator");
  const other = await makeTeam("matching-other");
  const term = `needle-${Date.now().toString(36)}`;
  const a = await makeRun(teamId, { title: `${term} one` });
  const b = await makeRun(teamId, { title: `${term} two`, breaker: "open" });
  await makeRun(teamId, { title: "haystack" });
  await makeRun(other.teamId, { title: `${term} of another team` });

  const both = await listMatchingRunIds(p, { q: term });
  expect(both.capped).toBe(false);
  expect([...both.ids].sort()).toEqual([a.runId, b.runId].sort());
  expect(await listMatchingRunIds(p, { q: term, breaker: "open" })).toEqual({ ids: [b.runId], capped: false });
  expect(await listMatchingRunIds(p, { q: "nothing-matches-this" })).toEqual({ ids: [], capped: false });
});

test("a viewer may not list them (fleet.stop)", async () => {
  const { p } = await member("viewer");
  await expect(listMatchingRunIds(p, { q: "x" })).rejects.toBeInstanceOf(QuiesceError);
});

test(`more than ${MATCHING_IDS_CAP} matching: capped, and no ids at all`, async () => {
  const { teamId, p } = await member("operator");
  const term = `many-${Date.now().toString(36)}`;
  const seed = await makeRun(teamId, { title: term });
  // MATCHING_IDS_CAP more copies of the seed row, each its own root.
  await prisma().$executeRawUnsafe(
    `INSERT INTO runs
     SELECT (jsonb_populate_record(r, jsonb_build_object('id', x.id, 'root_run_id', x.id, 'path', jsonb_build_array(x.id), 'task_id', 'task-' || x.id))).*
       FROM runs r, (SELECT 'run_cap' || g || '_' || $2 AS id FROM generate_series(1, $3::int) g) x
      WHERE r.id = $1`,
    seed.runId,
    term,
    MATCHING_IDS_CAP,
  );
  expect(await listMatchingRunIds(p, { q: term })).toEqual({ ids: [], capped: true });
  // One fewer fits: every id.
  await prisma().$executeRawUnsafe(`DELETE FROM runs WHERE id = $1`, `run_cap1_${term}`);
  const all = await listMatchingRunIds(p, { q: term });
  expect(all.capped).toBe(false);
  expect(all.ids).toHaveLength(MATCHING_IDS_CAP);
});
