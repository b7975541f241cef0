// Every setting the hardening adds, read from the environment in one place (zod-parsed; a bad value
// fails loudly at first use instead of silently meaning something else).
import { z } from "zod";

const seconds = (def: number) => z.coerce.number().int().min(1).max(10 * 365 * 24 * 3600).default(def);
const millis = (def: number) => z.coerce.number().int().min(1).max(10 * 60_000).default(def);

const Schema = z.object({
  /** Absolute lifetime of a console session from sign-in, whatever the activity (default 12 h). */
  QUIESCE_SESSION_MAX_AGE: seconds(12 * 3600),
  /** A session unused for this long ends (default 1 h). */
  QUIESCE_SESSION_IDLE_SECONDS: seconds(3600),
  /** Failed sign-ins per account or address before back-off starts. */
  QUIESCE_SIGNIN_FREE_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  /** Bad API keys per source address before back-off starts. */
  QUIESCE_BAD_KEY_FREE_FAILURES: z.coerce.number().int().min(1).max(100_000).default(20),
  /** Longest back-off (seconds). */
  QUIESCE_THROTTLE_MAX_SECONDS: seconds(15 * 60),
  /** Every database connection: longest statement, longest lock wait, longest wait for a pooled connection. */
  QUIESCE_DB_STATEMENT_TIMEOUT_MS: millis(15_000),
  QUIESCE_DB_LOCK_TIMEOUT_MS: millis(5_000),
  QUIESCE_DB_ACQUIRE_TIMEOUT_MS: millis(5_000),
  /** The gate's own budget: past it the answer is deny control_unavailable. */
  QUIESCE_GATE_TIMEOUT_MS: millis(5_000),
  /** How often a live stream re-checks the caller's authority. */
  QUIESCE_SSE_RECHECK_MS: millis(5_000),
});

export type SecurityConfig = z.infer<typeof Schema>;

export function securityConfig(env: NodeJS.ProcessEnv = process.env): SecurityConfig {
  const picked: Record<string, string | undefined> = {};
  for (const k of Object.keys(Schema.shape)) picked[k] = env[k] === "" ? undefined : env[k];
  const parsed = Schema.safeParse(picked);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new Error(`${String(i.path[0])}: ${i.message}`);
  }
  return parsed.data;
}
