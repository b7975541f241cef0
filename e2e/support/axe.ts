// axe-core in the page (the copy eslint-plugin-jsx-a11y already installs, declared as a devDependency):
// every page a journey checks must have zero violations.
import { createRequire } from "node:module";
import { expect, type Page } from "@playwright/test";

const require = createRequire(import.meta.url);

export async function expectNoAxeViolations(page: Page): Promise<void> {
  await page.addScriptTag({ path: require.resolve("axe-core") });
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: { id: string; nodes: { target: unknown }[] }[] }> } }
    ).axe;
    const r = await axe.run(document);
    return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
  });
  expect(violations, `axe on ${page.url()}`).toEqual([]);
}
