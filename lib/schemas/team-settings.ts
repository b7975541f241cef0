// Wire shape of a team's stop settings: the quiet period every barrier waits out, pause reclaim, and
// the default owner of an unknown outcome. Every field optional; null turns pause reclaim off / clears
// the default owner.
import { z } from "zod";

export const TeamStopSettings = z.strictObject({
  /** Milliseconds; a small value is allowed (tests), 0 only when the team really wants no quiet period. */
  quietPeriodMs: z.number().int().min(0).max(86_400_000).optional(),
  /** Seconds a pause may last before the barrier engine kills the tree as the system; null = off. */
  pausePolicySeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .nullable()
    .optional(),
  /** A member who owns unknown outcomes by default; null = the person who asked for the stop, then an admin. */
  defaultReconcilerUserId: z.string().trim().min(1).nullable().optional(),
});
export type TeamStopSettings = z.infer<typeof TeamStopSettings>;
