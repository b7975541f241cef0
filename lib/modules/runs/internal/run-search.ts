// What a run search `q` means, in the API (GET /api/v1/runs) and in the console's runs list alike:
// a run whose id, root run id or native session id is exactly `q`, or whose task id or title
// contains it (case-insensitive). Ids match exactly so pasting one finds that run and nothing else;
// names match by substring so a person can type part of one (`%` and `_` are literal characters).
import "server-only";
import type { Prisma } from "../../../generated/prisma/client";
import { escapeLike } from "../../../platform/security/text";

export function runSearchWhere(q: string | undefined): Prisma.RunWhereInput {
  const term = q?.trim();
  if (!term) return {};
  return {
    OR: [
      { id: term },
      { rootRunId: term },
      { nativeSessionId: term },
      { taskId: { contains: escapeLike(term), mode: "insensitive" } },
      { title: { contains: escapeLike(term), mode: "insensitive" } },
    ],
  };
}
