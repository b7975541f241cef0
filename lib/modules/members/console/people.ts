// Actor strings ("user:<id>", "user:<id> via key:<id>", "key:<id>", "system:<name>") made readable:
// people by email, keys by name. Only members and keys of the reader's own team are resolved.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";

export async function actorLabels(p: Principal, actors: (string | null | undefined)[]): Promise<Record<string, string>> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const list = [...new Set(actors.filter((a): a is string => !!a))];
  const userIds = new Set<string>();
  const keyIds = new Set<string>();
  for (const a of list) {
    for (const m of a.matchAll(/user:(\S+)/g)) userIds.add(m[1]!);
    for (const m of a.matchAll(/key:(\S+)/g)) keyIds.add(m[1]!);
  }
  const [members, disabledMembers, keys] = await Promise.all([
    userIds.size
      ? prisma().membership.findMany({
          where: { teamId, userId: { in: [...userIds] } },
          include: { user: { select: { id: true, email: true } } },
        })
      : [],
    // A member whose membership is disabled is still named in the team's own history.
    userIds.size
      ? prisma().disabledMembership.findMany({
          where: { teamId, userId: { in: [...userIds] } },
          include: { user: { select: { id: true, email: true } } },
        })
      : [],
    keyIds.size
      ? prisma().apiKey.findMany({ where: { teamId, id: { in: [...keyIds] } }, select: { id: true, name: true, kind: true } })
      : [],
  ]);
  const users = new Map([...members, ...disabledMembers].map((m) => [m.user.id, m.user.email]));
  const keyNames = new Map(keys.map((k) => [k.id, `${k.kind} key “${k.name}”`]));
  const out: Record<string, string> = {};
  for (const a of list) {
    out[a] = a
      .replace(/user:(\S+)/g, (whole, id: string) => users.get(id) ?? whole)
      .replace(/key:(\S+)/g, (whole, id: string) => keyNames.get(id) ?? whole)
      .replace(/^system:(\S+)$/, "Quiesce ($1)");
  }
  return out;
}
