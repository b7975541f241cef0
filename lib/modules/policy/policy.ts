// The team's policy (docs/policies.md): versions saved whole and never edited, one enabled at a time, read by the
// gate at decision time from policy_rules. Every save and every enable is audited with its diff.
import "server-only";
import { prisma, type Tx } from "../../platform/db/prisma";
import { badRequest, notFound } from "../../platform/errors";
import { authorize, teamOf } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";
import { diffPolicies, dryRun, globToRegex, type PastCall, type PolicyRule } from "../../control/policy";
import type { Harness } from "../../control/types";
import {
  DryRunBody,
  EnablePolicyBody,
  PolicyDocument,
  type DryRunView,
  type PolicyRuleInput,
  type PolicyVersionView,
} from "../../schemas/policy";

/** Decisions the dry run replays at most (the newest first are kept). */
const DRY_RUN_MAX = 50_000;

function teamId(p: Principal): string {
  const t = teamOf(p);
  if (!t) throw badRequest("a team is required");
  return t;
}

type Doc = { rules: PolicyRuleInput[]; redactKeys: string[]; note?: string };

/** A saved document's rules as the pure rule reads them (approver emails are not needed to match). */
export function rulesOf(doc: Doc): PolicyRule[] {
  return doc.rules.map((r) => ({
    name: r.name,
    ...(r.tool !== undefined ? { tool: r.tool } : {}),
    ...(r.harness !== undefined ? { harness: r.harness as Harness } : {}),
    ...(r.agent !== undefined ? { agent: r.agent } : {}),
    ...(r.subtree !== undefined ? { subtree: r.subtree } : {}),
    effect: r.effect,
    ...(r.approval ? { approval: { ttlSeconds: r.approval.ttlSeconds, role: r.approval.role, users: r.approval.users } } : {}),
    ...(r.budget ? { budget: r.budget } : {}),
  }));
}

async function versionRow(team: string, version: number) {
  return prisma().policyVersion.findUnique({ where: { teamId_version: { teamId: team, version } } });
}

function viewOf(
  row: { version: number; document: unknown; note: string | null; createdBy: string; createdAt: Date },
  previous: { version: number; document: unknown } | null,
  enabledVersion: number | null,
): PolicyVersionView {
  const doc = row.document as Doc;
  const prev = previous ? (previous.document as Doc) : null;
  return {
    version: row.version,
    document: { ...doc, rules: doc.rules, redactKeys: doc.redactKeys },
    note: row.note,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    enabled: enabledVersion === row.version,
    diff: { against: previous?.version ?? null, ...diffPolicies(prev, doc) },
  };
}

async function enabledOf(team: string): Promise<number | null> {
  const t = await prisma().team.findUnique({ where: { id: team }, select: { policyVersion: true } });
  return t?.policyVersion ?? null;
}

/** A version as given in a path or a call: a positive integer, or a 400 (never a lookup). */
function versionOf(v: string | number): number {
  const n = typeof v === "number" ? v : /^[1-9][0-9]{0,8}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw badRequest("version: must be a positive integer");
  return n;
}

export async function getPolicyVersion(p: Principal, v: string | number): Promise<PolicyVersionView> {
  authorize(p, "run.read");
  const team = teamId(p);
  const version = versionOf(v);
  const row = await versionRow(team, version);
  if (!row) throw notFound(`policy version ${version}`);
  const previous = await prisma().policyVersion.findFirst({
    where: { teamId: team, version: { lt: version } },
    orderBy: { version: "desc" },
  });
  return viewOf(row, previous, await enabledOf(team));
}

/** The newest `limit` versions, each with its diff against the one before it, in one read. */
export async function listPolicyVersions(p: Principal, limit: number): Promise<PolicyVersionView[]> {
  authorize(p, "run.read");
  const team = teamId(p);
  const rows = await prisma().policyVersion.findMany({ where: { teamId: team }, orderBy: { version: "desc" }, take: limit + 1 });
  const enabled = await enabledOf(team);
  return rows.slice(0, limit).map((row, i) => viewOf(row, rows[i + 1] ?? null, enabled));
}

