// The providers rows (docs/architecture.md#the-cancellation-barrier): one insert with its audit row, for
// the seed's ensure (system, idempotent) and for an admin's registration (API, CLI). Where a provider
// registered through the API may point is judged like a webhook's URL (docs/security/hardening.md#outbound-requests);
// the deployment's own CLI is not judged, and only it may register a stdio command, which the barrier
// engine runs on its own host.
import "server-only";
import { prisma, type Tx } from "../../platform/db/prisma";
import { newId } from "../../platform/ids";
import { sql, toQuery } from "../../platform/db/sql";
import { badRequest, forbidden, notFound, QuiesceError } from "../../platform/errors";
import { setting } from "../../platform/config";
import { assertTeam, authorize, teamOf } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";
import { refuseOutboundUrl } from "../webhooks/target";
import { CreateProviderBody, type ProviderView } from "../../schemas/providers";

interface ProviderRow {
  teamId: string;
  name: string;
  kind: string;
  cancelUrl: string | null;
  statusUrl: string | null;
  compensateUrl: string | null;
  quietPeriodSeconds?: number;
  rollbackOwner: string | null;
  /** Kinds mcp, a2a: an http(s) URL, or a stdio command as a JSON array. */
  endpoint?: string | null;
  timeoutMs?: number;
  settleDeadlineMs?: number;
  /** The provider's page for one job (a template), linked by the console. */
  jobUrl?: string | null;
}

const COLUMNS = {
  name: "name",
  kind: "kind",
  cancelUrl: "cancel_url",
  statusUrl: "status_url",
  compensateUrl: "compensate_url",
  quietPeriodSeconds: "quiet_period_seconds",
  rollbackOwner: "rollback_owner",
  endpoint: "endpoint",
  timeoutMs: "timeout_ms",
  settleDeadlineMs: "settle_deadline_ms",
  jobUrl: "job_url",
} as const satisfies Record<Exclude<keyof ProviderRow, "teamId">, string>;

/** Inserts the row and its audit entry, or returns null when the team already has that name. Absent fields take the column's default. */
async function insertProviderTx(tx: Tx, p: Principal, r: ProviderRow): Promise<string | null> {
  const id = newId("prov");
  const given = (Object.keys(COLUMNS) as (keyof typeof COLUMNS)[]).filter((k) => r[k] !== undefined);
  const { text, values } = toQuery(
    sql`INSERT INTO providers (id, team_id, ${sql.raw(given.map((k) => COLUMNS[k]).join(", "))})
        VALUES (${id}, ${r.teamId}, ${sql.join(given.map((k) => sql`${r[k]}`))})
        ON CONFLICT (team_id, name) DO NOTHING RETURNING id`,
  );
  const inserted = await tx.$queryRawUnsafe<{ id: string }[]>(text, ...values);
  if (inserted.length === 0) return null;
  const { teamId: _t, ...after } = r;
  await appendAudit(tx, { teamId: r.teamId, actor: actorOf(p), action: "provider.create", target: id, after: { ...after } });
  return id;
}

export interface ProviderInput extends Omit<ProviderRow, "compensateUrl"> {
  /** Where to ask the provider to undo a completed effect (recovery); none: a person records it. */
  compensateUrl?: string | null;
  /**
   * An existing row whose cancel, status, compensate or job-page URLs differ is pointed at these (audited as provider.update).
   * For the seeded simulated provider, whose port is a setting (QUIESCE_PROVIDER_SIM_PORT): the demo
   * keeps working when the port changes between starts. Otherwise an existing row is left as configured.
   */
  updateUrls?: boolean;
}

/** Tenancy bootstrap (seed, drills): adds the row when the team has none of that name; an existing row is left as configured. */
export async function ensureProvider(p: Principal, input: ProviderInput): Promise<{ id: string; created: boolean; updated: boolean }> {
  if (p.type !== "system") throw forbidden("tenancy bootstrap is for system callers only");
  const compensateUrl = input.compensateUrl ?? null;
  return prisma().$transaction(async (tx) => {
    const { updateUrls: _u, ...fields } = input;
    const id = await insertProviderTx(tx, p, { ...fields, compensateUrl });
    if (id) return { id, created: true, updated: false };
    const row = await tx.provider.findUniqueOrThrow({
      where: { teamId_name: { teamId: input.teamId, name: input.name } },
      select: { id: true, cancelUrl: true, statusUrl: true, compensateUrl: true, jobUrl: true },
    });
    const jobUrl = input.jobUrl === undefined ? row.jobUrl : input.jobUrl;
    if (
      !input.updateUrls ||
      (row.cancelUrl === input.cancelUrl &&
        row.statusUrl === input.statusUrl &&
        row.compensateUrl === compensateUrl &&
        row.jobUrl === jobUrl)
    )
      return { id: row.id, created: false, updated: false };
    await tx.provider.update({
      where: { id: row.id },
      data: { cancelUrl: input.cancelUrl, statusUrl: input.statusUrl, compensateUrl, jobUrl },
    });
    await appendAudit(tx, {
      teamId: input.teamId,
      actor: actorOf(p),
      action: "provider.update",
      target: row.id,
      before: { cancelUrl: row.cancelUrl, statusUrl: row.statusUrl, compensateUrl: row.compensateUrl, jobUrl: row.jobUrl },
      after: { cancelUrl: input.cancelUrl, statusUrl: input.statusUrl, compensateUrl, jobUrl },
    });
    return { id: row.id, created: false, updated: true };
  });
}

