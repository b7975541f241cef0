// The console's JSON read endpoints (react-query polls them; the events stream says when to refetch).
// Same rule as server actions: resolve the member from the database on every request, then let the
// dal authorize. Errors keep the machine API's shape: { error: { code, message } }.
import "server-only";
import { QuiesceError } from "../platform/errors";
import { currentSession, type ConsoleSession } from "../modules/sessions";
import { findUnsafeText } from "../platform/security/text";
import { logger } from "../platform/log";

export function consoleGet<P>(handler: (ctx: { session: ConsoleSession; url: URL; params: P }) => Promise<unknown>) {
  return async (req: Request, ctx: { params: Promise<P> }): Promise<Response> => {
    const session = await currentSession();
    if (!session)
      return Response.json(
        { error: { code: "unauthenticated", message: "sign in" } },
        { status: 401, headers: { "cache-control": "no-store" } },
      );
    try {
      const url = new URL(req.url);
      const params = await ctx.params;
      const unsafe = findUnsafeText(Object.fromEntries(url.searchParams), "query") ?? findUnsafeText(params, "params");
      if (unsafe) throw new QuiesceError("bad_request", `${unsafe.field}: ${unsafe.message}`);
      const data = await handler({ session, url, params });
      return Response.json(data, { headers: { "cache-control": "no-store" } });
    } catch (err) {
      if (err instanceof QuiesceError)
        return Response.json({ error: { code: err.code, message: err.message } }, { status: err.httpStatus });
      logger("console").error({ err, path: new URL(req.url).pathname }, "console route failed");
      return Response.json({ error: { code: "internal", message: "internal error" } }, { status: 500 });
    }
  };
}
