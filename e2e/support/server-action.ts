// Posting a server action by hand, the way an attacker (or a curious viewer) could: find the action's
// id in the build's server-reference manifest and POST to the page with the `Next-Action` header.
// Proves the server refuses a control the page did not offer.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { APIRequestContext } from "@playwright/test";

const ROOT = path.resolve(import.meta.dirname, "../..");

export function actionId(file: string, exportName: string): string {
  for (const dir of [".next/server", ".next/dev/server"]) {
    const manifest = path.join(ROOT, dir, "server-reference-manifest.json");
    if (!existsSync(manifest)) continue;
    const m = JSON.parse(readFileSync(manifest, "utf8")) as { node: Record<string, { filename?: string; exportedName?: string }> };
    for (const [id, entry] of Object.entries(m.node)) {
      if (entry.exportedName === exportName && entry.filename?.replaceAll("\\", "/").endsWith(file)) return id;
    }
  }
  throw new Error(`server action ${exportName} of ${file} not found in the build manifest`);
}

/** POSTs the action with one argument; returns the raw RSC response text (which carries the result). */
export async function postAction(
  request: APIRequestContext,
  pagePath: string,
  id: string,
  arg: unknown,
): Promise<{ status: number; text: string }> {
  const res = await request.post(pagePath, {
    headers: { "Next-Action": id, "Content-Type": "text/plain;charset=UTF-8", Accept: "text/x-component" },
    data: JSON.stringify([arg]),
  });
  return { status: res.status(), text: await res.text() };
}