type Stored = {
  id: string;
  name: string;
  kind: string;
  endpoint: string | null;
  cancelUrl: string | null;
  statusUrl: string | null;
  compensateUrl: string | null;
  timeoutMs: number;
  settleDeadlineMs: number;
  quietPeriodSeconds: number;
  rollbackOwner: string | null;
  jobUrl: string | null;
  createdAt: Date;
};

/** The command of a stdio endpoint (a JSON array of strings), or null for a URL or anything unreadable. */
function commandOf(endpoint: string | null): string[] | null {
  if (!endpoint || /^https?:\/\//.test(endpoint)) return null;
  try {
    const argv = JSON.parse(endpoint) as unknown;
    return Array.isArray(argv) && argv.every((a) => typeof a === "string") ? argv : null;
  } catch {
    return null;
  }
}

const view = ({ endpoint, createdAt, ...r }: Stored): ProviderView => ({
  ...r,
  url: endpoint && /^https?:\/\//.test(endpoint) ? endpoint : null,
  command: commandOf(endpoint),
  createdAt: createdAt.toISOString(),
});

function teamFor(p: Principal, teamId?: string): string {
  const t = teamOf(p, teamId);
  if (!t) throw badRequest("team: required");
  if (teamId) assertTeam(p, teamId, "team");
  return t;
}

export async function listProviders(p: Principal, teamId?: string): Promise<ProviderView[]> {
  authorize(p, "provider.read");
  const rows = await prisma().provider.findMany({ where: { teamId: teamFor(p, teamId) }, orderBy: { name: "asc" } });
  return rows.map(view);
}

/** An admin registers a provider; bad input, a refused address or a taken name write nothing. */
export async function createProvider(p: Principal, input: unknown, teamId?: string): Promise<ProviderView> {
  authorize(p, "provider.write");
  const parsed = CreateProviderBody.safeParse(input);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw badRequest(`${i.path.join(".") || "input"}: ${i.message}`);
  }
  const b = parsed.data;
  const team = teamFor(p, teamId);
  if (p.type !== "system") {
    if (b.command) throw forbidden("command: a stdio provider runs on the barrier engine's host; register it with the deployment's CLI");
    const exceptions = { cidrs: setting("QUIESCE_PROVIDER_ALLOW_PRIVATE"), setting: "QUIESCE_PROVIDER_ALLOW_PRIVATE" };
    for (const field of ["url", "cancelUrl", "statusUrl", "compensateUrl"] as const) {
      const u = b[field];
      const refused = u === undefined ? null : await refuseOutboundUrl(u, exceptions);
      if (refused) throw badRequest(`${field}: ${refused}`);
    }
  }
  const endpoint = b.url ?? (b.command ? JSON.stringify(b.command) : null);
  return prisma().$transaction(async (tx) => {
    if (!(await tx.team.findUnique({ where: { id: team }, select: { id: true } }))) throw notFound("team");
    const id = await insertProviderTx(tx, p, {
      teamId: team,
      name: b.name,
      kind: b.kind,
      cancelUrl: b.cancelUrl ?? null,
      statusUrl: b.statusUrl ?? null,
      compensateUrl: b.compensateUrl ?? null,
      quietPeriodSeconds: b.quietPeriodSeconds,
      rollbackOwner: b.rollbackOwner ?? null,
      endpoint,
      timeoutMs: b.timeoutMs,
      settleDeadlineMs: b.settleDeadlineMs,
      jobUrl: b.jobUrl ?? null,
    });
    if (!id) throw new QuiesceError("conflict", `name: the team already has a provider "${b.name}"`);
    return view(await tx.provider.findUniqueOrThrow({ where: { id } }));
  });
}
