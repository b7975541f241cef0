// The team a console read is scoped to. Console reads are for people; a system principal must not
// wander in here without naming a team, so it is refused rather than shown everything.
import "server-only";
import { forbidden } from "../errors";
import type { Principal } from "./principal";

export function consoleTeam(p: Principal): string {
  if (p.type === "system") throw forbidden("console reads need a team member or a team key");
  return p.teamId;
}
