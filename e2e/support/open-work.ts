// Open work's fixtures and readings, shared by the journeys of e2e/reconciliations: new members of team
// demo (so a filter by them lists exactly what a spec made), unknown outcomes made the way the trigger
// makes them, and the header's counts beside the navigation's badge and the database's.
import { randomBytes } from "node:crypto";
import { expect, type Page } from "@playwright/test";
import { e2e, USERS } from "./env";
import { uid } from "./api";
import { db, one } from "./db";

export async function demoTeam(): Promise<string> {
  return (await one<{ id: string }>("SELECT id FROM teams WHERE slug = 'demo'")).id;
}

/** A new member of team demo with the demo password (the viewer's hash), holding nothing yet. */
export async function newMember(role: "operator" | "manager", first = "Owen"): Promise<{ id: string; name: string; email: string }> {
  const id = `user_openwork${randomBytes(6).toString("hex")}`;
  const name = `${first} Work ${id.slice(-4)}`;
  const email = `open.work.${id.slice(-12)}@example.test`;
  const d = await db();
  await d.query("INSERT INTO users (id, email, name, password_hash) SELECT $1, $2, $3, password_hash FROM users WHERE email = $4", [
    id,
    email,
    name,
    USERS.viewer,
  ]);
  await d.query("INSERT INTO memberships (id, team_id, user_id, role) VALUES ($1, $2, $3, $4)", [
    `mem_openwork${randomBytes(6).toString("hex")}`,
    await demoTeam(),
    id,
    role,
  ]);
  return { id, name, email };
}

/** A call the gate allowed (a running operation of a new run of team demo): its row id. */
export async function runningOp(): Promise<{ rowId: string; runId: string; operationId: string }> {
  const agent = e2e.agent();
  const run = await agent.createRun({ taskId: uid("open-work"), title: "open work fixture" });
  const opId = uid("open-work-op");
  expect((await agent.gate(run, opId, "deploy.apply")).decision).toBe("allow");
  const op = await one<{ id: string }>("SELECT id FROM operations WHERE run_id = $1 AND operation_id = $2", [run.runId, opId]);
  return { rowId: op.id, runId: run.runId, operationId: opId };
}

/** An unknown outcome (the trigger opens its reconciliation) of a call at `provider`'s job `jobId`, held by nobody. */
export async function unassignedUnknown(
  provider: string | null,
  jobId: string | null,
): Promise<{ id: string; operationId: string; runId: string }> {
  const op = await runningOp();
  const d = await db();
  await d.query("UPDATE operations SET provider_name = $2, provider_job_id = $3, state = 'aborted_unknown' WHERE id = $1", [
    op.rowId,
    provider,
    jobId,
  ]);
  const r = await one<{ id: string }>("SELECT id FROM reconciliations WHERE operation_id = $1", [op.rowId]);
  await d.query("UPDATE reconciliations SET assignee_user_id = NULL, status = 'awaiting_assignee' WHERE id = $1", [r.id]);
  return { id: r.id, operationId: op.operationId, runId: op.runId };
}

/** The team's counts as the database has them. */
export async function dbCounts(): Promise<{ unknowns: number; recoveries: number; overdue: number }> {
  return one<{ unknowns: number; recoveries: number; overdue: number }>(
    `SELECT (SELECT count(*)::int FROM reconciliations WHERE team_id = $1 AND status <> 'resolved') AS unknowns,
            (SELECT count(*)::int FROM recovery_items WHERE team_id = $1 AND state IN ('open', 'in_progress', 'failed')) AS recoveries,
            (SELECT count(*)::int FROM recovery_items WHERE team_id = $1 AND state IN ('open', 'in_progress', 'failed') AND due_at <= now()) AS overdue`,
    [await demoTeam()],
  );
}

/** The header's counts and the navigation's badge, as the page shows them. */
export async function shownCounts(page: Page) {
  const region = page.getByRole("region", { name: "Open work counts" });
  const n = async (name: string) => Number(await region.locator(`[data-count="${name}"] .stat-value`).innerText());
  const badge = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /Open work/ });
  return {
    unknowns: await n("unknowns"),
    recoveries: await n("recoveries"),
    overdue: await n("overdue"),
    badge: Number((await badge.locator(".count").count()) ? await badge.locator(".count").innerText() : "0"),
  };
}

/** "agree" once the header's counts are the database's and the badge is their total; otherwise what differs. */
export async function countsAgree(page: Page): Promise<string> {
  const [shown, want] = [await shownCounts(page), await dbCounts()];
  return shown.unknowns === want.unknowns &&
    shown.recoveries === want.recoveries &&
    shown.overdue === want.overdue &&
    shown.badge === want.unknowns + want.recoveries
    ? "agree"
    : JSON.stringify({ shown, want });
}
