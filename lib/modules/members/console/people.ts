// Actor strings ("user:<id>", "user:<id> via key:<id>", "key:<id>", "system:<name>") made readable:
// people by name and e-mail, keys by name. Only members (current or disabled) and keys of the reader's own
// team are resolved: the one place the console, the stops list, policies and approvals name people.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";

export interface Person {
  /** the actor as recorded (`user:<id>`, `user:<id> via key:<id>`, `key:<id>`) */
  actor: string;
  userId: string | null;
  name: string | null;
  email: string | null;
}

/** Resolves `user:<id>` actors of the team to their name and e-mail (other actors keep only the label). A member
 * whose membership is disabled is still named in the team's own history. */
export async function peopleOf(p: Principal, actors: string[]): Promise<Map<string, Person>> {
  authorize(p, "run.read");
  return peopleOfTeam(consoleTeam(p), actors);
}

export async function peopleOfTeam(teamId: string, actors: string[]): Promise<Map<string, Person>> {
  const ids = [...new Set(actors.flatMap((a) => [...(/user:(\S+)/.exec(a)?.slice(1, 2) ?? [])]))];
  const users = ids.length
    ? await prisma().user.findMany({
        where: {
          id: { in: ids },
          OR: [{ memberships: { some: { teamId } } }, { disabledMemberships: { some: { teamId } } }],
        },
        select: { id: true, name: true, email: true },
      })
    : [];
  const byId = new Map(users.map((u) => [u.id, u]));
  return new Map(
    actors.map((a) => {
      const id = /user:(\S+)/.exec(a)?.[1] ?? null;
      const u = id ? byId.get(id) : undefined;
      return [a, { actor: a, userId: id, name: u?.name ?? null, email: u?.email ?? null }];
    }),
  );
}

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
  const [people, keys] = await Promise.all([
    peopleOfTeam(
      teamId,
      [...userIds].map((id) => `user:${id}`),
    ),
    keyIds.size
      ? prisma().apiKey.findMany({ where: { teamId, id: { in: [...keyIds] } }, select: { id: true, name: true, kind: true } })
      : [],
  ]);
  const users = new Map([...people.values()].filter((x) => x.email).map((x) => [x.userId!, x.email!]));
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
