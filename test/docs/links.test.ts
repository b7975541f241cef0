// The README is a front door (at most 200 lines) and every relative link in the README, CONTRIBUTING
// and docs/ (with its subfolders) points at a file that exists and, with a #fragment, at a heading in it.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { ROOT, anchors, docsFiles } from "./markdown";

// Pages written on other branches at the same time; remove an entry when its page lands.
const PENDING = new Set<string>();

const files = ["README.md", "CONTRIBUTING.md", ...docsFiles()];

test("the README is at most 200 lines", () => {
  expect(readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(200);
});

test("every relative link in the docs resolves, down to its heading", () => {
  const broken: string[] = [];
  for (const file of files) {
    const text = readFileSync(path.join(ROOT, file), "utf8").replace(/```[\s\S]*?```/g, "");
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:)/.test(target!)) continue;
      const [rel, frag] = target!.split("#") as [string, string | undefined];
      const resolved = rel ? path.normalize(path.join(path.dirname(file), rel)) : file;
      if (PENDING.has(resolved)) continue;
      if (!existsSync(path.join(ROOT, resolved))) {
        broken.push(`${file}: ${target} (no such file)`);
        continue;
      }
      if (frag && resolved.endsWith(".md") && !anchors(readFileSync(path.join(ROOT, resolved), "utf8")).has(frag)) {
        broken.push(`${file}: ${target} (no such heading)`);
      }
    }
  }
  expect(broken).toEqual([]);
});
