import "server-only";

// The console's signed-in sessions: next-auth's configuration and the per-request principal. Apart from
// the members module because it needs Next's request scope, which the CLI and the API process never load.
export { SESSION_IDLE_SECONDS, authOptions } from "./auth-options";
export { TEAM_COOKIE, currentSession, requireSession, sessionRecheck, sessionState, type ConsoleSession } from "./session";
