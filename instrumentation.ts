// Runs once when the Next.js server boots: check every environment variable before serving anything,
// so a malformed value stops the web server with a message naming it (see docs/configuration.md).
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { assertConfig } = await import("./lib/platform/config");
  assertConfig();
}