export async function getPolicy(p: Principal) {
  authorize(p, "run.read");
  const team = teamId(p);
  const enabledVersion = await enabledOf(team);
  const versions = await prisma().policyVersion.findMany({
    where: { teamId: team },
    orderBy: { version: "desc" },
    select: { version: true, note: true, createdBy: true, createdAt: true },
    take: 200,
  });
  return {
    enabledVersion,
    current: enabledVersion === null ? null : await getPolicyVersion(p, enabledVersion),
    versions: versions.map((v) => ({ ...v, createdAt: v.createdAt.toISOString() })),
  };
}

/** Approver emails → user ids of the team's members; an email that is not a member is a bad request. */
async function approverIds(tx: Tx, team: string, doc: Doc): Promise<Map<string, string>> {
  const emails = [...new Set(doc.rules.flatMap((r) => r.approval?.users ?? []).map((e) => e.toLowerCase()))];
  if (emails.length === 0) return new Map();
  const members = await tx.membership.findMany({
    where: { teamId: team, user: { email: { in: emails, mode: "insensitive" } } },
    select: { user: { select: { id: true, email: true } } },
  });
  const ids = new Map(members.map((m) => [m.user.email.toLowerCase(), m.user.id]));
  const missing = emails.filter((e) => !ids.has(e));
  if (missing.length > 0) throw badRequest(`approval.users: not members of this team: ${missing.join(", ")}`);
  return ids;
}

export async function createPolicyVersion(p: Principal, input: unknown): Promise<PolicyVersionView> {
  authorize(p, "policy.write");
  const team = teamId(p);
  const parsed = PolicyDocument.safeParse(input);
  if (!parsed.success) throw badRequest("invalid policy", parsed.error.issues);
  const doc: Doc = parsed.data;
  for (const r of doc.rules)
    if (r.subtree !== undefined && !(await prisma().run.findFirst({ where: { id: r.subtree, teamId: team }, select: { id: true } })))
      throw badRequest(`rule ${r.name}: subtree ${r.subtree} is not a run of this team`);
  const actor = actorOf(p);
  const version = await prisma().$transaction(async (tx) => {
    // One writer at a time per team: versions are numbered without gaps.
    await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(hashtextextended('policy:' || $1, 0))", team);
    const last = await tx.policyVersion.findFirst({ where: { teamId: team }, orderBy: { version: "desc" }, select: { version: true } });
    const v = (last?.version ?? 0) + 1;
    const ids = await approverIds(tx, team, doc);
    await tx.policyVersion.create({
      data: { teamId: team, version: v, document: doc, redactKeys: doc.redactKeys, note: doc.note ?? null, createdBy: actor },
    });
    if (doc.rules.length > 0)
      await tx.policyRule.createMany({
        data: doc.rules.map((r, i) => ({
          teamId: team,
          version: v,
          position: i,
          name: r.name,
          toolRegex: r.tool === undefined ? null : globToRegex(r.tool),
          harness: r.harness ?? null,
          agent: r.agent ?? null,
          subtreeRunId: r.subtree ?? null,
          effect: r.effect,
          approvalTtlSeconds: r.approval?.ttlSeconds ?? null,
          approverRole: r.effect === "require_approval" ? (r.approval?.role ?? "operator") : null,
          approverUserIds: (r.approval?.users ?? []).map((e) => ids.get(e.toLowerCase())!),
          budgetUnit: r.budget?.unit ?? null,
          budgetLimit: r.budget?.limit ?? null,
          budgetWindow: r.budget?.window ?? null,
          budgetPer: r.budget?.per ?? null,
          budgetWhenExhausted: r.budget?.whenExhausted ?? null,
          budgetOnCross: r.budget?.onCross ?? null,
        })),
      });
    const previous = last
      ? await tx.policyVersion.findUnique({ where: { teamId_version: { teamId: team, version: last.version } } })
      : null;
    const diff = diffPolicies(previous ? (previous.document as Doc) : null, doc);
    await appendAudit(tx, {
      teamId: team,
      actor,
      action: "policy.version_saved",
      target: `policy:${v}`,
      before: previous ? { version: previous.version } : null,
      after: { version: v, note: doc.note ?? null, diff },
    });
    return v;
  });
  return getPolicyVersion(p, version);
}

