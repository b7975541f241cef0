// What `quiesce seed` and the first `npm start` print. Secrets appear only for keys created by this
// run (the database keeps hashes only); later runs point at the keys file instead.
import type { SeedResult } from "./index";

export function formatSeedReport(r: SeedResult, opts: { consoleUrl?: string } = {}): string[] {
  const lines: string[] = [];
  const created = r.keys.filter((k) => k.created);
  if (!r.changed) {
    lines.push(`demo data present (team "demo"); keys and sign-ins are in ${r.keysFile}`);
    return lines;
  }
  const newTeams = r.teams.filter((t) => t.created).map((t) => t.slug);
  if (newTeams.length) lines.push(`created team(s): ${newTeams.join(", ")}`);
  if (r.provider.created) lines.push(`created provider "${r.provider.name}" (simulated, ${r.provider.url})`);
  if (r.provider.updated) lines.push(`pointed provider "${r.provider.name}" at ${r.provider.url} (QUIESCE_PROVIDER_SIM_PORT)`);
  if (r.password !== null) {
    lines.push("", `Demo sign-ins${opts.consoleUrl ? ` for ${opts.consoleUrl}` : ""} (password shown once; also in ${r.keysFile}):`);
    for (const u of r.users.filter((x) => x.created || x.passwordReset)) lines.push(`  ${u.role.padEnd(8)}  ${u.email}`);
    lines.push(`  password  ${r.password}`);
  }
  if (created.length) {
    lines.push("", `Demo API keys (shown once; also in ${r.keysFile}):`);
    for (const k of created) lines.push(`  ${`${k.team}/${k.kind}`.padEnd(16)} ${k.secret}`);
    const op = created.find((k) => k.role === "operator");
    if (op) lines.push("", `Try: QUIESCE_API_KEY=${op.secret} npm run quiesce -- runs list`);
  }
  return lines;
}
