// What the docs tests share: the Markdown files a reader may open, and the heading anchors in one.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");

/** docs/**\/*.md, relative to the repository root. */
export function docsFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(ROOT, dir)).sort()) {
      const rel = path.join(dir, name);
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
      else if (name.endsWith(".md")) out.push(rel);
    }
  };
  walk("docs");
  return out;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  let code = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) code = !code;
    const m = !code && /^#{1,6} (.*)$/.exec(line);
    if (m)
      out.add(
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\- _]/gu, "")
          .replace(/ /g, "-"),
      );
  }
  return out;
}