export async function enablePolicy(p: Principal, input: unknown) {
  authorize(p, "policy.write");
  const team = teamId(p);
  const parsed = EnablePolicyBody.safeParse(input);
  if (!parsed.success) throw badRequest("invalid body", parsed.error.issues);
  const { version, reason } = parsed.data;
  const actor = actorOf(p);
  await prisma().$transaction(async (tx) => {
    // The gate holds the team's scope key shared while it decides: a decision either read the old version or
    // waited for this one to commit.
    await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(7114, hashtext($1))", team);
    if (version !== null && !(await tx.policyVersion.findUnique({ where: { teamId_version: { teamId: team, version } } })))
      throw notFound(`policy version ${version}`);
    const before = await tx.team.findUniqueOrThrow({ where: { id: team }, select: { policyVersion: true } });
    const [from, to] = await Promise.all(
      [before.policyVersion, version].map((v) =>
        v === null ? null : tx.policyVersion.findUnique({ where: { teamId_version: { teamId: team, version: v } } }),
      ),
    );
    // The version and its rules as the gate reads them (lib/modules/policy/sql/quiesce_policy_rules.sql), together.
    await tx.$executeRawUnsafe(
      "UPDATE teams SET policy_version = $2::integer, policy_rules = quiesce_policy_rules(id, $2::integer) WHERE id = $1",
      team,
      version,
    );
    await appendAudit(tx, {
      teamId: team,
      actor,
      action: "policy.enable",
      target: "policy",
      before: { version: before.policyVersion },
      after: {
        version,
        reason,
        diff: to ? diffPolicies(from ? (from.document as Doc) : null, to.document as Doc) : null,
      },
    });
  });
  return getPolicy(p);
}

export async function dryRunPolicy(p: Principal, v: string | number, input: unknown): Promise<DryRunView> {
  authorize(p, "policy.write");
  const team = teamId(p);
  const version = versionOf(v);
  const parsed = DryRunBody.safeParse(input ?? {});
  if (!parsed.success) throw badRequest("invalid body", parsed.error.issues);
  const row = await versionRow(team, version);
  if (!row) throw notFound(`policy version ${version}`);
  const days = parsed.data.days;
  const rows = await prisma().$queryRawUnsafe<
    {
      at: Date;
      tool: string;
      harness: Harness;
      native_agent_id: string | null;
      created_by: string | null;
      path: string[];
      root_run_id: string;
    }[]
  >(
    `SELECT gd.at, o.tool, r.harness::text AS harness, r.native_agent_id, r.created_by, r.path, r.root_run_id
       FROM gate_decisions gd
       JOIN operations o ON o.team_id = gd.team_id AND o.operation_id = gd.operation_id
       JOIN runs r ON r.id = o.run_id
      WHERE gd.team_id = $1 AND gd.decision = 'allow' AND gd.source IN ('gate', 'admit')
        AND gd.at > now() - make_interval(days => $2)
      ORDER BY gd.at DESC LIMIT $3`,
    team,
    days,
    DRY_RUN_MAX + 1,
  );
  const calls: PastCall[] = rows.slice(0, DRY_RUN_MAX).map((r) => ({
    at: r.at.getTime(),
    tool: r.tool,
    harness: r.harness,
    agentIds: [r.native_agent_id, r.created_by],
    path: r.path,
    rootRunId: r.root_run_id,
  }));
  return { version, days, truncated: rows.length > DRY_RUN_MAX, ...dryRun(rulesOf(row.document as Doc), calls) };
}
